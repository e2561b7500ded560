//===- SoacScanRules.cpp - the reverse rule of soac.scan ------------------===//
//
// + : x̄ is the reversed suffix sum of ȳ; an operator applied elementwise to
// tensor rows: the scalar rule per position (ElementwiseOperators.h); any
// other associative operator on scalars: the Jacobians of the operator per
// row and a reversed scan of composed affine maps (reverseGeneralScan).
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Reverse/ElementwiseOperators.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// The rows of `tensor` in reverse order (a map gathering row n-1-i).
Value reverseRows(ImplicitLocOpBuilder &b, Value tensor, Value iota, Value last) {
  return buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    Value mirror = arith::SubIOp::create(ib, last, i[0]);
    return SmallVector<Value>{extractRow(ib, tensor, mirror)};
  })[0];
}

/// Any associative operator on k scalars: y_i = y_{i-1} ⊙ x_i. With the
/// Jacobians C_i = ∂y_i/∂y_{i-1} and G_i = ∂y_i/∂x_i (pull-backs of the
/// operator at each row, one per component), the adjoint of y_i is
/// λ_i = ȳ_i + C_{i+1}ᵀ λ_{i+1}: a linear recurrence, solved by a scan of
/// composed affine maps (d·d + d scalars) over the reversed rows; then
/// x̄_i = G_iᵀ λ_i and the init's adjoint is C_0ᵀ λ_0. Only the d float
/// components carry derivatives: integer ones (flags, positions) take part
/// in the operator but not in the Jacobians.
LogicalResult reverseGeneralScan(ScanOp scan, AdjointBuilder &a, Value iota,
                                 Value n, Value last) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &op = scan.getBody().front();
  unsigned k = scan.getInits().size();
  if (llvm::any_of(scan.getInits().getTypes(), llvm::IsaPred<RankedTensorType>) ||
      !a.activeFreeValues(scan).empty())
    return scan.emitOpError()
           << "has an operator whose reverse-mode rule is not implemented yet: "
              "supported are + (any rows, per component), operators applied "
              "elementwise to tensor rows, and any associative operator on "
              "scalars";
  SmallVector<unsigned> floats;
  for (auto [j, type] : llvm::enumerate(scan.getInits().getTypes()))
    if (isDifferentiableType(type))
      floats.push_back(j);
  unsigned d = floats.size();
  if (d == 0)
    return success();
  SmallVector<Value> xs = a.primals(scan.getInputs());
  SmallVector<Value> ys = llvm::map_to_vector(
      scan.getResults(), [&](Value r) { return a.primal(r); });
  SmallVector<Value> inits = a.primals(scan.getInits());
  SmallVector<Value> bars;
  for (unsigned j : floats) {
    Value result = scan.getResult(j);
    bars.push_back(a.adjoint(result) ? a.adjoint(result)
                                     : buildMap(b, iota, [&](ImplicitLocOpBuilder &,
                                                             ValueRange) {
                                         return SmallVector<Value>{a.zerosLike(inits[j])};
                                       })[0]);
  }
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  // A constant of float component #m (of the d).
  auto constant = [&](ImplicitLocOpBuilder &ib, unsigned m, double value) {
    return floatConstant(ib, inits[floats[m]].getType(), value);
  };

  // Per row: C (d·d, row-major: C[m·d + l] = ∂y_m/∂y_prev_l), then G (d·d).
  bool failedSweep = false;
  SmallVector<Value> inputs{iota};
  llvm::append_range(inputs, xs);
  SmallVector<Value> jacobians = buildMap(
      b, inputs, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        Value first = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, row[0], zero);
        Value before = arith::SelectOp::create(ib, first, zero,
                                               arith::SubIOp::create(ib, row[0], one));
        SmallVector<Value> args;
        for (unsigned l = 0; l < k; ++l)
          args.push_back(arith::SelectOp::create(ib, first, inits[l],
                                                 extractRow(ib, ys[l], before)));
        llvm::append_range(args, row.drop_front());
        SmallVector<Value> c(d * d), g(d * d);
        for (unsigned m = 0; m < d; ++m) {
          // the unit seed of float component m; integer ones get none
          SmallVector<Value> seeds =
              llvm::map_to_vector(inits, [&](Value init) { return buildZerosLike(ib, init); });
          seeds[floats[m]] = constant(ib, m, 1.0);
          FailureOr<SmallVector<Value>> pulled = a.pullBack(ib, op, args, seeds);
          if (failed(pulled)) {
            failedSweep = true;
            return SmallVector<Value>(2 * d * d, args.front());
          }
          for (unsigned l = 0; l < d; ++l) {
            c[m * d + l] = (*pulled)[floats[l]];
            g[m * d + l] = (*pulled)[k + floats[l]];
          }
        }
        llvm::append_range(c, g);
        return c;
      });
  if (failedSweep)
    return failure();
  ArrayRef<Value> C = ArrayRef<Value>(jacobians).take_front(d * d);
  ArrayRef<Value> G = ArrayRef<Value>(jacobians).drop_front(d * d);

  // u_j = λ_{n-1-j} = A_j u_{j-1} + b_j with A_j = C_{n-j}ᵀ (identity at j = 0)
  // and b_j = ȳ_{n-1-j}, as d·d + d scalars per row.
  SmallVector<Value> affine = buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange j) {
    Value start = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, j[0], zero);
    Value from = arith::SelectOp::create(ib, start, zero, arith::SubIOp::create(ib, n, j[0]));
    Value mirror = arith::SubIOp::create(ib, last, j[0]);
    SmallVector<Value> values;
    for (unsigned m = 0; m < d; ++m)
      for (unsigned l = 0; l < d; ++l) // A[m][l] = C[l][m]
        values.push_back(arith::SelectOp::create(
            ib, start, constant(ib, m, m == l ? 1.0 : 0.0), extractRow(ib, C[l * d + m], from)));
    for (unsigned m = 0; m < d; ++m)
      values.push_back(extractRow(ib, bars[m], mirror));
    return values;
  });
  SmallVector<Value> identity;
  for (unsigned m = 0; m < d; ++m)
    for (unsigned l = 0; l < d; ++l)
      identity.push_back(constant(b, m, m == l ? 1.0 : 0.0));
  for (unsigned m = 0; m < d; ++m)
    identity.push_back(constant(b, m, 0.0));
  SmallVector<Value> composed = buildScan(
      b, affine, identity, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        // (A1, b1) then (A2, b2): u -> A2 (A1 u + b1) + b2
        unsigned size = d * d + d;
        auto A1 = [&](unsigned m, unsigned l) { return v[m * d + l]; };
        auto A2 = [&](unsigned m, unsigned l) { return v[size + m * d + l]; };
        auto B1 = [&](unsigned m) { return v[d * d + m]; };
        auto B2 = [&](unsigned m) { return v[size + d * d + m]; };
        SmallVector<Value> out;
        for (unsigned m = 0; m < d; ++m)
          for (unsigned l = 0; l < d; ++l) {
            Value sum = arith::MulFOp::create(ib, A2(m, 0), A1(0, l));
            for (unsigned p = 1; p < d; ++p)
              sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, A2(m, p), A1(p, l)));
            out.push_back(sum);
          }
        for (unsigned m = 0; m < d; ++m) {
          Value sum = B2(m);
          for (unsigned p = 0; p < d; ++p)
            sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, A2(m, p), B1(p)));
          out.push_back(sum);
        }
        return out;
      });
  SmallVector<Value> lambdas = llvm::map_to_vector(
      ArrayRef<Value>(composed).drop_front(d * d),
      [&](Value u) { return reverseRows(b, u, iota, last); });

  // x̄_i,l = Σ_m G_i[m][l] λ_i,m
  SmallVector<Value> perRowInputs(lambdas);
  llvm::append_range(perRowInputs, G);
  SmallVector<Value> xBars = buildMap(b, perRowInputs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    SmallVector<Value> out;
    for (unsigned l = 0; l < d; ++l) {
      Value sum = arith::MulFOp::create(ib, v[d + l], v[0]);
      for (unsigned m = 1; m < d; ++m)
        sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, v[d + m * d + l], v[m]));
      out.push_back(sum);
    }
    return out;
  });
  for (auto [l, xBar] : llvm::enumerate(xBars))
    a.accumulate(scan.getInputs()[floats[l]], xBar);

  // init̄_l = Σ_m C_0[m][l] λ_0,m (nothing for an empty scan)
  if (llvm::any_of(floats, [&](unsigned j) { return a.isActive(scan.getInits()[j]); })) {
    Value nonEmpty = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, zero);
    SmallVector<Type> types;
    for (unsigned j : floats)
      types.push_back(inits[j].getType());
    auto initAdjoint = scf::IfOp::create(b, types, nonEmpty, true, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(initAdjoint.thenBlock());
    SmallVector<Value> out;
    for (unsigned l = 0; l < d; ++l) {
      Value sum = arith::MulFOp::create(b, extractRow(b, C[l], zero), extractRow(b, lambdas[0], zero));
      for (unsigned m = 1; m < d; ++m)
        sum = arith::AddFOp::create(b, sum, arith::MulFOp::create(b, extractRow(b, C[m * d + l], zero),
                                                                  extractRow(b, lambdas[m], zero)));
      out.push_back(sum);
    }
    scf::YieldOp::create(b, out);
    b.setInsertionPointToStart(initAdjoint.elseBlock());
    scf::YieldOp::create(b, llvm::map_to_vector(floats, [&](unsigned j) { return a.zerosLike(inits[j]); }));
    b.setInsertionPointAfter(initAdjoint);
    for (auto [l, adjoint] : llvm::enumerate(initAdjoint.getResults()))
      a.accumulate(scan.getInits()[floats[l]], adjoint);
  }
  return success();
}

} // namespace

LogicalResult reverseOf(ScanOp scan, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value some = nullptr;
  for (Value result : scan.getResults())
    if (a.adjoint(result))
      some = result;
  Value n = outerSize(b, a.primal(some ? some : scan.getResult(0)));
  Value last = arith::SubIOp::create(b, n, arith::ConstantIndexOp::create(b, 1));
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // Per component: + on any rows, or an operator applied elementwise to
  // tensor rows (the scalar rule per position); else the operator as a whole.
  bool perComponent = true;
  for (unsigned j = 0; j < scan.getInits().size(); ++j)
    perComponent &= componentKind(scan.getBody(), j) == Combine::Add ||
                    isElementwiseComponent(scan.getBody(), j);
  for (unsigned j = 0; j < scan.getInits().size(); ++j) {
    Value bar = a.adjoint(scan.getResult(j));
    Value x = scan.getInputs()[j];
    if (!bar || (!a.isActive(x) && !a.isActive(scan.getInits()[j])))
      continue;
    if (!perComponent)
      return reverseGeneralScan(scan, a, iota, n, last);
    if (componentKind(scan.getBody(), j) != Combine::Add) {
      if (failed(reverseElementwise(scan, j, a)))
        return failure();
      continue;
    }
    // x̄[i] = Σ_{k >= i} ȳ[k]: a scan of ȳ reversed, reversed back; the
    // init took part in every row.
    Value zero = a.zerosLike(a.primal(scan.getInits()[j]));
    Value sums = buildScan(b, reverseRows(b, bar, iota, last), zero,
                           [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
                             return {buildAdd(ib, v[0], v[1])};
                           })[0];
    a.accumulate(x, reverseRows(b, sums, iota, last));
    accumulateRowSum(a, scan.getInits()[j], bar);
  }
  return success();
}

} // namespace soac::autodiff
