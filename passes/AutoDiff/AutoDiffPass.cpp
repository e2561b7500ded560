//===- AutoDiffPass.cpp - soac-autodiff -----------------------------------===//
#include "passes/AutoDiff/Engine.h"
#include "passes/AutoDiff/Loops.h"
#include "passes/AutoDiff/RuleModel.h"
#include "passes/Passes.h"

#include "dialect/SoacOps.h"

namespace soac {
#define GEN_PASS_DEF_SOACAUTODIFF
#include "passes/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

// A vjp in a differentiated function yields a new vjp in the generated one:
// expansion repeats, as deep as derivatives are nested.
constexpr int kMaxNesting = 8;

struct SoacAutodiffPass : soac::impl::SoacAutodiffBase<SoacAutodiffPass> {
  using SoacAutodiffBase::SoacAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (checkpointLevels < 1) {
      module.emitError() << "checkpoint-levels must be at least 1, got "
                         << static_cast<int64_t>(checkpointLevels);
      return signalPassFailure();
    }
    stripMineLoops(module);
    SymbolTableCollection symbols;
    for (int depth = 0; depth <= kMaxNesting; ++depth) {
      SmallVector<soac::VjpOp> pending;
      module.walk([&](soac::VjpOp op) { pending.push_back(op); });
      if (pending.empty())
        break;
      if (depth == kMaxNesting) {
        pending.front().emitOpError()
            << "is nested more than " << kMaxNesting << " derivatives deep";
        return signalPassFailure();
      }
      for (soac::VjpOp op : pending)
        if (failed(expand(op, symbols)))
          return signalPassFailure();
    }
    WalkResult forward = module.walk([](soac::JvpOp op) {
      op.emitOpError() << "forward mode is not implemented yet";
      return WalkResult::interrupt();
    });
    if (forward.wasInterrupted())
      signalPassFailure();
  }

  /// Loops asking for several checkpoint levels (by attribute, or all of
  /// them through the pass option) are strip-mined before differentiation.
  void stripMineLoops(ModuleOp module) {
    SmallVector<std::pair<scf::ForOp, int64_t>> loops;
    module.walk([&](scf::ForOp loop) {
      int64_t levels = checkpointLevels;
      if (auto attr = loop->getAttrOfType<IntegerAttr>(
              soac::autodiff::kCheckpointLevelsAttr)) {
        levels = attr.getInt();
        loop->removeAttr(soac::autodiff::kCheckpointLevelsAttr);
      }
      if (levels > 1)
        loops.push_back({loop, levels});
    });
    for (auto [loop, levels] : loops)
      soac::autodiff::stripMine(loop, levels);
  }

  LogicalResult expand(soac::VjpOp op, SymbolTableCollection &symbols) {
    auto callee =
        symbols.lookupNearestSymbolFrom<func::FuncOp>(op, op.getCalleeAttr());
    if (!callee)
      return op.emitOpError() << "differentiates " << op.getCalleeAttr()
                              << ", which is not a func.func";
    SmallVector<int64_t> wrt =
        op.getWrt() ? llvm::to_vector(*op.getWrt())
                    : llvm::to_vector(
                          llvm::seq<int64_t>(0, callee.getNumArguments()));
    FailureOr<func::FuncOp> vjp =
        soac::autodiff::getOrCreateVjpFunction(callee, wrt, symbols);
    if (failed(vjp))
      return failure();
    OpBuilder builder(op);
    auto call = func::CallOp::create(builder, op.getLoc(), *vjp, op.getOperands());
    op.replaceAllUsesWith(call.getResults());
    op.erase();
    return success();
  }
};

} // namespace

void soac::autodiff::registerReverseModeRules(DialectRegistry &registry) {
  registerArithRules(registry);
  registerMathRules(registry);
  registerTensorRules(registry);
  registerFuncRules(registry);
  registerSCFRules(registry);
  registerSoacRules(registry);
}
