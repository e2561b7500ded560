//===- SoacReduceRules.cpp - the reverse rule of soac.reduce --------------===//
//
// Per component of the operator: + replicates ȳ; * uses the product of the
// non-zero elements and the count of zeros (exact at zeros); min/max send ȳ
// to the first arg-extremum; other operators on tensor rows that combine
// them elementwise: the scalar rule per position (ElementwiseOperators.h);
// any other associative operator: exclusive scans from both sides, then the
// pull-back of l ⊙ x ⊙ r per element.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Reverse/ElementwiseOperators.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// ȳ · ∂y/∂x for y = init · Π x, exact when some x are zero: with p the
/// product of the non-zero elements and z the number of zeros,
/// ∂y/∂x_i = init · p / x_i if z = 0, init · p if z = 1 and x_i = 0, else 0.
void reverseProduct(AdjointBuilder &a, Value x, Value init, Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), start = a.primal(init);
  Type type = bar.getType();
  Value zero = floatConstant(b, type, 0), one = floatConstant(b, type, 1);
  Value noZeros = arith::ConstantIndexOp::create(b, 0);
  Value oneZero = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> counted =
      buildMap(b, xs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
        return SmallVector<Value>{
            arith::SelectOp::create(ib, isZero, one, v[0]),
            arith::SelectOp::create(ib, isZero, oneZero, noZeros)};
      });
  SmallVector<Value> pz = buildReduce(
      b, counted, {one, noZeros},
      [](ImplicitLocOpBuilder &ib, ValueRange args) -> SmallVector<Value> {
        return {arith::MulFOp::create(ib, args[0], args[2]),
                arith::AddIOp::create(ib, args[1], args[3])};
      });
  Value scale = arith::MulFOp::create(b, bar, arith::MulFOp::create(b, start, pz[0]));
  Value none = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pz[1], noZeros);
  Value single = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pz[1], oneZero);
  Value perElement =
      buildMap(b, xs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
        Value ifZero = arith::SelectOp::create(ib, single, scale, zero);
        Value ifNonZero = arith::SelectOp::create(
            ib, none, arith::DivFOp::create(ib, scale, v[0]), zero);
        return SmallVector<Value>{
            arith::SelectOp::create(ib, isZero, ifZero, ifNonZero)};
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value product = arith::SelectOp::create(b, none, pz[0], zero);
    a.accumulate(init, arith::MulFOp::create(b, bar, product));
  }
}

/// y = max (or min) of init and x: ȳ goes to the first i with x_i = y, or to
/// init when no element reaches y.
void reverseExtremum(AdjointBuilder &a, Value x, Value init, Value result,
                     Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), y = a.primal(result);
  Value n = outerSize(b, xs);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  SmallVector<Value> positions =
      buildMap(b, {xs, iota}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value hit = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], y);
        return SmallVector<Value>{arith::SelectOp::create(ib, hit, v[1], n)};
      });
  Value first = buildReduce(b, positions[0], n,
                            [](ImplicitLocOpBuilder &ib, ValueRange args)
                                -> SmallVector<Value> {
                              return {arith::MinUIOp::create(ib, args[0], args[1])};
                            })[0];
  Value zero = floatConstant(b, bar.getType(), 0);
  Value perElement =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        Value chosen = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i[0], first);
        return SmallVector<Value>{arith::SelectOp::create(ib, chosen, bar, zero)};
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value none = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, first, n);
    a.accumulate(init, arith::SelectOp::create(b, none, bar, zero));
  }
}

/// The same per column, for rows that are vectors (an elementwise max or
/// min of rows): ȳ[c] goes to the first row whose element c is the extremum.
void reverseColumnExtremum(AdjointBuilder &a, Value x, Value init,
                           Value result, Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), y = a.primal(result);
  Value n = outerSize(b, xs);
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // Per element: its row where it equals the extremum of its column, else n.
  Value positions =
      buildMap(b, {xs, iota}, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        return buildMap(ib, {row[0], y},
                        [&](ImplicitLocOpBuilder &eb, ValueRange v) {
                          Value hit = arith::CmpFOp::create(
                              eb, arith::CmpFPredicate::OEQ, v[0], v[1]);
                          return SmallVector<Value>{
                              arith::SelectOp::create(eb, hit, row[1], n)};
                        });
      })[0];
  Value none = buildMap(b, y, [&](ImplicitLocOpBuilder &, ValueRange) {
                 return SmallVector<Value>{n};
               })[0];
  Value first = buildReduce(
      b, positions, none,
      [](ImplicitLocOpBuilder &ib, ValueRange args) -> SmallVector<Value> {
        return buildMap(ib, {args[0], args[1]},
                        [](ImplicitLocOpBuilder &eb, ValueRange v) {
                          return SmallVector<Value>{
                              arith::MinUIOp::create(eb, v[0], v[1])};
                        });
      })[0];
  Value zero = floatConstant(b, getElementTypeOrSelf(bar.getType()), 0);
  Value perElement =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        return buildMap(ib, {first, bar},
                        [&](ImplicitLocOpBuilder &eb, ValueRange v) {
                          Value chosen = arith::CmpIOp::create(
                              eb, arith::CmpIPredicate::eq, i[0], v[0]);
                          return SmallVector<Value>{
                              arith::SelectOp::create(eb, chosen, v[1], zero)};
                        });
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value toInit =
        buildMap(b, {first, bar}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
          Value untouched = arith::CmpIOp::create(
              ib, arith::CmpIPredicate::eq, v[0], n);
          return SmallVector<Value>{
              arith::SelectOp::create(ib, untouched, v[1], zero)};
        })[0];
    a.accumulate(init, toInit);
  }
}

/// A copy of operator region `source` into `target`, with its two argument
/// groups swapped when `flipped` (b ⊙' a = a ⊙ b).
void cloneOperator(ImplicitLocOpBuilder &b, Region &source, Region &target,
                   bool flipped) {
  Block &block = source.front();
  unsigned k = block.getNumArguments() / 2;
  SmallVector<Type> types(block.getArgumentTypes());
  OpBuilder::InsertionGuard guard(b);
  Block *copy = b.createBlock(&target, {}, types,
                              SmallVector<Location>(types.size(), b.getLoc()));
  IRMapping mapping;
  for (unsigned i = 0; i < 2 * k; ++i)
    mapping.map(block.getArgument(i),
                copy->getArgument(flipped ? (i + k) % (2 * k) : i));
  for (Operation &op : block)
    b.clone(op, mapping);
}

/// Any associative operator ⊙: with l the exclusive prefix and r the
/// exclusive suffix of each element, y = l ⊙ x ⊙ r, so x̄ is the pull-back
/// of ȳ through a ↦ (l ⊙ a) ⊙ r, computed per element in a map.
LogicalResult reverseGeneralReduce(ReduceOp reduce, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &op = reduce.getBody().front();
  unsigned k = reduce.getInits().size();
  if (!a.activeFreeValues(reduce).empty() ||
      llvm::any_of(reduce.getInits().getTypes(), llvm::IsaPred<RankedTensorType>))
    return reduce.emitOpError()
           << "has a general operator on tensor rows or reading differentiated "
              "values from outside: its reverse-mode rule is not implemented yet";
  SmallVector<Value> xs = a.primals(reduce.getInputs());
  SmallVector<Value> inits = a.primals(reduce.getInits());
  SmallVector<Value> seeds;
  for (auto [result, init] : llvm::zip(reduce.getResults(), inits))
    seeds.push_back(a.adjoint(result) ? a.adjoint(result) : a.zerosLike(init));
  Value n = outerSize(b, xs.front());
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value last = arith::SubIOp::create(b, n, one);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // Inclusive prefixes, and inclusive suffixes (a flipped scan of the
  // reversed input: sufRev[j] = x[n-1-j] ⊙ ... ⊙ x[n-1]).
  auto prefix = ScanOp::create(b, ValueRange(xs).getTypes(), xs, inits);
  cloneOperator(b, reduce.getBody(), prefix.getBody(), /*flipped=*/false);
  SmallVector<Value> reversed = buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    Value mirror = arith::SubIOp::create(ib, last, i[0]);
    return llvm::map_to_vector(xs, [&](Value x) { return extractRow(ib, x, mirror); });
  });
  auto suffix = ScanOp::create(b, ValueRange(xs).getTypes(), reversed, inits);
  cloneOperator(b, reduce.getBody(), suffix.getBody(), /*flipped=*/true);

  bool failedSweep = false;
  SmallVector<Value> mapInputs{iota};
  llvm::append_range(mapInputs, xs);
  SmallVector<Value> adjoints = buildMap(
      b, mapInputs, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        Value i = row[0];
        Value zero = arith::ConstantIndexOp::create(ib, 0);
        Value first = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i, zero);
        Value lastRow = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i, last);
        // clamped positions, then the neutral element at the ends
        Value before = arith::SelectOp::create(ib, first, zero,
                                               arith::SubIOp::create(ib, i, one));
        Value after = arith::SelectOp::create(
            ib, lastRow, zero,
            arith::SubIOp::create(ib, arith::SubIOp::create(ib, last, i), one));
        SmallVector<Value> left, right;
        for (unsigned j = 0; j < k; ++j) {
          left.push_back(arith::SelectOp::create(
              ib, first, inits[j], extractRow(ib, prefix.getResult(j), before)));
          right.push_back(arith::SelectOp::create(
              ib, lastRow, inits[j], extractRow(ib, suffix.getResult(j), after)));
        }
        SmallVector<Value> values(row.drop_front());
        // t = l ⊙ x, z = t ⊙ r
        SmallVector<Value> lx(left);
        llvm::append_range(lx, values);
        SmallVector<Value> tr = a.cloneBlock(ib, op, lx);
        llvm::append_range(tr, right);
        FailureOr<SmallVector<Value>> throughRight = a.pullBack(ib, op, tr, seeds);
        if (failed(throughRight)) {
          failedSweep = true;
          return SmallVector<Value>(values);
        }
        SmallVector<Value> tBar(ArrayRef<Value>(*throughRight).take_front(k));
        FailureOr<SmallVector<Value>> throughLeft = a.pullBack(ib, op, lx, tBar);
        if (failed(throughLeft)) {
          failedSweep = true;
          return SmallVector<Value>(values);
        }
        return SmallVector<Value>(ArrayRef<Value>(*throughLeft).drop_front(k));
      });
  if (failedSweep)
    return failure();
  for (auto [x, adjoint] : llvm::zip(reduce.getInputs(), adjoints))
    a.accumulate(x, adjoint);
  return success();
}

} // namespace

LogicalResult reverseOf(ReduceOp reduce, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  // Recognized operators, component by component: +, and *, min, max on
  // scalars, min, max on vectors directly; other operators on tensor rows
  // applied elementwise by the scalar rule per position; anything else as
  // a whole.
  auto columnExtremum = [&](unsigned j, Combine kind) {
    auto rows = dyn_cast<RankedTensorType>(reduce.getInits()[j].getType());
    return rows && rows.getRank() == 1 &&
           (kind == Combine::Max || kind == Combine::Min);
  };
  for (unsigned j = 0; j < reduce.getInits().size(); ++j) {
    Combine kind = componentKind(reduce.getBody(), j);
    bool rows = isa<RankedTensorType>(reduce.getInits()[j].getType());
    bool direct = kind == Combine::Add || columnExtremum(j, kind) ||
                  (!rows && kind != Combine::Other);
    if (!direct && !(rows && isElementwiseComponent(reduce.getBody(), j)))
      return reverseGeneralReduce(reduce, a);
  }
  for (unsigned j = 0; j < reduce.getInits().size(); ++j) {
    Value bar = a.adjoint(reduce.getResult(j));
    Value x = reduce.getInputs()[j], init = reduce.getInits()[j];
    if (!bar || (!a.isActive(x) && !a.isActive(init)))
      continue;
    Combine kind = componentKind(reduce.getBody(), j);
    bool rows = isa<RankedTensorType>(init.getType());
    if (kind == Combine::Add) {
      // Every element contributed with weight 1.
      Value replicated =
          buildMap(b, a.primal(x), [&](ImplicitLocOpBuilder &, ValueRange) {
            return SmallVector<Value>{bar};
          })[0];
      a.accumulate(x, replicated);
      a.accumulate(init, bar);
    } else if (columnExtremum(j, kind)) {
      reverseColumnExtremum(a, x, init, reduce.getResult(j), bar);
    } else if (rows) {
      if (failed(reverseElementwise(reduce, j, a)))
        return failure();
    } else if (kind == Combine::Mul) {
      reverseProduct(a, x, init, bar);
    } else {
      reverseExtremum(a, x, init, reduce.getResult(j), bar);
    }
  }
  return success();
}

} // namespace soac::autodiff
