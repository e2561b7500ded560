//===- ParallelChoices.cpp - the run-time choices of parallel loops -------===//
//
// Lowers soac.parallel_pays, the condition of convert-soac-to-loops' choice
// between a parallel and a sequential loop, once the parallel loops are
// OpenMP regions; where the parallel form may run on one thread, only it
// stays (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace soac {
#define GEN_PASS_DEF_SOACPARALLELCHOICES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac::loops;

namespace {

/// Replaces `choice` by its parallel branch, whose outermost OpenMP regions
/// run on threads only when `pays`.
void keepParallelBranch(IRRewriter &rewriter, scf::IfOp choice, Value pays) {
  choice.getThenRegion().walk<WalkOrder::PreOrder>(
      [&](omp::ParallelOp parallel) {
        Value condition = parallel.getIfExpr();
        if (condition) {
          rewriter.setInsertionPoint(parallel);
          condition = arith::AndIOp::create(rewriter, parallel.getLoc(),
                                            condition, pays);
        }
        rewriter.modifyOpInPlace(parallel, [&] {
          parallel.getIfExprMutable().assign(condition ? condition : pays);
        });
        // Regions nested in it run on its threads, or on one.
        return WalkResult::skip();
      });
  auto yield = cast<scf::YieldOp>(choice.thenBlock()->getTerminator());
  SmallVector<Value> results(yield.getOperands());
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(choice.thenBlock(), choice);
  rewriter.replaceOp(choice, results);
}

struct SoacParallelChoicesPass
    : soac::impl::SoacParallelChoicesBase<SoacParallelChoicesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    WalkResult malformed = module.walk([&](func::CallOp call) {
      if (call.getCallee() != kParallelPaysFunction)
        return WalkResult::advance();
      if (call.getNumOperands() != 1 || call.getNumResults() != 1 ||
          !call.getOperand(0).getType().isIndex() ||
          !call.getResult(0).getType().isInteger(1)) {
        call.emitOpError() << "to @" << kParallelPaysFunction
                           << " must take the work (index) and return i1";
        return WalkResult::interrupt();
      }
      calls.push_back(call);
      return WalkResult::advance();
    });
    if (malformed.wasInterrupted())
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    for (func::CallOp call : calls) {
      ImplicitLocOpBuilder b(call.getLoc(), call);
      Value pays = parallelPays(b, call.getOperand(0));
      if (!call->hasAttr(kSerializableAttr)) {
        rewriter.replaceOp(call, pays);
        continue;
      }
      Value choiceMade = call.getResult(0);
      SmallVector<scf::IfOp> choices;
      for (Operation *user : choiceMade.getUsers())
        if (auto choice = dyn_cast<scf::IfOp>(user);
            choice && choice.getCondition() == choiceMade)
          choices.push_back(choice);
      for (scf::IfOp choice : choices)
        keepParallelBranch(rewriter, choice, pays);
      // The parallel branch now always runs: what the lowering made of the
      // choice elsewhere (bufferization selects the buffer of the branch
      // taken) must see it taken.
      rewriter.replaceOp(call, arith::ConstantOp::create(
                                   b, b.getBoolAttr(true)).getResult());
    }
    if (Operation *declaration = module.lookupSymbol(kParallelPaysFunction))
      if (SymbolTable::symbolKnownUseEmpty(declaration, module))
        declaration->erase();
    declareParallelismFunctions(module);
  }
};

} // namespace
