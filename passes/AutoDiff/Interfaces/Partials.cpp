//===- Partials.cpp - derivatives of scalar math functions ----------------===//
#include "passes/AutoDiff/Interfaces/Partials.h"

#include "passes/AutoDiff/Interfaces/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;

namespace soac::autodiff {

Value unaryDerivative(Operation *op, ImplicitLocOpBuilder &b,
                      ValueRange operands, Value y) {
  Value x = operands[0];
  Type type = y.getType();
  auto constant = [&](double value) { return floatConstant(b, type, value); };
  auto mul = [&](Value l, Value r) -> Value { return arith::MulFOp::create(b, l, r); };
  auto div = [&](Value l, Value r) -> Value { return arith::DivFOp::create(b, l, r); };
  auto add = [&](Value l, Value r) -> Value { return arith::AddFOp::create(b, l, r); };
  auto sub = [&](Value l, Value r) -> Value { return arith::SubFOp::create(b, l, r); };
  auto inverse = [&](Value v) { return div(constant(1), v); };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case<math::ExpOp>([&](auto) { return y; })
      .Case<math::Exp2Op>([&](auto) { return mul(y, constant(M_LN2)); })
      .Case<math::ExpM1Op>([&](auto) { return add(y, constant(1)); })
      .Case<math::LogOp>([&](auto) { return inverse(x); })
      .Case<math::Log1pOp>([&](auto) { return inverse(add(x, constant(1))); })
      .Case<math::Log2Op>([&](auto) { return inverse(mul(x, constant(M_LN2))); })
      .Case<math::Log10Op>([&](auto) { return inverse(mul(x, constant(M_LN10))); })
      .Case<math::SinOp>([&](auto) { return Value(math::CosOp::create(b, x)); })
      .Case<math::CosOp>([&](auto) {
        return Value(arith::NegFOp::create(b, math::SinOp::create(b, x)));
      })
      .Case<math::TanOp>([&](auto) { return add(constant(1), mul(y, y)); })
      .Case<math::TanhOp>([&](auto) { return sub(constant(1), mul(y, y)); })
      .Case<math::SinhOp>([&](auto) { return Value(math::CoshOp::create(b, x)); })
      .Case<math::CoshOp>([&](auto) { return Value(math::SinhOp::create(b, x)); })
      .Case<math::AtanOp>([&](auto) { return inverse(add(constant(1), mul(x, x))); })
      .Case<math::SqrtOp>([&](auto) { return div(constant(0.5), y); })
      // d/dx x^(-1/2) = -y³ / 2
      .Case<math::RsqrtOp>([&](auto) {
        return mul(constant(-0.5), mul(y, mul(y, y)));
      })
      // sign(x), 0 at 0
      .Case<math::AbsFOp>([&](auto) {
        Value zero = constant(0);
        Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, x, zero);
        Value negative = arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, zero);
        Value sign = arith::SelectOp::create(b, negative, constant(-1), zero);
        return Value(arith::SelectOp::create(b, positive, constant(1), sign));
      })
      // 2/√π · exp(-x²)
      .Case<math::ErfOp>([&](auto) {
        Value gauss = math::ExpOp::create(b, arith::NegFOp::create(b, mul(x, x)));
        return mul(constant(M_2_SQRTPI), gauss);
      })
      // d/dx x^n = n · x^(n-1); 0 for n = 0 (x^0 = 1), also at x = 0,
      // where n · x^(n-1) would be 0 · ∞
      .Case<math::FPowIOp>([&](auto) {
        Value n = operands[1];
        Value one = arith::ConstantOp::create(b, n.getType(),
                                              b.getIntegerAttr(n.getType(), 1));
        Value zero = arith::ConstantOp::create(b, n.getType(),
                                               b.getIntegerAttr(n.getType(), 0));
        Value lower = math::FPowIOp::create(b, x, arith::SubIOp::create(b, n, one));
        Value constantPower =
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq, n, zero);
        return arith::SelectOp::create(
                   b, constantPower, constant(0),
                   mul(arith::SIToFPOp::create(b, type, n), lower))
            .getResult();
      })
      .Default([](Operation *) { return Value(); }); // floor, ceil, round, trunc
}

PowPartials powPartials(ImplicitLocOpBuilder &b, Value x, Value p, Value y) {
  Type type = x.getType();
  Value zero = floatConstant(b, type, 0), one = floatConstant(b, type, 1);
  Value lower = math::PowFOp::create(b, x, arith::SubFOp::create(b, p, one));
  Value constantInX =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, p, zero);
  Value dx = arith::SelectOp::create(b, constantInX, zero,
                                     arith::MulFOp::create(b, p, lower));
  Value vanishes = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, y, zero);
  Value dp = arith::SelectOp::create(
      b, vanishes, zero, arith::MulFOp::create(b, y, math::LogOp::create(b, x)));
  return {dx, dp};
}

} // namespace soac::autodiff
