//===- Simplify.cpp - soac-simplify ---------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace soac {
#define GEN_PASS_DEF_SOACSIMPLIFY
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// A value an scf.for carries that nothing after the loop reads and that
/// the body only uses to compute its own next value (pure ops of the body's
/// block): the loop carries it unchanged, and canonicalization drops it.
/// Reverse mode makes these: a loop's forward sweep stacks every carried
/// value for the reverse sweep, also one the reverse sweep never reads
/// (D-LSTM's running loss).
struct DropDeadCarriedCycle : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    Block *body = loop.getBody();
    Operation *yield = body->getTerminator();
    for (auto [position, carry] : llvm::enumerate(loop.getRegionIterArgs())) {
      OpOperand &next = yield->getOpOperand(position);
      if (next.get() == carry || !loop.getResult(position).use_empty() ||
          !onlyComputesItself(carry, next))
        continue;
      rewriter.modifyOpInPlace(yield, [&] { next.set(carry); });
      return success();
    }
    return failure();
  }

  /// Whether every use of `carry`, and of what pure ops of the body compute
  /// from it, is one of those ops or `next`.
  static bool onlyComputesItself(BlockArgument carry, OpOperand &next) {
    Block *body = carry.getOwner();
    llvm::SetVector<Value> derived;
    derived.insert(carry);
    for (size_t i = 0; i < derived.size(); ++i)
      for (OpOperand &use : derived[i].getUses()) {
        if (&use == &next)
          continue;
        Operation *user = use.getOwner();
        if (user->getBlock() != body || user->getNumRegions() != 0 ||
            !isPure(user) || user == body->getTerminator())
          return false;
        for (Value result : user->getResults())
          derived.insert(result);
      }
    return true;
  }
};

struct SoacSimplifyPass : soac::impl::SoacSimplifyBase<SoacSimplifyPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    for (RegisteredOperationName name : getContext().getRegisteredOperations())
      if (name.getDialectNamespace() == soac::SoacDialect::getDialectNamespace())
        name.getCanonicalizationPatterns(patterns, &getContext());
    patterns.add<DropDeadCarriedCycle>(&getContext());
    // The greedy driver also erases ops without uses or side effects.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
