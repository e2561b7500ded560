//===- SoacContractionRules.cpp - reverse rule of soac.matmul -------------===//
//
// C = op(A)·op(B) (op: identity or transpose) pulls back to two products:
// the adjoint of op(A) is C̄·op(B)ᵀ and that of op(B) is op(A)ᵀ·C̄. A
// transpose of an operand is a flag of the product reading it, never a
// copy.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "dialect/SoacOps.h"

using namespace mlir;

namespace soac::autodiff {

LogicalResult reverseOf(MatmulOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  Value lhs = a.primal(op.getLhs()), rhs = a.primal(op.getRhs());
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  if (a.isActive(op.getLhs())) {
    // Ā = C̄·op(B)ᵀ, or, when A is read transposed, its transpose op(B)·C̄ᵀ.
    Value grad = tl ? MatmulOp::create(b, rhs, bar, tr, /*transposeRhs=*/true)
                    : MatmulOp::create(b, bar, rhs, false, !tr);
    a.accumulate(op.getLhs(), grad);
  }
  if (a.isActive(op.getRhs())) {
    // B̄ = op(A)ᵀ·C̄, or, when B is read transposed, C̄ᵀ·op(A).
    Value grad = tr ? MatmulOp::create(b, bar, lhs, /*transposeLhs=*/true, tl)
                    : MatmulOp::create(b, lhs, bar, !tl, false);
    a.accumulate(op.getRhs(), grad);
  }
  return success();
}

void registerSoacContractionRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    attachRules<MatmulOp>(context);
  });
}

} // namespace soac::autodiff
