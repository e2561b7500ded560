//===- SoacScatterRules.cpp - the reverse rule of soac.scatter ------------===//
//
// v̄ᵢ = ȳ[isᵢ] for the one writer of each row whose value survived (0 for
// the others and out of range); dest̄ is ȳ with the written rows zeroed.
//
// Which writer survives: the primal's CPU lowering and the interpreter
// write in order, so the last writer of a row wins; the GPU's threads race,
// and any writer may. The rule takes the last writer whose row equals the
// result's row (the last writer if none does: a NaN), which is the
// survivor of the CPU and, whenever the written values differ, of any
// lowering. Duplicates with equal values all wrote the same thing; one of
// them gets the adjoint, as a derivative must give it once.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// The number of elements in which rows `x` and `y` (scalars or tensors of
/// floats of one shape) differ, as an index.
Value countDifferences(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (!isa<RankedTensorType>(x.getType())) {
    Value same = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x, y);
    return arith::SelectOp::create(b, same,
                                   arith::ConstantIndexOp::create(b, 0),
                                   arith::ConstantIndexOp::create(b, 1));
  }
  Value perRow =
      buildMap(b, {x, y}, [](ImplicitLocOpBuilder &ib, ValueRange rows) {
        return SmallVector<Value>{countDifferences(ib, rows[0], rows[1])};
      })[0];
  Value none = arith::ConstantIndexOp::create(b, 0);
  return buildReduce(b, perRow, none,
                     [](ImplicitLocOpBuilder &ib, ValueRange v)
                         -> SmallVector<Value> {
                       return {arith::AddIOp::create(ib, v[0], v[1])};
                     })[0];
}

/// `index` (index, i32 or i64) as an index, and whether it is in [0, size).
std::pair<Value, Value> checkedIndex(ImplicitLocOpBuilder &b, Value index,
                                     Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, b.getIndexType(), index);
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index, size);
  return {index, inRange};
}

/// `inRange ? then() : otherwise`, with `then` built only in its branch (it
/// reads at the index, which may be out of range otherwise).
Value ifInRange(ImplicitLocOpBuilder &b, Value inRange, Value otherwise,
                function_ref<Value(ImplicitLocOpBuilder &)> then) {
  auto choice = scf::IfOp::create(b, otherwise.getType(), inRange, true, true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(choice.thenBlock());
  scf::YieldOp::create(b, then(b));
  b.setInsertionPointToStart(choice.elseBlock());
  scf::YieldOp::create(b, otherwise);
  return choice.getResult(0);
}

/// Per value row, its index where it is the surviving writer of that row
/// of dest, else `size(dest)` (out of range: it gets no adjoint). Writer i
/// gets the key 1 + i, or n + 1 + i when its row equals the result's; the
/// largest key of each row of dest is its survivor. Keys are i64, which
/// GPU atomics take (not index).
Value survivingIndices(AdjointBuilder &a, ScatterOp scatter) {
  ImplicitLocOpBuilder &b = a.builder();
  Value indices = a.primal(scatter.getIndices());
  Value values = a.primal(scatter.getValues());
  Value result = a.primal(scatter.getResult());
  Value bins = outerSize(b, result), n = outerSize(b, values);
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  Value none = arith::ConstantIntOp::create(b, b.getI64Type(), 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value keys = buildMap(b, {iota, indices, values},
                        [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    auto [index, inRange] = checkedIndex(ib, v[1], bins);
    Value key = ifInRange(ib, inRange, none, [&](ImplicitLocOpBuilder &tb) {
      Value differences =
          countDifferences(tb, v[2], extractRow(tb, result, index));
      Value kept = arith::CmpIOp::create(
          tb, arith::CmpIPredicate::eq, differences,
          arith::ConstantIndexOp::create(tb, 0));
      Value order = arith::AddIOp::create(tb, v[0], one);
      Value key = arith::SelectOp::create(
          tb, kept, arith::AddIOp::create(tb, order, n), order);
      return arith::IndexCastOp::create(tb, tb.getI64Type(), key).getResult();
    });
    return SmallVector<Value>{key};
  })[0];
  Value binPositions = IotaOp::create(b, indexTensor, bins);
  Value noWriter = buildMap(b, binPositions,
                            [&](ImplicitLocOpBuilder &, ValueRange) {
                              return SmallVector<Value>{none};
                            })[0];
  Value survivors = buildHistogram(
      b, noWriter, indices, keys, none,
      [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
        return {arith::MaxUIOp::create(ib, v[0], v[1])};
      })[0];
  return buildMap(b, {indices, keys}, [&](ImplicitLocOpBuilder &ib,
                                           ValueRange v) {
    auto [index, inRange] = checkedIndex(ib, v[0], bins);
    Value survived = ifInRange(ib, inRange, bins, [&](ImplicitLocOpBuilder &tb) {
      Value won = arith::CmpIOp::create(tb, arith::CmpIPredicate::eq,
                                        extractRow(tb, survivors, index), v[1]);
      return arith::SelectOp::create(tb, won, index, bins).getResult();
    });
    return SmallVector<Value>{survived};
  })[0];
}

} // namespace

LogicalResult reverseOf(ScatterOp scatter, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(scatter.getResult());
  Value indices = a.primal(scatter.getIndices());
  if (a.isActive(scatter.getValues()))
    a.accumulate(scatter.getValues(),
                 gatherRows(a, bar, survivingIndices(a, scatter)));
  if (a.isActive(scatter.getDest())) {
    Value zeros = a.zerosLike(a.primal(scatter.getValues()));
    a.accumulate(scatter.getDest(),
                 ScatterOp::create(b, bar.getType(), bar, indices, zeros));
  }
  return success();
}

} // namespace soac::autodiff
