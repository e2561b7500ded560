//===- ScatterToLoops.cpp - scatter, reduce_by_index as loops -------------===//
//
// Both are one sequential loop over the rows they read, updating their
// destinations at each row's index when it is in range (an unsigned
// comparison: a negative index wraps to a large one and is skipped). A
// reduce_by_index of the stacked rows of a map (stackedProducer) is two
// nested loops: one row of the map at a time, then its batch.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/Patterns.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"
#include "passes/Conversion/SoacToLoops/RowReader.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

/// `0 <= index < size` for an index of type index, i32 or i64, and the index
/// as an `index` value.
std::pair<Value, Value> checkedIndex(ImplicitLocOpBuilder &b, Value index,
                                     Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, b.getIndexType(), index);
  // Unsigned comparison: a negative index wraps to a huge one.
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index, size);
  return {inRange, index};
}

/// Updates `dests` at the index read from each row: the sequential loop of
/// scatter and reduce_by_index. Rows read are (index, values...); `update`
/// returns the new dests given the old ones, the row's values and the index,
/// and runs only when the index is in range.
using IndexedUpdate = function_ref<SmallVector<Value>(
    ImplicitLocOpBuilder &, ValueRange dests, ValueRange values, Value index)>;

/// Row `i` of the tensors an update reads: (index, values...).
using RowsAt =
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value i)>;

/// The loop over `n` rows (from `rowsAt`) updating `dests` (of `bins` rows).
SmallVector<Value> updateRows(ImplicitLocOpBuilder &b, Value n, Value bins,
                              ValueRange dests, RowsAt rowsAt,
                              IndexedUpdate update) {
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), n, indexConstant(b, 1), dests,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> row = rowsAt(ib, i);
        auto [inRange, index] = checkedIndex(ib, row[0], bins);
        auto ifInRange =
            scf::IfOp::create(ib, state.getTypes(), inRange, true, true);
        ib.setInsertionPointToStart(ifInRange.thenBlock());
        scf::YieldOp::create(
            ib, update(ib, state, ArrayRef<Value>(row).drop_front(), index));
        ib.setInsertionPointToStart(ifInRange.elseBlock());
        scf::YieldOp::create(ib, state);
        ib.setInsertionPointAfter(ifInRange);
        scf::YieldOp::create(ib, ifInRange.getResults());
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// The number of rows of `dests`, checked to be the same for all.
Value binsOf(ImplicitLocOpBuilder &b, ValueRange dests) {
  Value bins = tensor::DimOp::create(b, dests.front(), 0);
  // Every destination is indexed by the same bounds check.
  for (Value dest : dests.drop_front())
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bins,
                              tensor::DimOp::create(b, dest, 0)),
        checkMessage(b.getLoc(), "destinations have different outer sizes"));
  return bins;
}

SmallVector<Value> updateAtIndices(ImplicitLocOpBuilder &b,
                                   const RowReader &rows, ValueRange dests,
                                   IndexedUpdate update) {
  Value n = rows.size(b);
  Value bins = binsOf(b, dests);
  return updateRows(
      b, n, bins, dests,
      [&](ImplicitLocOpBuilder &ib, Value i) { return rows.rowsAt(ib, i); },
      update);
}

/// `updateAtIndices` over the stacked rows of `map` (its rows read by
/// `mapRows`): for each row of the map, its body, then the loop over the
/// batch it yields (`read`: the results of the map read, through
/// tensor.collapse_shape, in the order of the rows read: indices, values...;
/// each row's first `batchRank` dimensions are its batch).
SmallVector<Value> updateAtStackedIndices(ImplicitLocOpBuilder &b, MapOp map,
                                          const RowReader &mapRows,
                                          ArrayRef<unsigned> read,
                                          int64_t batchRank, ValueRange dests,
                                          IndexedUpdate update) {
  Value n = mapRows.size(b);
  Value bins = binsOf(b, dests);
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), n, indexConstant(b, 1), dests,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> yielded =
            inlineBody(ib, map.getBody(), mapRows.rowsAt(ib, i));
        SmallVector<Value> batch =
            llvm::map_to_vector(read, [&](unsigned result) {
              Value row = yielded[result];
              if (batchRank == 1)
                return row;
              SmallVector<ReassociationIndices> groups{
                  llvm::to_vector(llvm::seq<int64_t>(0, batchRank))};
              int64_t rank = cast<RankedTensorType>(row.getType()).getRank();
              for (int64_t d = batchRank; d < rank; ++d)
                groups.push_back({d});
              return Value(tensor::CollapseShapeOp::create(ib, row, groups));
            });
        Value size = tensor::DimOp::create(ib, batch.front(), 0);
        scf::YieldOp::create(
            ib, updateRows(
                    ib, size, bins, state,
                    [&](ImplicitLocOpBuilder &jb, Value j) {
                      return llvm::map_to_vector(batch, [&](Value tensor) {
                        return extractRow(jb, tensor, j);
                      });
                    },
                    update));
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

struct ScatterToLoops : OpRewritePattern<ScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScatterOp scatter,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(scatter, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(scatter.getLoc(), rewriter);
    SmallVector<Value> read{scatter.getIndices(), scatter.getValues()};
    RowReader rows(read, scatter);
    SmallVector<Value> results = updateAtIndices(
        b, rows, scatter.getDest(),
        [&](ImplicitLocOpBuilder &ib, ValueRange dests, ValueRange values,
            Value index) -> SmallVector<Value> {
          assertRowFits(ib, values[0], dests[0]);
          return {insertRow(ib, values[0], dests[0], index)};
        });
    replaceAndEraseFused(rewriter, scatter, results, rows);
    return success();
  }
};

struct ReduceByIndexToLoops : OpRewritePattern<ReduceByIndexOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceByIndexOp histogram,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(histogram, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(histogram.getLoc(), rewriter);
    auto update = [&](ImplicitLocOpBuilder &ib, ValueRange dests,
                      ValueRange values, Value index) {
      SmallVector<Value> args = llvm::map_to_vector(
          dests, [&](Value bin) { return extractRow(ib, bin, index); });
      llvm::append_range(args, values);
      SmallVector<Value> written;
      for (auto [value, bin] :
           llvm::zip(inlineBody(ib, histogram.getBody(), args), dests)) {
        assertRowFits(ib, value, bin);
        written.push_back(insertRow(ib, value, bin, index));
      }
      return written;
    };
    SmallVector<Value> read{histogram.getIndices()};
    llvm::append_range(read, histogram.getValues());
    if (MapOp map = stackedProducer(histogram)) {
      SmallVector<tensor::CollapseShapeOp> collapses;
      SmallVector<unsigned> results;
      for (Value tensor : read) {
        auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>();
        collapses.push_back(collapse);
        results.push_back(cast<OpResult>(collapse.getSrc()).getResultNumber());
      }
      int64_t batchRank =
          collapses.front().getReassociationIndices().front().size() - 1;
      RowReader mapRows(map.getInputs(), map);
      SmallVector<Value> written = updateAtStackedIndices(
          b, map, mapRows, results, batchRank, histogram.getDests(), update);
      rewriter.replaceOp(histogram, written);
      for (tensor::CollapseShapeOp collapse : collapses)
        rewriter.eraseOp(collapse);
      // The map, then the maps fused into it.
      replaceAndEraseFused(rewriter, map, {}, mapRows);
      return success();
    }
    RowReader rows(read, histogram);
    SmallVector<Value> results =
        updateAtIndices(b, rows, histogram.getDests(), update);
    replaceAndEraseFused(rewriter, histogram, results, rows);
    return success();
  }
};

} // namespace

void soac::loops::addScatterToLoops(RewritePatternSet &patterns) {
  patterns.add<ScatterToLoops, ReduceByIndexToLoops>(patterns.getContext());
}
