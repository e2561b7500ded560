//===- SortByKey.cpp - a stable sort of small integer keys ----------------===//
#include "passes/AutoDiff/Reverse/SortByKey.h"

#include "passes/AutoDiff/Interfaces/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

Value addIndices(ImplicitLocOpBuilder &b, ValueRange v) {
  return arith::AddIOp::create(b, v[0], v[1]);
}

/// The number of bits of `bound`: the passes of the sort.
Value bitsOf(ImplicitLocOpBuilder &b, Value bound) {
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Type index = b.getIndexType();
  auto loop = scf::WhileOp::create(b, TypeRange{index}, ValueRange{zero});
  {
    OpBuilder::InsertionGuard guard(b);
    Block *before = b.createBlock(&loop.getBefore(), {}, {index}, {b.getLoc()});
    Value rest = arith::ShRUIOp::create(b, bound, before->getArgument(0));
    Value more = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, rest, zero);
    scf::ConditionOp::create(b, more, before->getArgument(0));
    Block *after = b.createBlock(&loop.getAfter(), {}, {index}, {b.getLoc()});
    scf::YieldOp::create(
        b, ValueRange{arith::AddIOp::create(b, after->getArgument(0), one)});
  }
  return loop.getResult(0);
}

} // namespace

SortedKeys sortByKey(ImplicitLocOpBuilder &b, Value keys, Value bound) {
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  keys = castToType(b, keys, indexTensor);
  Value n = outerSize(b, keys);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value iota = IotaOp::create(b, indexTensor, n);
  auto passes = scf::ForOp::create(b, zero, bitsOf(b, bound), one,
                                   ValueRange{keys, iota});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(passes.getBody());
  Value bit = passes.getInductionVar();
  Value current = passes.getRegionIterArg(0);
  Value order = passes.getRegionIterArg(1);
  // Per key: its bit, and 1 where the bit is 0.
  SmallVector<Value> bits =
      buildMap(b, current, [&](ImplicitLocOpBuilder &ib, ValueRange key) {
        Value set = arith::AndIOp::create(
            ib, arith::ShRUIOp::create(ib, key[0], bit), one);
        return SmallVector<Value>{set, arith::SubIOp::create(ib, one, set)};
      });
  auto add = [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
    return {addIndices(ib, v)};
  };
  Value zerosThrough = buildScan(b, bits[1], zero, add)[0];
  Value zeros = buildReduce(b, bits[1], zero, add)[0];
  // Keys with the bit 0 first, then those with 1, each in their order.
  Value positions = buildMap(
      b, {iota, bits[0], zerosThrough},
      [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value isSet = arith::CmpIOp::create(ib, arith::CmpIPredicate::ne, v[1],
                                            zero);
        Value amongZeros = arith::SubIOp::create(ib, v[2], one);
        Value onesBefore = arith::SubIOp::create(ib, v[0], v[2]);
        Value amongOnes = arith::AddIOp::create(ib, zeros, onesBefore);
        return SmallVector<Value>{
            arith::SelectOp::create(ib, isSet, amongOnes, amongZeros)};
      })[0];
  Value sorted =
      ScatterOp::create(b, current.getType(), current, positions, current);
  Value permuted = ScatterOp::create(b, order.getType(), order, positions, order);
  scf::YieldOp::create(b, ValueRange{sorted, permuted});
  b.setInsertionPointAfter(passes);
  return {passes.getResult(0), passes.getResult(1)};
}

} // namespace soac::autodiff
