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
  // y = x^p: ẏ = ẋ · ∂y/∂x + ṗ · ∂y/∂p (finite at x = 0: powPartials)
  t.clonePrimal(op);
  PowPartials partials =
      powPartials(t.builder(), t.primal(op.getLhs()), t.primal(op.getRhs()),
                  t.primal(op.getResult()));
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l,
                 t.add(t.mul(t.tangent(op.getLhs(), l), partials.dx),
                       t.mul(t.tangent(op.getRhs(), l), partials.dp)));
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
