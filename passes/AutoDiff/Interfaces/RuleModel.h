//===- RuleModel.h - attaching reverse-mode rules to ops ---------*- C++ -*-===//
//
// A reverse-mode rules file (passes/AutoDiff/Reverse) defines
// `LogicalResult reverseOf(SomeOp, AdjointBuilder &)` overloads in namespace
// soac::autodiff and attaches them with attachRules; a forward-mode one
// (passes/AutoDiff/Forward) defines
// `forwardOf(SomeOp, TangentBuilder &)` and attaches them with
// attachForwardRules.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_RULEMODEL_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_RULEMODEL_H

#include "passes/AutoDiff/Engine/ReverseEngine.h"
#include "passes/AutoDiff/Engine/ForwardEngine.h"

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

/// Attaches one generic rule, `Model<Op>`, to each of `Ops`.
template <template <typename> class Model, typename... Ops>
void attachModels(mlir::MLIRContext *context) {
  (Ops::template attachInterface<Model<Ops>>(*context), ...);
}

template <typename ConcreteOp>
struct ForwardRule
    : ForwardModeOpInterface::ExternalModel<ForwardRule<ConcreteOp>,
                                            ConcreteOp> {
  mlir::LogicalResult forward(mlir::Operation *op,
                              TangentBuilder &tangents) const {
    return forwardOf(mlir::cast<ConcreteOp>(op), tangents);
  }
};

template <typename... Ops>
void attachForwardRules(mlir::MLIRContext *context) {
  (Ops::template attachInterface<ForwardRule<Ops>>(*context), ...);
}

void registerArithRules(mlir::DialectRegistry &registry);
void registerMathRules(mlir::DialectRegistry &registry);
void registerTensorRules(mlir::DialectRegistry &registry);
void registerFuncRules(mlir::DialectRegistry &registry);
void registerSCFRules(mlir::DialectRegistry &registry);
void registerSoacRules(mlir::DialectRegistry &registry);
void registerSoacContractionRules(mlir::DialectRegistry &registry);

void registerArithForwardRules(mlir::DialectRegistry &registry);
void registerMathForwardRules(mlir::DialectRegistry &registry);
void registerTensorForwardRules(mlir::DialectRegistry &registry);
void registerFuncForwardRules(mlir::DialectRegistry &registry);
void registerSCFForwardRules(mlir::DialectRegistry &registry);
void registerSoacForwardRules(mlir::DialectRegistry &registry);
void registerSoacContractionForwardRules(mlir::DialectRegistry &registry);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_RULEMODEL_H
