//===- ParallelLoopsByWork.cpp - top-level parallel loops only when they pay //
//
// The SOAC lowering chooses between a parallel and a sequential loop by the
// work and the thread count (chooseByWork); the parallel loops that
// bufferization makes (a fill of a tensor made once, an iota) had no such
// choice, and each started an OpenMP region however few its iterations:
// HAND's gradient started seven per call, for buffers of 22 to 544 rows.
// Here such a loop runs in parallel only when its iterations reach
// kMinParallelWork and there is more than one thread.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "passes/Conversion/SoacToLoops/Parallelism.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {
#define GEN_PASS_DEF_SOACPARALLELLOOPSBYWORK
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// A parallel loop this pass chooses for: directly in a function's body (the
/// SOAC lowering's own parallel loops sit in the branch of its choice, or in
/// other parallel loops), without reductions, and whose body is a straight
/// line (a fill, an iota: copying it into the sequential form costs little).
bool isTopLevelStraightLoop(scf::ParallelOp loop) {
  if (!isa<func::FuncOp>(loop->getParentOp()) || loop.getNumReductions() != 0)
    return false;
  return llvm::all_of(loop.getBody()->without_terminator(),
                      [](Operation &op) { return op.getNumRegions() == 0; });
}

/// The iterations of `loop`, folded to a constant when its bounds are.
Value iterations(ImplicitLocOpBuilder &b, scf::ParallelOp loop) {
  Value total = arith::ConstantIndexOp::create(b, 1);
  for (auto [lower, upper, step] : llvm::zip(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = b.createOrFold<arith::SubIOp>(upper, lower);
    total = b.createOrFold<arith::MulIOp>(
        total, b.createOrFold<arith::CeilDivUIOp>(span, step));
  }
  return total;
}

/// The body of `loop` as a nest of scf.for at the builder's point.
void sequentialCopy(ImplicitLocOpBuilder &b, scf::ParallelOp loop) {
  scf::buildLoopNest(
      b, b.getLoc(), loop.getLowerBound(), loop.getUpperBound(),
      loop.getStep(), [&](OpBuilder &nested, Location, ValueRange indices) {
        IRMapping mapping;
        mapping.map(loop.getInductionVars(), indices);
        for (Operation &op : loop.getBody()->without_terminator())
          nested.clone(op, mapping);
      });
}

struct SoacParallelLoopsByWork
    : soac::impl::SoacParallelLoopsByWorkBase<SoacParallelLoopsByWork> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (isTopLevelStraightLoop(loop))
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops) {
      ImplicitLocOpBuilder b(loop.getLoc(), loop);
      Value work = iterations(b, loop);
      if (soac::loops::tooLittleWork(work)) {
        sequentialCopy(b, loop);
        loop.erase();
        continue;
      }
      // A static count that reaches the threshold stays parallel as it is.
      if (getConstantIntValue(work))
        continue;
      auto choice = scf::IfOp::create(b, soac::loops::parallelPays(b, work),
                                      /*withElseRegion=*/true);
      b.setInsertionPointToStart(choice.elseBlock());
      sequentialCopy(b, loop);
      loop->moveBefore(choice.thenBlock()->getTerminator());
    }
    soac::loops::declareMaxThreads(getOperation());
  }
};

} // namespace
