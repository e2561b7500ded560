//===- MathRules.cpp - reverse-mode rules of math ops ---------------------===//
//
// y = f(x) with adjoint ȳ: x̄ += ȳ · f'(x), f' written with the primal x and,
// where cheaper, the primal y. Rounding functions have a zero derivative.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Builders.h"
#include "passes/AutoDiff/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;

namespace soac::autodiff {
namespace {

/// Helpers on the primal values of one unary op.
struct Unary {
  AdjointBuilder &a;
  ImplicitLocOpBuilder &b;
  Value x, y, bar;
  Type type;

  Unary(Operation *op, AdjointBuilder &a)
      : a(a), b(a.builder()), x(a.primal(op->getOperand(0))),
        y(a.primal(op->getResult(0))), bar(a.adjoint(op->getResult(0))),
        type(op->getResult(0).getType()) {}

  Value constant(double value) { return floatConstant(b, type, value); }
  Value mul(Value l, Value r) { return arith::MulFOp::create(b, l, r); }
  Value div(Value l, Value r) { return arith::DivFOp::create(b, l, r); }
  Value add(Value l, Value r) { return arith::AddFOp::create(b, l, r); }
  Value sub(Value l, Value r) { return arith::SubFOp::create(b, l, r); }
};

/// Adds ȳ · derivative(x, y) to x̄.
template <typename Op, typename Derivative>
LogicalResult unaryRule(Op op, AdjointBuilder &a, Derivative derivative) {
  if (!a.isActive(op->getOperand(0)))
    return success();
  Unary u(op, a);
  a.accumulate(op->getOperand(0), u.mul(u.bar, derivative(u)));
  return success();
}

} // namespace

LogicalResult reverseOf(math::ExpOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return u.y; });
}
LogicalResult reverseOf(math::Exp2Op op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return u.mul(u.y, u.constant(M_LN2)); });
}
LogicalResult reverseOf(math::ExpM1Op op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return u.add(u.y, u.constant(1)); });
}
LogicalResult reverseOf(math::LogOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return u.div(u.constant(1), u.x); });
}
LogicalResult reverseOf(math::Log1pOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.div(u.constant(1), u.add(u.x, u.constant(1)));
  });
}
LogicalResult reverseOf(math::Log2Op op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.div(u.constant(1), u.mul(u.x, u.constant(M_LN2)));
  });
}
LogicalResult reverseOf(math::Log10Op op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.div(u.constant(1), u.mul(u.x, u.constant(M_LN10)));
  });
}
LogicalResult reverseOf(math::SinOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return math::CosOp::create(u.b, u.x); });
}
LogicalResult reverseOf(math::CosOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return arith::NegFOp::create(u.b, math::SinOp::create(u.b, u.x));
  });
}
LogicalResult reverseOf(math::TanOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.add(u.constant(1), u.mul(u.y, u.y));
  });
}
LogicalResult reverseOf(math::TanhOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.sub(u.constant(1), u.mul(u.y, u.y));
  });
}
LogicalResult reverseOf(math::SinhOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return math::CoshOp::create(u.b, u.x); });
}
LogicalResult reverseOf(math::CoshOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) { return math::SinhOp::create(u.b, u.x); });
}
LogicalResult reverseOf(math::AtanOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.div(u.constant(1), u.add(u.constant(1), u.mul(u.x, u.x)));
  });
}
LogicalResult reverseOf(math::SqrtOp op, AdjointBuilder &a) {
  return unaryRule(op, a, [](Unary &u) {
    return u.div(u.constant(0.5), u.y);
  });
}
LogicalResult reverseOf(math::RsqrtOp op, AdjointBuilder &a) {
  // d/dx x^(-1/2) = -y³ / 2
  return unaryRule(op, a, [](Unary &u) {
    return u.mul(u.constant(-0.5), u.mul(u.y, u.mul(u.y, u.y)));
  });
}
LogicalResult reverseOf(math::AbsFOp op, AdjointBuilder &a) {
  // sign(x), 0 at 0
  return unaryRule(op, a, [](Unary &u) {
    Value zero = u.constant(0);
    Value positive = arith::CmpFOp::create(u.b, arith::CmpFPredicate::OGT, u.x, zero);
    Value negative = arith::CmpFOp::create(u.b, arith::CmpFPredicate::OLT, u.x, zero);
    Value sign = arith::SelectOp::create(u.b, negative, u.constant(-1), zero);
    return Value(arith::SelectOp::create(u.b, positive, u.constant(1), sign));
  });
}
LogicalResult reverseOf(math::ErfOp op, AdjointBuilder &a) {
  // 2/√π · exp(-x²)
  return unaryRule(op, a, [](Unary &u) {
    Value square = u.mul(u.x, u.x);
    Value gauss = math::ExpOp::create(u.b, arith::NegFOp::create(u.b, square));
    return u.mul(u.constant(M_2_SQRTPI), gauss);
  });
}
LogicalResult reverseOf(math::FPowIOp op, AdjointBuilder &a) {
  // d/dx x^n = n · x^(n-1)
  return unaryRule(op, a, [&](Unary &u) {
    Value n = op.getRhs();
    Value one = arith::ConstantOp::create(u.b, n.getType(),
                                          u.b.getIntegerAttr(n.getType(), 1));
    Value lower = math::FPowIOp::create(
        u.b, u.x, arith::SubIOp::create(u.b, a.primal(n), one));
    Value factor = arith::SIToFPOp::create(u.b, u.type, a.primal(n));
    return u.mul(factor, lower);
  });
}

LogicalResult reverseOf(math::PowFOp op, AdjointBuilder &a) {
  // y = x^p: x̄ += ȳ · p · x^(p-1), p̄ += ȳ · y · log(x)
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  Value x = a.primal(op.getLhs()), p = a.primal(op.getRhs());
  if (a.isActive(op.getLhs())) {
    Value one = floatConstant(b, x.getType(), 1);
    Value lower = math::PowFOp::create(b, x, arith::SubFOp::create(b, p, one));
    a.accumulate(op.getLhs(), arith::MulFOp::create(
                                  b, bar, arith::MulFOp::create(b, p, lower)));
  }
  if (a.isActive(op.getRhs())) {
    Value logX = math::LogOp::create(b, x);
    Value y = a.primal(op.getResult());
    a.accumulate(op.getRhs(), arith::MulFOp::create(
                                  b, bar, arith::MulFOp::create(b, y, logX)));
  }
  return success();
}

LogicalResult reverseOf(math::FmaOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  if (a.isActive(op.getA()))
    a.accumulate(op.getA(), arith::MulFOp::create(b, bar, a.primal(op.getB())));
  if (a.isActive(op.getB()))
    a.accumulate(op.getB(), arith::MulFOp::create(b, bar, a.primal(op.getA())));
  a.accumulate(op.getC(), bar);
  return success();
}

namespace {
/// floor, ceil, round, trunc: piecewise constant, no contribution.
template <typename Op>
LogicalResult zeroDerivative(Op, AdjointBuilder &) {
  return success();
}
} // namespace

LogicalResult reverseOf(math::FloorOp op, AdjointBuilder &a) { return zeroDerivative(op, a); }
LogicalResult reverseOf(math::CeilOp op, AdjointBuilder &a) { return zeroDerivative(op, a); }
LogicalResult reverseOf(math::RoundOp op, AdjointBuilder &a) { return zeroDerivative(op, a); }
LogicalResult reverseOf(math::RoundEvenOp op, AdjointBuilder &a) { return zeroDerivative(op, a); }
LogicalResult reverseOf(math::TruncOp op, AdjointBuilder &a) { return zeroDerivative(op, a); }

void registerMathRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    attachRules<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
                math::Log1pOp, math::Log2Op, math::Log10Op, math::SinOp,
                math::CosOp, math::TanOp, math::TanhOp, math::SinhOp,
                math::CoshOp, math::AtanOp, math::SqrtOp, math::RsqrtOp,
                math::AbsFOp, math::ErfOp, math::FPowIOp, math::PowFOp,
                math::FmaOp, math::FloorOp, math::CeilOp, math::RoundOp,
                math::RoundEvenOp, math::TruncOp>(context);
  });
}

} // namespace soac::autodiff
