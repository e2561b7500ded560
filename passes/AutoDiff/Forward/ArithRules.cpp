//===- ArithRules.cpp - forward-mode rules of arith ops -------------------===//
//
// y = op(a, b) with tangents ȧ, ḃ (null when zero). Comparisons, integer ops
// and casts from integers have no active result: the engine clones them.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace soac::autodiff {

LogicalResult forwardOf(arith::AddFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l, t.add(t.tangent(op.getLhs(), l), t.tangent(op.getRhs(), l)));
  return success();
}

LogicalResult forwardOf(arith::SubFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l, t.sub(t.tangent(op.getLhs(), l), t.tangent(op.getRhs(), l)));
  return success();
}

LogicalResult forwardOf(arith::MulFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  Value l = t.primal(op.getLhs()), r = t.primal(op.getRhs());
  for (unsigned lane : t.laneIndices())
    t.setTangent(op, lane, t.add(t.mul(t.tangent(op.getLhs(), lane), r),
                                 t.mul(l, t.tangent(op.getRhs(), lane))));
  return success();
}

LogicalResult forwardOf(arith::DivFOp op, TangentBuilder &t) {
  // y = l / r: ẏ = (l̇ - y · ṙ) / r
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices()) {
    Value numerator =
        t.sub(t.tangent(op.getLhs(), l),
              t.mul(t.primal(op.getResult()), t.tangent(op.getRhs(), l)));
    if (numerator)
      t.setTangent(op, l, arith::DivFOp::create(t.builder(), numerator,
                                                t.primal(op.getRhs())));
  }
  return success();
}

LogicalResult forwardOf(arith::RemFOp op, TangentBuilder &t) {
  // y = l - r · trunc(l / r)
  t.clonePrimal(op);
  Value quotient = math::TruncOp::create(
      t.builder(), arith::DivFOp::create(t.builder(), t.primal(op.getLhs()),
                                         t.primal(op.getRhs())));
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l, t.sub(t.tangent(op.getLhs(), l),
                              t.mul(quotient, t.tangent(op.getRhs(), l))));
  return success();
}

LogicalResult forwardOf(arith::NegFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    t.setTangent(op, l, t.neg(t.tangent(op.getOperand(), l)));
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
  for (unsigned l : t.laneIndices()) {
    if (!t.tangent(op->getOperand(0), l) && !t.tangent(op->getOperand(1), l))
      continue;
    t.setTangent(op->getResult(0), l,
                 arith::SelectOp::create(b, left,
                                         t.tangentOrZero(op->getOperand(0), l),
                                         t.tangentOrZero(op->getOperand(1), l)));
  }
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
  for (unsigned l : t.laneIndices()) {
    if (!t.tangent(op.getTrueValue(), l) && !t.tangent(op.getFalseValue(), l))
      continue;
    t.setTangent(op, l, arith::SelectOp::create(
                            t.builder(), t.primal(op.getCondition()),
                            t.tangentOrZero(op.getTrueValue(), l),
                            t.tangentOrZero(op.getFalseValue(), l)));
  }
  return success();
}

LogicalResult forwardOf(arith::ExtFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    if (Value in = t.tangent(op.getIn(), l))
      t.setTangent(op, l, arith::ExtFOp::create(t.builder(), op.getType(), in));
  return success();
}

LogicalResult forwardOf(arith::TruncFOp op, TangentBuilder &t) {
  t.clonePrimal(op);
  for (unsigned l : t.laneIndices())
    if (Value in = t.tangent(op.getIn(), l))
      t.setTangent(op, l, arith::TruncFOp::create(t.builder(), op.getType(), in));
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
