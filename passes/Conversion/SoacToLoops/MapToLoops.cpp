//===- MapToLoops.cpp - soac.map as loops ---------------------------------===//
//
// A map with scalar rows is a linalg.generic with outputs only (parallel) or
// an scf.for; a map with tensor rows an scf.forall or an scf.for inserting
// rows, their dynamic sizes known before the map (RowSizes.h) or from the
// body run on row 0. Results may be computed in the tensors of inputs
// (InPlace.h), and a reduce of some results folded in the map's sequential
// loop (Redomap.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/Patterns.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"
#include "passes/Conversion/SoacToLoops/RowReader.h"
#include "passes/Conversion/SoacToLoops/InPlace.h"
#include "passes/Conversion/SoacToLoops/Redomap.h"
#include "passes/Conversion/SoacToLoops/RowSizes.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

struct MapToLoops : OpRewritePattern<MapOp> {
  MapToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(map, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(map.getLoc(), rewriter);
    RowReader rows(map.getInputs(), map);
    Value n = rows.size(b);
    bool parallel = !isNestedInParallelOp(map);
    SmallVector<Value> seeds = seedInputs(map);
    // The rows a reduce folded in this loop reads are not stored.
    ReduceOp folded = foldedReduce(map);
    SmallVector<bool> reduced(map.getNumResults(), false);
    if (folded)
      for (Value input : folded.getInputs()) {
        unsigned r = cast<OpResult>(input).getResultNumber();
        reduced[r] = true;
        seeds[r] = Value();
      }
    SmallVector<bool> seeded =
        llvm::map_to_vector(seeds, [](Value seed) { return bool(seed); });
    // A seeded tensor's row is read from the output it seeds, before the
    // body overwrites it.
    auto body = [&](ImplicitLocOpBuilder &ib, Value i, ArrayRef<Value> old) {
      DenseMap<Value, Value> known;
      for (auto [r, seed] : llvm::enumerate(seeds))
        if (seed)
          known[seed] = old[r];
      return inlineBody(ib, map.getBody(), rows.rowsAt(ib, i, known));
    };
    SmallVector<Type> rowTypes = llvm::map_to_vector(
        map.getBody().front().getTerminator()->getOperandTypes(),
        [](Type t) { return t; });
    SmallVector<Value> results, foldedResults;
    if (folded || !allScalar(rowTypes)) {
      results = tabulateRows(b, map, n, parallel, seeds, seeded, body,
                             options, folded, reduced, foldedResults);
    } else {
      // One set of outputs, before the choice between the parallel and the
      // sequential loop: each fills it, so the result is allocated once (or
      // not at all, computed in the input or the slice it replaces).
      SmallVector<Value> outputs = llvm::map_to_vector(
          llvm::enumerate(map.getResultTypes()), [&](auto rt) -> Value {
            auto [r, type] = rt;
            if (seeds[r])
              return seeds[r];
            if (Value slice = sliceComputedIn(b, map, map.getResult(r), n))
              return slice;
            return emptyTensor(b, cast<RankedTensorType>(type), n);
          });
      if (!parallel)
        results = tabulateInto(b, n, outputs, seeded, false, body);
      else
        results = chooseByWork(b, options, rowWork(b, map.getInputs(), map, n),
                               map.getResultTypes(), [&](bool enough) {
                                 return tabulateInto(b, n, outputs, seeded,
                                                     enough, body);
                               });
    }
    if (folded)
      rewriter.replaceOp(folded, foldedResults);
    replaceAndEraseFused(rewriter, map, results, rows);
    return success();
  }

private:
  /// A map with tensor rows: the dynamic row sizes come from running the body
  /// once on row 0 (rows are regular), then each row is inserted whole.
  /// The `reduced` results are not stored: their rows are folded by
  /// `folded` (see foldedReduce) in the sequential loop, whose results go to
  /// `foldedResults`; those results of the map are null.
  static SmallVector<Value>
  tabulateRows(ImplicitLocOpBuilder &b, MapOp map, Value n, bool parallel,
               ArrayRef<Value> seeds, ArrayRef<bool> seeded, SeededBody body,
               const ConvertSoacToLoopsOptions &options, ReduceOp folded,
               ArrayRef<bool> reduced, SmallVector<Value> &foldedResults) {
    // The probe reads every row from the inputs: nothing is written yet.
    SmallVector<Value> noOldRows(seeds.size());
    SmallVector<bool> unsized = llvm::map_to_vector(
        llvm::zip(seeded, reduced), [](auto sr) {
          return std::get<0>(sr) || std::get<1>(sr);
        });
    SmallVector<Value> innerSizes =
        rowSizes(b, map, n, unsized, [&](ImplicitLocOpBuilder &ib, Value i) {
          return body(ib, i, noOldRows);
        });
    SmallVector<Value> outputs;
    // The sizes of each output's rows, known before any row is computed: a
    // seeded output's are its input's.
    SmallVector<SmallVector<OpFoldResult>> outputRowSizes;
    size_t used = 0;
    for (auto [r, t] : llvm::enumerate(map.getResultTypes())) {
      auto type = cast<RankedTensorType>(t);
      if (reduced[r]) {
        outputs.push_back(Value());
        outputRowSizes.emplace_back();
        continue;
      }
      if (seeded[r]) {
        Value input = seeds[r];
        outputs.push_back(input);
        outputRowSizes.push_back(SmallVector<OpFoldResult>(
            ArrayRef(tensor::getMixedSizes(b, b.getLoc(), input)).drop_front()));
        continue;
      }
      size_t dynamicInner = llvm::count_if(type.getShape().drop_front(),
                                           ShapedType::isDynamic);
      ArrayRef<Value> dynamic =
          ArrayRef<Value>(innerSizes).slice(used, dynamicInner);
      outputs.push_back(emptyTensor(b, type, n, dynamic));
      SmallVector<OpFoldResult> sizes;
      const Value *next = dynamic.begin();
      for (int64_t size : type.getShape().drop_front())
        sizes.push_back(ShapedType::isDynamic(size)
                            ? OpFoldResult(*next++)
                            : OpFoldResult(b.getIndexAttr(size)));
      outputRowSizes.push_back(sizes);
      used += dynamicInner;
    }
    auto build = [&](bool inParallel) -> SmallVector<Value> {
      if (!inParallel) {
        // Carried: the stored outputs, then the folded reduce's accumulators.
        SmallVector<Value> carried(llvm::make_filter_range(
            outputs, [](Value out) { return static_cast<bool>(out); }));
        size_t stored = carried.size();
        if (folded)
          llvm::append_range(carried, folded.getInits());
        auto loop = markRowLoop(scf::ForOp::create(
            b, indexConstant(b, 0), n, indexConstant(b, 1), carried,
            [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
              ImplicitLocOpBuilder ib(loc, nested);
              SmallVector<Value> outs;
              auto next = state.begin();
              for (Value out : outputs)
                outs.push_back(out ? *next++ : Value());
              SmallVector<Value> old = seededRows(ib, outs, seeded, i);
              SmallVector<Value> rows = body(ib, i, old);
              SmallVector<Value> updated;
              for (auto [r, row] : llvm::enumerate(rows)) {
                if (reduced[r])
                  continue;
                // A seeded row goes back with the sizes it was read with
                // (see parallelInsertRows).
                Value oldRow = old[r];
                assertRowFits(ib, row, outs[r]);
                updated.push_back(insertRow(
                    ib, row, outs[r], i,
                    oldRow && isa<RankedTensorType>(oldRow.getType())
                        ? tensor::getMixedSizes(ib, ib.getLoc(), oldRow)
                        : outputRowSizes[r]));
              }
              if (folded) {
                SmallVector<Value> args(state.drop_front(stored));
                for (Value input : folded.getInputs())
                  args.push_back(rows[cast<OpResult>(input).getResultNumber()]);
                llvm::append_range(updated,
                                   inlineBody(ib, folded.getBody(), args,
                                              /*reassociate=*/true));
              }
              scf::YieldOp::create(ib, updated);
            }));
        SmallVector<Value> results;
        auto next = loop.getResults().begin();
        for (Value out : outputs)
          results.push_back(out ? Value(*next++) : Value());
        foldedResults.assign(next, loop.getResults().end());
        return results;
      }
      return forallRows(b, n, outputs, seeded, body);
    };
    if (!parallel)
      return build(false);
    // Rows written or rows read, whichever is larger.
    Value work = b.createOrFold<arith::MaxUIOp>(
        timesElements(b, n, outputs.front(), 1),
        rowWork(b, map.getInputs(), map, n));
    return chooseByWork(b, options, work, map.getResultTypes(), build);
  }

  /// The dynamic inner sizes of the results that are not `unsized`: from
  /// the IR's structure where they follow from sizes known before the map
  /// (RowSizes.h), else from the rows yielded for row 0 (0 when there are
  /// no rows).
  static SmallVector<Value> rowSizes(ImplicitLocOpBuilder &b, MapOp map,
                                     Value n, ArrayRef<bool> unsized,
                                     IndexedBody body) {
    Operation *yield = map.getBody().front().getTerminator();
    Value zero = indexConstant(b, 0);
    Value nonEmpty =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, zero);
    SmallVector<Value> sizes;
    SmallVector<std::pair<unsigned, unsigned>> probed; // (result, dim)
    SmallVector<unsigned> probedSlots;
    for (auto [r, t] : llvm::enumerate(map.getResultTypes()))
      for (auto [d, size] :
           llvm::enumerate(cast<RankedTensorType>(t).getShape().drop_front()))
        if (ShapedType::isDynamic(size) && !unsized[r]) {
          // Without rows there is no row to take sizes from: 0, as the
          // reference interpreter says.
          if (Value known = sizeBeforeBody(b, map, yield->getOperand(r), d)) {
            sizes.push_back(arith::SelectOp::create(b, nonEmpty, known, zero));
            continue;
          }
          sizes.push_back(Value());
          probed.push_back({static_cast<unsigned>(r), static_cast<unsigned>(d)});
          probedSlots.push_back(sizes.size() - 1);
        }
    if (probed.empty())
      return sizes;
    SmallVector<Type> indexTypes(probed.size(), b.getIndexType());
    auto probe = scf::IfOp::create(b, indexTypes, nonEmpty, true, true);
    probe->setAttr(kRowLoopAttr, b.getUnitAttr());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(probe.thenBlock());
      SmallVector<Value> rows = body(b, zero);
      SmallVector<Value> found = llvm::map_to_vector(probed, [&](auto rd) {
        return Value(tensor::DimOp::create(b, rows[rd.first], rd.second));
      });
      scf::YieldOp::create(b, found);
      b.setInsertionPointToStart(probe.elseBlock());
      scf::YieldOp::create(b, SmallVector<Value>(probed.size(), zero));
    }
    for (auto [slot, result] : llvm::zip(probedSlots, probe.getResults()))
      sizes[slot] = result;
    return sizes;
  }

  ConvertSoacToLoopsOptions options;
};

} // namespace

void soac::loops::addMapToLoops(RewritePatternSet &patterns,
                                const ConvertSoacToLoopsOptions &options) {
  patterns.add<MapToLoops>(patterns.getContext(), options);
}
