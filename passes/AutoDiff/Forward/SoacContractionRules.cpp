//===- SoacContractionRules.cpp - forward rule of soac.matmul -------------===//
//
// A product is bilinear: the tangent of op(A)·op(B) is
// op(Ȧ)·op(B) + op(A)·op(Ḃ), with the products' transpose flags.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "dialect/SoacOps.h"

using namespace mlir;

namespace soac::autodiff {

LogicalResult forwardOf(MatmulOp op, TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  t.clonePrimal(op);
  Value lhs = t.primal(op.getLhs()), rhs = t.primal(op.getRhs());
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  for (unsigned lane : t.laneIndices()) {
    Value tangent;
    if (Value dl = t.tangent(op.getLhs(), lane))
      tangent = MatmulOp::create(b, dl, rhs, tl, tr);
    if (Value dr = t.tangent(op.getRhs(), lane)) {
      Value term = MatmulOp::create(b, lhs, dr, tl, tr);
      tangent = tangent ? t.add(tangent, term) : term;
    }
    if (tangent)
      t.setTangent(op.getResult(), lane, tangent);
  }
  return success();
}

void registerSoacContractionForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    attachForwardRules<MatmulOp>(context);
  });
}

} // namespace soac::autodiff
