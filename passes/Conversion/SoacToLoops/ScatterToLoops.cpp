//===- ScatterToLoops.cpp - scatter, reduce_by_index as loops -------------===//
//
// Both are one sequential loop over the rows they read, updating their
// destinations at each row's index when it is in range (an unsigned
// comparison: a negative index wraps to a large one and is skipped).
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

SmallVector<Value> updateAtIndices(ImplicitLocOpBuilder &b,
                                   const RowReader &rows, ValueRange dests,
                                   IndexedUpdate update) {
  Value n = rows.size(b);
  Value bins = tensor::DimOp::create(b, dests.front(), 0);
  // Every destination is indexed by the same bounds check.
  for (Value dest : dests.drop_front())
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bins,
                              tensor::DimOp::create(b, dest, 0)),
        checkMessage(b.getLoc(), "destinations have different outer sizes"));
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), n, indexConstant(b, 1), dests,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> row = rows.rowsAt(ib, i);
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
    SmallVector<Value> read{histogram.getIndices()};
    llvm::append_range(read, histogram.getValues());
    RowReader rows(read, histogram);
    SmallVector<Value> results = updateAtIndices(
        b, rows, histogram.getDests(),
        [&](ImplicitLocOpBuilder &ib, ValueRange dests, ValueRange values,
            Value index) {
          SmallVector<Value> args = llvm::map_to_vector(dests, [&](Value bin) {
            return extractRow(ib, bin, index);
          });
          llvm::append_range(args, values);
          SmallVector<Value> written;
          for (auto [value, bin] :
               llvm::zip(inlineBody(ib, histogram.getBody(), args), dests)) {
            assertRowFits(ib, value, bin);
            written.push_back(insertRow(ib, value, bin, index));
          }
          return written;
        });
    replaceAndEraseFused(rewriter, histogram, results, rows);
    return success();
  }
};

} // namespace

void soac::loops::addScatterToLoops(RewritePatternSet &patterns) {
  patterns.add<ScatterToLoops, ReduceByIndexToLoops>(patterns.getContext());
}
