//===- MathRules.cpp - forward-mode rules of math ops ---------------------===//
//
// y = f(x): ẏ = ẋ · f'(x), f' from Partials.h (shared with the reverse rules).
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/Partials.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

template <typename Op>
struct UnaryForwardRule
    : ForwardModeOpInterface::ExternalModel<UnaryForwardRule<Op>, Op> {
  LogicalResult forward(Operation *op, TangentBuilder &t) const {
    t.clonePrimal(op);
    Value derivative;
    for (unsigned l : t.laneIndices()) {
      Value dx = t.tangent(op->getOperand(0), l);
      if (!dx)
        continue;
      // One derivative for every lane, built on first use.
      if (!derivative)
        derivative = unaryDerivative(op, t.builder(),
                                     t.primals(op->getOperands()),
                                     t.primal(op->getResult(0)));
      t.setTangent(op->getResult(0), l, t.mul(dx, derivative));
    }
    return success();
  }
};

} // namespace

LogicalResult forwardOf(math::PowFOp op, TangentBuilder &t) {
  // y = x^p: ẏ = ẋ · p · x^(p-1) + ṗ · y · log(x)
  ImplicitLocOpBuilder &b = t.builder();
  t.clonePrimal(op);
  Value x = t.primal(op.getLhs()), p = t.primal(op.getRhs());
  Value one = floatConstant(b, x.getType(), 1.0);
  Value baseFactor =
      t.mul(p, math::PowFOp::create(b, x, arith::SubFOp::create(b, p, one)));
  Value exponentFactor =
      t.mul(t.primal(op.getResult()), math::LogOp::create(b, x));
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l, t.add(t.mul(t.tangent(op.getLhs(), l), baseFactor),
                              t.mul(t.tangent(op.getRhs(), l), exponentFactor)));
  return success();
}

LogicalResult forwardOf(math::FmaOp op, TangentBuilder &t) {
  // y = a · b + c
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    t.setTangent(
        op, l,
        t.add(t.add(t.mul(t.tangent(op.getA(), l), t.primal(op.getB())),
                    t.mul(t.primal(op.getA()), t.tangent(op.getB(), l))),
              t.tangent(op.getC(), l)));
  return success();
}

void registerMathForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    attachToUnaryMathOps<UnaryForwardRule>(context);
    attachForwardRules<math::PowFOp, math::FmaOp>(context);
  });
}

} // namespace soac::autodiff
