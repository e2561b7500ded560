//===- Simplify.cpp - soac-simplify ---------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "dialect/SoacOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACSIMPLIFY
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {
struct SoacSimplifyPass : soac::impl::SoacSimplifyBase<SoacSimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    for (RegisteredOperationName name : getContext().getRegisteredOperations())
      if (name.getDialectNamespace() == soac::SoacDialect::getDialectNamespace())
        name.getCanonicalizationPatterns(patterns, &getContext());
    // The greedy driver also erases ops without uses or side effects.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
