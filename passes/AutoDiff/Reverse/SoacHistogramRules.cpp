//===- SoacHistogramRules.cpp - the reverse rule of reduce_by_index -------===//
//
// Per component of the operator: + : dest̄ += ȳ, v̄ᵢ += ȳ[isᵢ] (0 out of
// range); * and min/max on scalars per bin as for reduce; an operator
// applied elementwise to tensor rows: the scalar rule per position
// (ElementwiseOperators.h); any other operator: SoacGeneralHistogram.cpp.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Reverse/ElementwiseOperators.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// Per value row: its bin (as an index) and whether it is in range.
struct Binned {
  Value bin, inRange;
};

Binned binOf(ImplicitLocOpBuilder &ib, Value index, Value bins) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(ib, ib.getIndexType(), index);
  Value inRange = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, index, bins);
  // a safe position to read when out of range (the result is discarded)
  Value zero = arith::ConstantIndexOp::create(ib, 0);
  return {arith::SelectOp::create(ib, inRange, index, zero), inRange};
}

/// h = max (or min) of dest and the values of each bin: h̄ goes to dest when
/// dest reached h (it comes first), else to the first value that did.
void reverseBinExtremum(AdjointBuilder &a, ReduceByIndexOp histogram, unsigned j,
                        Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value indices = a.primal(histogram.getIndices());
  Value dest = a.primal(histogram.getDests()[j]), values = a.primal(histogram.getValues()[j]);
  Value h = a.primal(histogram.getResult(j));
  Value bins = outerSize(b, dest), n = outerSize(b, values);
  Type type = cast<RankedTensorType>(bar.getType()).getElementType();
  Value zero = floatConstant(b, type, 0.0);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // the position of each winning value, n for the others
  Value winners = buildMap(b, {iota, indices, values}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    Binned at = binOf(ib, v[1], bins);
    Value best = extractRow(ib, h, at.bin);
    Value reached = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[2], best);
    Value destWon = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ,
                                          extractRow(ib, dest, at.bin), best);
    Value wins = arith::AndIOp::create(
        ib, at.inRange, arith::AndIOp::create(ib, reached, arith::XOrIOp::create(
            ib, destWon, arith::ConstantIntOp::create(ib, ib.getI1Type(), 1))));
    return SmallVector<Value>{arith::SelectOp::create(ib, wins, v[0], n)};
  })[0];
  Value firsts = buildMap(b, dest, [&](ImplicitLocOpBuilder &, ValueRange) {
    return SmallVector<Value>{n};
  })[0];
  Value first = buildHistogram(b, firsts, indices, winners, n,
                               [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
                                 return {arith::MinUIOp::create(ib, v[0], v[1])};
                               })[0];
  if (a.isActive(histogram.getValues()[j]))
    a.accumulate(histogram.getValues()[j],
                 buildMap(b, {iota, indices}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Binned at = binOf(ib, v[1], bins);
                   Value chosen = arith::AndIOp::create(
                       ib, at.inRange,
                       arith::CmpIOp::create(ib, arith::CmpIPredicate::eq,
                                             extractRow(ib, first, at.bin), v[0]));
                   return SmallVector<Value>{
                       arith::SelectOp::create(ib, chosen, extractRow(ib, bar, at.bin), zero)};
                 })[0]);
  if (a.isActive(histogram.getDests()[j]))
    a.accumulate(histogram.getDests()[j],
                 buildMap(b, {dest, h, bar}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Value kept = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], v[1]);
                   return SmallVector<Value>{arith::SelectOp::create(ib, kept, v[2], zero)};
                 })[0]);
}

/// h = dest · Π values of the bin, exact with zeros: per bin the product p of
/// the non-zero values and their count of zeros z.
void reverseBinProduct(AdjointBuilder &a, ReduceByIndexOp histogram, unsigned j,
                       Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value indices = a.primal(histogram.getIndices());
  Value dest = a.primal(histogram.getDests()[j]), values = a.primal(histogram.getValues()[j]);
  Value bins = outerSize(b, dest);
  Type type = cast<RankedTensorType>(bar.getType()).getElementType();
  Value zero = floatConstant(b, type, 0.0), one = floatConstant(b, type, 1.0);
  Value noZeros = arith::ConstantIndexOp::create(b, 0), aZero = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> counted = buildMap(b, values, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
    return SmallVector<Value>{arith::SelectOp::create(ib, isZero, one, v[0]),
                              arith::SelectOp::create(ib, isZero, aZero, noZeros)};
  });
  SmallVector<Value> start = buildMap(b, dest, [&](ImplicitLocOpBuilder &, ValueRange) {
    return SmallVector<Value>{one, noZeros};
  });
  SmallVector<Value> pz = buildHistogram(
      b, start, indices, counted, {one, noZeros},
      [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
        return {arith::MulFOp::create(ib, v[0], v[2]), arith::AddIOp::create(ib, v[1], v[3])};
      });
  if (a.isActive(histogram.getValues()[j]))
    a.accumulate(histogram.getValues()[j],
                 buildMap(b, {indices, values}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Binned at = binOf(ib, v[0], bins);
                   Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[1], zero);
                   Value d = extractRow(ib, dest, at.bin);
                   Value destZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, d, zero);
                   // zeros among the other factors (dest included)
                   Value others = arith::SubIOp::create(
                       ib, extractRow(ib, pz[1], at.bin),
                       arith::SelectOp::create(ib, isZero, aZero, noZeros));
                   others = arith::AddIOp::create(
                       ib, others, arith::SelectOp::create(ib, destZero, aZero, noZeros));
                   Value p = extractRow(ib, pz[0], at.bin);
                   Value rest = arith::SelectOp::create(ib, isZero, p, arith::DivFOp::create(ib, p, v[1]));
                   Value partial = arith::MulFOp::create(ib, d, rest);
                   Value nonzero = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, others, noZeros);
                   Value keep = arith::AndIOp::create(ib, at.inRange, nonzero);
                   Value scaled = arith::MulFOp::create(ib, extractRow(ib, bar, at.bin), partial);
                   return SmallVector<Value>{arith::SelectOp::create(ib, keep, scaled, zero)};
                 })[0]);
  if (a.isActive(histogram.getDests()[j]))
    a.accumulate(histogram.getDests()[j],
                 buildMap(b, {bar, pz[0], pz[1]}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Value none = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, v[2], noZeros);
                   Value product = arith::SelectOp::create(ib, none, v[1], zero);
                   return SmallVector<Value>{arith::MulFOp::create(ib, v[0], product)};
                 })[0]);
}

} // namespace

LogicalResult reverseOf(ReduceByIndexOp histogram, AdjointBuilder &a) {
  Value indices = a.primal(histogram.getIndices());
  // Recognized operators per component: + on any rows, *, min, max on
  // scalars, operators applied elementwise to tensor rows; anything else is
  // the operator as a whole.
  for (unsigned j = 0; j < histogram.getDests().size(); ++j) {
    Combine kind = componentKind(histogram.getBody(), j);
    bool scalarRows =
        cast<RankedTensorType>(histogram.getDests()[j].getType()).getRank() == 1;
    bool direct = kind == Combine::Add || (scalarRows && kind != Combine::Other);
    if (!direct &&
        !(!scalarRows && isElementwiseComponent(histogram.getBody(), j)))
      return reverseGeneralHistogram(histogram, a);
  }
  for (unsigned j = 0; j < histogram.getDests().size(); ++j) {
    Value bar = a.adjoint(histogram.getResult(j));
    if (!bar)
      continue;
    Combine kind = componentKind(histogram.getBody(), j);
    bool scalarRows = cast<RankedTensorType>(bar.getType()).getRank() == 1;
    if (kind == Combine::Add) {
      a.accumulate(histogram.getDests()[j], bar);
      if (a.isActive(histogram.getValues()[j]))
        a.accumulate(histogram.getValues()[j], gatherRows(a, bar, indices));
    } else if (!scalarRows) {
      if (failed(reverseElementwise(histogram, j, a)))
        return failure();
    } else if (kind == Combine::Mul) {
      reverseBinProduct(a, histogram, j, bar);
    } else {
      reverseBinExtremum(a, histogram, j, bar);
    }
  }
  return success();
}

} // namespace soac::autodiff
