//===- AutoDiff.cpp - soac-autodiff ---------------------------------------===//
#include "passes/AutoDiff/Engine/ReverseEngine.h"
#include "passes/AutoDiff/Engine/ForwardEngine.h"
#include "passes/AutoDiff/Engine/Loops.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"
#include "passes/AutoDiff/Passes.h"

#include "dialect/SoacOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace soac {
#define GEN_PASS_DEF_SOACAUTODIFF
#include "passes/AutoDiff/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

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
    // Generated functions are appended after their source: iterate over a
    // snapshot, they need no expansion (their sources had none left).
    expanded.clear();
    auto functions = llvm::to_vector(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions)
      if (failed(expandIn(function, symbols)))
        return signalPassFailure();
  }

  /// Replaces the soac.vjp and soac.jvp ops of `function` by calls to
  /// generated functions. A derivative is generated from a function whose
  /// own derivative ops, and those of the functions it calls, have been
  /// expanded first: the engines then see calls only. (Derivatives nest: a
  /// jvp of a function holding a vjp is a Hessian-vector product.)
  LogicalResult expandIn(func::FuncOp function,
                         SymbolTableCollection &symbols) {
    // Visited: done, or on the current path of a recursive call chain.
    if (!expanded.insert(function).second)
      return success();
    SmallVector<Operation *> derivatives;
    SmallVector<func::FuncOp> callees;
    function.walk([&](Operation *op) {
      if (isa<soac::VjpOp, soac::JvpOp>(op))
        derivatives.push_back(op);
      if (auto callee = dyn_cast<CallOpInterface>(op))
        if (auto symbol = dyn_cast_if_present<SymbolRefAttr>(
                callee.getCallableForCallee()))
          if (auto target = symbols.lookupNearestSymbolFrom<func::FuncOp>(
                  op, symbol))
            callees.push_back(target);
    });
    for (Operation *op : derivatives) {
      auto symbol = op->getAttrOfType<FlatSymbolRefAttr>("callee");
      if (auto target = symbols.lookupNearestSymbolFrom<func::FuncOp>(op, symbol))
        callees.push_back(target);
    }
    for (func::FuncOp callee : callees)
      if (failed(expandIn(callee, symbols)))
        return failure();
    for (Operation *op : derivatives)
      if (failed(expand(op, symbols)))
        return failure();
    return success();
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

  LogicalResult expand(Operation *op, SymbolTableCollection &symbols) {
    auto calleeName = op->getAttrOfType<FlatSymbolRefAttr>("callee");
    auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(op, calleeName);
    if (!callee)
      return op->emitOpError() << "differentiates " << calleeName
                               << ", which is not a func.func";
    auto wrtAttr = op->getAttrOfType<DenseI64ArrayAttr>("wrt");
    SmallVector<int64_t> wrt =
        wrtAttr ? llvm::to_vector(wrtAttr.asArrayRef())
                : llvm::to_vector(
                      llvm::seq<int64_t>(0, callee.getNumArguments()));
    auto widthAttr = op->getAttrOfType<IntegerAttr>("width");
    unsigned width = widthAttr ? widthAttr.getInt() : 1;
    FailureOr<func::FuncOp> derivative =
        isa<soac::VjpOp>(op)
            ? soac::autodiff::getOrCreateVjpFunction(callee, wrt, symbols,
                                                     mixedMode, width)
            : soac::autodiff::getOrCreateJvpFunction(callee, wrt, width,
                                                     symbols);
    if (failed(derivative))
      return failure();
    OpBuilder builder(op);
    auto call = func::CallOp::create(builder, op->getLoc(), *derivative,
                                     op->getOperands());
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    return success();
  }

  /// Functions whose derivative ops are expanded or being expanded.
  llvm::DenseSet<func::FuncOp> expanded;
};

} // namespace

void soac::autodiff::registerDerivativeRules(DialectRegistry &registry) {
  registerArithRules(registry);
  registerMathRules(registry);
  registerTensorRules(registry);
  registerFuncRules(registry);
  registerSCFRules(registry);
  registerSoacRules(registry);
  registerSoacContractionRules(registry);
  registerArithForwardRules(registry);
  registerMathForwardRules(registry);
  registerTensorForwardRules(registry);
  registerFuncForwardRules(registry);
  registerSCFForwardRules(registry);
  registerSoacForwardRules(registry);
  registerSoacContractionForwardRules(registry);
}
