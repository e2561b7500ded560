//===- RuleModel.h - attaching reverse-mode rules to ops ---------*- C++ -*-===//
//
// A rules file defines `LogicalResult reverseOf(SomeOp, AdjointBuilder &)`
// overloads in namespace soac::autodiff and attaches them with attachRules.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_RULEMODEL_H
#define SOAC_PASSES_AUTODIFF_RULEMODEL_H

#include "passes/AutoDiff/Engine.h"

namespace soac::autodiff {

template <typename ConcreteOp>
struct ReverseRule
    : ReverseModeOpInterface::ExternalModel<ReverseRule<ConcreteOp>,
                                            ConcreteOp> {
  mlir::LogicalResult reverse(mlir::Operation *op,
                              AdjointBuilder &adjoints) const {
    return reverseOf(mlir::cast<ConcreteOp>(op), adjoints);
  }
};

template <typename... Ops>
void attachRules(mlir::MLIRContext *context) {
  (Ops::template attachInterface<ReverseRule<Ops>>(*context), ...);
}

void registerArithRules(mlir::DialectRegistry &registry);
void registerMathRules(mlir::DialectRegistry &registry);
void registerTensorRules(mlir::DialectRegistry &registry);
void registerFuncRules(mlir::DialectRegistry &registry);
void registerSCFRules(mlir::DialectRegistry &registry);
void registerSoacRules(mlir::DialectRegistry &registry);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_RULEMODEL_H
