//===- ArithRules.cpp - forward-mode rules of arith ops -------------------===//
//
// y = op(a, b) with tangents ȧ, ḃ (null when zero). Comparisons, integer ops
// and casts from integers have no active result: the engine clones them.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Builders.h"
#include "passes/AutoDiff/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace soac::autodiff {

LogicalResult forwardOf(arith::AddFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  t.setTangent(op, t.add(t.tangent(op.getLhs()), t.tangent(op.getRhs())));
  return success();
}

LogicalResult forwardOf(arith::SubFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  t.setTangent(op, t.sub(t.tangent(op.getLhs()), t.tangent(op.getRhs())));
  return success();
}

LogicalResult forwardOf(arith::MulFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  Value l = t.primal(op.getLhs()), r = t.primal(op.getRhs());
  t.setTangent(op, t.add(t.mul(t.tangent(op.getLhs()), r),
                         t.mul(l, t.tangent(op.getRhs()))));
  return success();
}

LogicalResult forwardOf(arith::DivFOp op, TangentBuilder &t) {
  // y = l / r: ẏ = (l̇ - y · ṙ) / r
  t.clonePrimal(op);
  Value numerator = t.sub(t.tangent(op.getLhs()),
                          t.mul(t.primal(op.getResult()), t.tangent(op.getRhs())));
  if (numerator)
    t.setTangent(op, arith::DivFOp::create(t.builder(), numerator,
                                           t.primal(op.getRhs())));
  return success();
}

LogicalResult forwardOf(arith::RemFOp op, TangentBuilder &t) {
  // y = l - r · trunc(l / r)
  t.clonePrimal(op);
  Value quotient;
  if (t.tangent(op.getRhs()))
    quotient = math::TruncOp::create(
        t.builder(), arith::DivFOp::create(t.builder(), t.primal(op.getLhs()),
                                           t.primal(op.getRhs())));
  t.setTangent(op, t.sub(t.tangent(op.getLhs()),
                         t.mul(quotient, t.tangent(op.getRhs()))));
  return success();
}

LogicalResult forwardOf(arith::NegFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  t.setTangent(op, t.neg(t.tangent(op.getOperand())));
  return success();
}

namespace {
/// max/min: the tangent of the operand that was chosen, the left one on ties
/// (as the reverse rule sends the adjoint).
LogicalResult forwardOfChoice(Operation *op, arith::CmpFPredicate takeLeft,
                              TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  t.clonePrimal(op);
  Value lhs = t.primal(op->getOperand(0)), rhs = t.primal(op->getOperand(1));
  Value left = arith::CmpFOp::create(b, takeLeft, lhs, rhs);
  t.setTangent(op->getResult(0),
               arith::SelectOp::create(b, left, t.tangentOrZero(op->getOperand(0)),
                                       t.tangentOrZero(op->getOperand(1))));
  return success();
}
} // namespace

LogicalResult forwardOf(arith::MaximumFOp op, TangentBuilder &t) {
  return forwardOfChoice(op, arith::CmpFPredicate::OGE, t);
}
LogicalResult forwardOf(arith::MaxNumFOp op, TangentBuilder &t) {
  return forwardOfChoice(op, arith::CmpFPredicate::OGE, t);
}
LogicalResult forwardOf(arith::MinimumFOp op, TangentBuilder &t) {
  return forwardOfChoice(op, arith::CmpFPredicate::OLE, t);
}
LogicalResult forwardOf(arith::MinNumFOp op, TangentBuilder &t) {
  return forwardOfChoice(op, arith::CmpFPredicate::OLE, t);
}

LogicalResult forwardOf(arith::SelectOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  Value onTrue = t.tangent(op.getTrueValue());
  Value onFalse = t.tangent(op.getFalseValue());
  if (onTrue || onFalse)
    t.setTangent(op, arith::SelectOp::create(
                         t.builder(), t.primal(op.getCondition()),
                         t.tangentOrZero(op.getTrueValue()),
                         t.tangentOrZero(op.getFalseValue())));
  return success();
}

LogicalResult forwardOf(arith::ExtFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  if (Value in = t.tangent(op.getIn()))
    t.setTangent(op, arith::ExtFOp::create(t.builder(), op.getType(), in));
  return success();
}

LogicalResult forwardOf(arith::TruncFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  if (Value in = t.tangent(op.getIn()))
    t.setTangent(op, arith::TruncFOp::create(t.builder(), op.getType(), in));
  return success();
}

void registerArithForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    attachForwardRules<arith::AddFOp, arith::SubFOp, arith::MulFOp,
                       arith::DivFOp, arith::RemFOp, arith::NegFOp,
                       arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                       arith::MinNumFOp, arith::SelectOp, arith::ExtFOp,
                       arith::TruncFOp>(context);
  });
}

} // namespace soac::autodiff
