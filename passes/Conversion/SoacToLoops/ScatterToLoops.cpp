//===- ScatterToLoops.cpp - scatter, reduce_by_index as loops -------------===//
//
// Both are one sequential loop over the rows they read, updating their
// destinations at each row's index when it is in range (an unsigned
// comparison: a negative index wraps to a large one and is skipped). At the
// top level, a reduce_by_index with few bins for its rows may instead run in
// chunks folded in parallel, each into bins of its own, merged in order. A
// reduce_by_index of the stacked rows of a map (stackedProducer) is a loop
// over the map's rows that adds each row's batch as it is computed: a batch
// yielded by a nested map by a nested loop over that map's rows, one built
// by tensor.from_elements element by element (the sparse adjoints of nested
// reads yield both), so their (index, value) pairs are never stored.
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

/// Updates `state` with one row (index, values...) when its index is in
/// range of `bins`.
SmallVector<Value> updateOne(ImplicitLocOpBuilder &b, ArrayRef<Value> row,
                             Value bins, ValueRange state,
                             IndexedUpdate update) {
  auto [inRange, index] = checkedIndex(b, row[0], bins);
  auto ifInRange = scf::IfOp::create(b, state.getTypes(), inRange, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifInRange.thenBlock());
  scf::YieldOp::create(b, update(b, state, row.drop_front(), index));
  b.setInsertionPointToStart(ifInRange.elseBlock());
  scf::YieldOp::create(b, state);
  return llvm::to_vector_of<Value>(ifInRange.getResults());
}

/// The loop over rows [lo, hi) of `rows` (index, values...) updating
/// `dests` (of `bins` rows).
SmallVector<Value> updateRows(ImplicitLocOpBuilder &b, Value lo, Value hi,
                              Value bins, ValueRange dests,
                              const RowReader &rows, IndexedUpdate update) {
  auto loop = markRowLoop(scf::ForOp::create(
      b, lo, hi, indexConstant(b, 1), dests,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(
            ib, updateOne(ib, rows.rowsAt(ib, i), bins, state, update));
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
  return updateRows(b, indexConstant(b, 0), n, bins, dests, rows, update);
}

/// A tensor shaped like `dest` whose every row is the neutral element `init`
/// (a scalar, or a row checked to fit dest's rows).
Value neutralBins(ImplicitLocOpBuilder &b, Value init, Value dest) {
  assertRowFits(b, init, dest);
  Value empty = tensor::EmptyOp::create(
      b, tensor::getMixedSizes(b, b.getLoc(), dest),
      cast<RankedTensorType>(dest.getType()).getElementType());
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), tensor::DimOp::create(b, dest, 0),
      indexConstant(b, 1), ValueRange{empty},
      [&](OpBuilder &nested, Location loc, Value i, ValueRange filled) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, insertRow(ib, init, filled.front(), i));
      }));
  return loop.getResult(0);
}

/// A reduce_by_index in `chunks` chunks of its `n` rows, each folded in
/// parallel into bins of its own that start from the neutral elements; then,
/// in parallel over the bins, each destination's bin folded with every
/// chunk's, in chunk order (so the result is the sequential fold,
/// reassociated). A bin that no row of a chunk reaches is folded with the
/// neutral element, which leaves it as it is when the neutral element is
/// exact (IEEE addition of +0.0 makes a -0.0 bin +0.0, as a chunked reduce
/// does).
SmallVector<Value> chunkedHistogram(ImplicitLocOpBuilder &b,
                                    ReduceByIndexOp histogram,
                                    const RowReader &rows, Value n, Value bins,
                                    Value chunks, IndexedUpdate update) {
  Value chunkSize = arith::CeilDivUIOp::create(b, n, chunks);
  SmallVector<Value> partials = tabulateTensorRows(
      b, chunks, histogram.getDests(),
      [&](ImplicitLocOpBuilder &ib, Value c) {
        auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
        SmallVector<Value> own;
        for (auto [init, dest] :
             llvm::zip(histogram.getInits(), histogram.getDests()))
          own.push_back(neutralBins(ib, init, dest));
        return updateRows(ib, lo, hi, bins, own, rows, update);
      });
  auto mergeBin = [&](ImplicitLocOpBuilder &ib, Value bin,
                      ArrayRef<Value> destRows) -> SmallVector<Value> {
    auto loop = scf::ForOp::create(
        ib, indexConstant(ib, 0), chunks, indexConstant(ib, 1), destRows,
        [&](OpBuilder &nested, Location loc, Value c, ValueRange merged) {
          ImplicitLocOpBuilder jb(loc, nested);
          SmallVector<Value> args(merged);
          for (Value partial : partials)
            args.push_back(extractAt(jb, partial, {c, bin}));
          SmallVector<Value> folded =
              inlineBody(jb, histogram.getBody(), args);
          for (auto [row, dest] : llvm::zip(folded, histogram.getDests()))
            assertRowFits(jb, row, dest);
          scf::YieldOp::create(jb, folded);
        });
    return llvm::to_vector_of<Value>(loop.getResults());
  };
  SmallVector<bool> seeded(histogram.getDests().size(), true);
  if (allScalar(histogram.getInits().getTypes()))
    return tabulateInto(b, bins, histogram.getDests(), seeded,
                        /*parallel=*/true, mergeBin);
  return forallRows(b, bins, histogram.getDests(), seeded, mergeBin);
}

/// Updates `state` from the batch one row of a map yields (its results
/// read: indices, values...).
using BatchUpdate = function_ref<SmallVector<Value>(
    ImplicitLocOpBuilder &, ArrayRef<Value> batch, ValueRange state)>;

/// The loop over the rows of `map` (read by `mapRows`), updating `state`
/// from its results `read` of each row; the map's rows are never stored.
SmallVector<Value> overRowsOf(ImplicitLocOpBuilder &b, MapOp map,
                              const RowReader &mapRows,
                              ArrayRef<unsigned> read, ValueRange state,
                              BatchUpdate updateFromBatch) {
  Value n = mapRows.size(b);
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), n, indexConstant(b, 1), state,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> yielded =
            inlineBody(ib, map.getBody(), mapRows.rowsAt(ib, i));
        SmallVector<Value> batch = llvm::map_to_vector(
            read, [&](unsigned result) { return yielded[result]; });
        scf::YieldOp::create(ib, updateFromBatch(ib, batch, carried));
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// The map that computes all of `tensors` (as its results) and whose
/// results have no other use: its rows can be added as they are computed.
MapOp soleProducer(ArrayRef<Value> tensors) {
  auto map = tensors.front().getDefiningOp<MapOp>();
  if (!map || !llvm::all_of(tensors, [&](Value t) {
        return t.getDefiningOp() == map.getOperation();
      }))
    return nullptr;
  return map->use_empty() ? map : nullptr;
}

/// At most this many elements of a tensor.from_elements are added one by
/// one, without a loop.
constexpr int64_t kUnrolledElements = 16;

/// The elements of each of `tensors` when all are small 1-D
/// tensor.from_elements (of the same size).
std::optional<SmallVector<OperandRange>>
elementsOf(ArrayRef<Value> tensors) {
  SmallVector<OperandRange> elements;
  for (Value tensor : tensors) {
    auto fromElements = tensor.getDefiningOp<tensor::FromElementsOp>();
    if (!fromElements || fromElements.getType().getRank() != 1 ||
        fromElements.getElements().size() > kUnrolledElements ||
        (!elements.empty() &&
         fromElements.getElements().size() != elements.front().size()))
      return std::nullopt;
    elements.push_back(fromElements.getElements());
  }
  return elements;
}

/// Updates `state` from `batch` (indices, values...) of `histogram`, whose
/// first `batchRank` dimensions hold its rows. A batch computed by a map in the
/// same block is added as its rows are computed (recursively: a map of maps
/// yields batches of batches), and one built by tensor.from_elements
/// element by element, so a nested read's (index, value) pairs never go
/// through memory; any other batch is read back row by row.
SmallVector<Value> addBatch(PatternRewriter &rewriter, ImplicitLocOpBuilder &b,
                            Operation *histogram, ArrayRef<Value> batch,
                            int64_t batchRank, Value bins, ValueRange state,
                            IndexedUpdate update) {
  if (batchRank == 0)
    return updateOne(b, batch, bins, state, update);
  if (MapOp map = soleProducer(batch)) {
    RowReader mapRows(map.getInputs(), map);
    SmallVector<unsigned> read = llvm::map_to_vector(batch, [](Value t) {
      return cast<OpResult>(t).getResultNumber();
    });
    SmallVector<Value> updated = overRowsOf(
        b, map, mapRows, read, state,
        [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> rows,
            ValueRange carried) {
          return addBatch(rewriter, ib, histogram, rows, batchRank - 1, bins,
                          carried, update);
        });
    replaceAndEraseFused(rewriter, map, {}, mapRows);
    return updated;
  }
  if (batchRank == 1)
    if (auto elements = elementsOf(batch)) {
      SmallVector<Value> updated(state);
      for (size_t k = 0, e = elements->front().size(); k < e; ++k) {
        SmallVector<Value> row = llvm::map_to_vector(
            *elements, [&](OperandRange values) { return values[k]; });
        updated = updateOne(b, row, bins, updated, update);
      }
      return updated;
    }
  SmallVector<Value> rows = llvm::map_to_vector(batch, [&](Value row) {
    if (batchRank == 1)
      return row;
    SmallVector<ReassociationIndices> groups{
        llvm::to_vector(llvm::seq<int64_t>(0, batchRank))};
    int64_t rank = cast<RankedTensorType>(row.getType()).getRank();
    for (int64_t d = batchRank; d < rank; ++d)
      groups.push_back({d});
    return Value(tensor::CollapseShapeOp::create(b, row, groups));
  });
  // Read as the histogram's own operands are: their sizes compared first
  // (a batch with fewer values than indices would be read past its end).
  RowReader batchRows(rows, histogram);
  return updateRows(b, indexConstant(b, 0), batchRows.size(b), bins, state,
                    batchRows, update);
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
  ReduceByIndexToLoops(MLIRContext *context,
                       const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

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
      Value bins = binsOf(b, histogram.getDests());
      SmallVector<Value> written = overRowsOf(
          b, map, mapRows, results, histogram.getDests(),
          [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> batch,
              ValueRange state) {
            return addBatch(rewriter, ib, histogram, batch, batchRank, bins,
                            state, update);
          });
      rewriter.replaceOp(histogram, written);
      for (tensor::CollapseShapeOp collapse : collapses)
        rewriter.eraseOp(collapse);
      // The map, then the maps fused into it.
      replaceAndEraseFused(rewriter, map, {}, mapRows);
      return success();
    }
    RowReader rows(read, histogram);
    SmallVector<Value> results =
        !options.openmp || isNestedInParallelOp(histogram)
            ? updateAtIndices(b, rows, histogram.getDests(), update)
            : sequentialOrChunked(b, histogram, rows, update);
    replaceAndEraseFused(rewriter, histogram, results, rows);
    return success();
  }

private:
  /// The chunked histogram when its rows' work repays a parallel region and
  /// its chunks' bins, made and merged, are no more than its rows (one chunk
  /// per thread); else the sequential loop.
  SmallVector<Value> sequentialOrChunked(ImplicitLocOpBuilder &b,
                                         ReduceByIndexOp histogram,
                                         const RowReader &rows,
                                         IndexedUpdate update) const {
    Value n = rows.size(b);
    Value bins = binsOf(b, histogram.getDests());
    auto sequential = [&] {
      return updateRows(b, indexConstant(b, 0), n, bins, histogram.getDests(),
                        rows, update);
    };
    Value work = rowWork(b, histogram.getValues(), histogram, n);
    if (tooLittleWork(work))
      return sequential();
    Value chunks = arith::MinUIOp::create(
        b, indexConstant(b, options.numChunks), maxThreads(b));
    Value fewBins = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ule, arith::MulIOp::create(b, bins, chunks),
        n);
    // With many bins the work counts as none: the sequential loop runs.
    work = arith::SelectOp::create(b, fewBins, work, indexConstant(b, 0));
    return chooseByWork(
        b, options, work, histogram.getResultTypes(),
        [&](bool parallel) -> SmallVector<Value> {
          if (parallel)
            return chunkedHistogram(b, histogram, rows, n, bins, chunks,
                                    update);
          return sequential();
        });
  }

  ConvertSoacToLoopsOptions options;
};

} // namespace

void soac::loops::addScatterToLoops(RewritePatternSet &patterns,
                                    const ConvertSoacToLoopsOptions &options) {
  patterns.add<ScatterToLoops>(patterns.getContext());
  patterns.add<ReduceByIndexToLoops>(patterns.getContext(), options);
}
