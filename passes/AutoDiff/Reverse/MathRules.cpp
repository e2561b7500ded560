//===- MathRules.cpp - reverse-mode rules of math ops ---------------------===//
//
// y = f(x) with adjoint ȳ: x̄ += ȳ · f'(x), f' from Partials.h. Rounding
// functions have a zero derivative.
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

/// x̄ += ȳ · f'(x) for the unary functions of Partials.h.
template <typename Op>
struct UnaryReverseRule
    : ReverseModeOpInterface::ExternalModel<UnaryReverseRule<Op>, Op> {
  LogicalResult reverse(Operation *op, AdjointBuilder &a) const {
    if (!a.isActive(op->getOperand(0)))
      return success();
    ImplicitLocOpBuilder &b = a.builder();
    SmallVector<Value> operands = llvm::map_to_vector(
        op->getOperands(), [&](Value v) { return a.primal(v); });
    Value derivative =
        unaryDerivative(op, b, operands, a.primal(op->getResult(0)));
    if (derivative)
      a.accumulate(op->getOperand(0),
                   arith::MulFOp::create(b, a.adjoint(op->getResult(0)),
                                         derivative));
    return success();
  }
};

} // namespace

LogicalResult reverseOf(math::PowFOp op, AdjointBuilder &a) {
  // y = x^p: x̄ += ȳ · ∂y/∂x, p̄ += ȳ · ∂y/∂p (finite at x = 0: powPartials)
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  PowPartials partials =
      powPartials(b, a.primal(op.getLhs()), a.primal(op.getRhs()),
                  a.primal(op.getResult()));
  if (a.isActive(op.getLhs()))
    a.accumulate(op.getLhs(), arith::MulFOp::create(b, bar, partials.dx));
  if (a.isActive(op.getRhs()))
    a.accumulate(op.getRhs(), arith::MulFOp::create(b, bar, partials.dp));
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

void registerMathRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, math::MathDialect *) {
    attachToUnaryMathOps<UnaryReverseRule>(context);
    attachRules<math::PowFOp, math::FmaOp>(context);
  });
}

} // namespace soac::autodiff
