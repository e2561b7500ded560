//===- ArithRules.cpp - reverse-mode rules of arith ops -------------------===//
//
// y = op(a, b) with adjoint ȳ. Comparisons, integer ops and casts from
// integers have no active result and need no rule.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

Value mul(AdjointBuilder &a, Value x, Value y) {
  return arith::MulFOp::create(a.builder(), x, y);
}
Value div(AdjointBuilder &a, Value x, Value y) {
  return arith::DivFOp::create(a.builder(), x, y);
}
Value neg(AdjointBuilder &a, Value x) {
  return arith::NegFOp::create(a.builder(), x);
}

} // namespace

LogicalResult reverseOf(arith::AddFOp op, AdjointBuilder &a) {
  Value bar = a.adjoint(op.getResult());
  a.accumulate(op.getLhs(), bar);
  a.accumulate(op.getRhs(), bar);
  return success();
}

LogicalResult reverseOf(arith::SubFOp op, AdjointBuilder &a) {
  Value bar = a.adjoint(op.getResult());
  a.accumulate(op.getLhs(), bar);
  if (a.isActive(op.getRhs()))
    a.accumulate(op.getRhs(), neg(a, bar));
  return success();
}

LogicalResult reverseOf(arith::MulFOp op, AdjointBuilder &a) {
  Value bar = a.adjoint(op.getResult());
  if (a.isActive(op.getLhs()))
    a.accumulate(op.getLhs(), mul(a, bar, a.primal(op.getRhs())));
  if (a.isActive(op.getRhs()))
    a.accumulate(op.getRhs(), mul(a, bar, a.primal(op.getLhs())));
  return success();
}

LogicalResult reverseOf(arith::DivFOp op, AdjointBuilder &a) {
  // y = l / r: l̄ += ȳ / r, r̄ -= ȳ · y / r
  Value bar = a.adjoint(op.getResult());
  Value rhs = a.primal(op.getRhs());
  if (a.isActive(op.getLhs()))
    a.accumulate(op.getLhs(), div(a, bar, rhs));
  if (a.isActive(op.getRhs()))
    a.accumulate(op.getRhs(),
                 neg(a, div(a, mul(a, bar, a.primal(op.getResult())), rhs)));
  return success();
}

LogicalResult reverseOf(arith::RemFOp op, AdjointBuilder &a) {
  // y = l - r · trunc(l / r)
  Value bar = a.adjoint(op.getResult());
  a.accumulate(op.getLhs(), bar);
  if (a.isActive(op.getRhs())) {
    Value quotient = math::TruncOp::create(
        a.builder(), div(a, a.primal(op.getLhs()), a.primal(op.getRhs())));
    a.accumulate(op.getRhs(), neg(a, mul(a, bar, quotient)));
  }
  return success();
}

LogicalResult reverseOf(arith::NegFOp op, AdjointBuilder &a) {
  a.accumulate(op.getOperand(), neg(a, a.adjoint(op.getResult())));
  return success();
}

namespace {
/// max/min: the adjoint goes to the operand that was chosen, the left one
/// on ties.
LogicalResult reverseOfChoice(Operation *op, arith::CmpFPredicate takeLeft,
                              AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op->getResult(0));
  Value lhs = a.primal(op->getOperand(0)), rhs = a.primal(op->getOperand(1));
  Value left = arith::CmpFOp::create(b, takeLeft, lhs, rhs);
  Value zero = floatConstant(b, bar.getType(), 0.0);
  a.accumulate(op->getOperand(0), arith::SelectOp::create(b, left, bar, zero));
  a.accumulate(op->getOperand(1), arith::SelectOp::create(b, left, zero, bar));
  return success();
}
} // namespace

LogicalResult reverseOf(arith::MaximumFOp op, AdjointBuilder &a) {
  return reverseOfChoice(op, arith::CmpFPredicate::OGE, a);
}
LogicalResult reverseOf(arith::MaxNumFOp op, AdjointBuilder &a) {
  return reverseOfChoice(op, arith::CmpFPredicate::OGE, a);
}
LogicalResult reverseOf(arith::MinimumFOp op, AdjointBuilder &a) {
  return reverseOfChoice(op, arith::CmpFPredicate::OLE, a);
}
LogicalResult reverseOf(arith::MinNumFOp op, AdjointBuilder &a) {
  return reverseOfChoice(op, arith::CmpFPredicate::OLE, a);
}

LogicalResult reverseOf(arith::SelectOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  if (isa<RankedTensorType>(bar.getType()))
    return op.emitOpError()
           << "on tensors has no reverse-mode rule; select scalars in a map";
  Value condition = a.primal(op.getCondition());
  Value zero = floatConstant(b, bar.getType(), 0.0);
  a.accumulate(op.getTrueValue(),
               arith::SelectOp::create(b, condition, bar, zero));
  a.accumulate(op.getFalseValue(),
               arith::SelectOp::create(b, condition, zero, bar));
  return success();
}

LogicalResult reverseOf(arith::ExtFOp op, AdjointBuilder &a) {
  a.accumulate(op.getIn(),
               arith::TruncFOp::create(a.builder(), op.getIn().getType(),
                                       a.adjoint(op.getResult())));
  return success();
}

LogicalResult reverseOf(arith::TruncFOp op, AdjointBuilder &a) {
  a.accumulate(op.getIn(),
               arith::ExtFOp::create(a.builder(), op.getIn().getType(),
                                     a.adjoint(op.getResult())));
  return success();
}

void registerArithRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    attachRules<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
                arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
                arith::MaxNumFOp, arith::MinimumFOp, arith::MinNumFOp,
                arith::SelectOp, arith::ExtFOp, arith::TruncFOp>(context);
  });
}

} // namespace soac::autodiff
