//===- SoacToLoops.cpp - soac ops to linalg/scf/tensor loops --------------===//
//
// Every soac op becomes loops over its outer dimension, still on tensors. Bodies
// are cloned into the loops (never moved), so one mechanism serves both the op's
// own body and the body of a map fused into it (see RowReader).
//
// The pass and populateSoacToLoopsPatterns; the rest of this folder, one job
// per file:
//
//   LoweringOrder.h   when a SOAC may be lowered: the contract between the
//                     fusion patterns and the lowering patterns
//   <Op>ToLoops.cpp   one lowering pattern per op (Patterns.h): MapToLoops,
//                     ReduceToLoops, ScanToLoops, ScatterToLoops (scatter and
//                     reduce_by_index), IotaToLoops, SplatToLoops;
//                     MatmulToLinalg (a product stays a linalg.matmul)
//   RowReader.h       reading rows of tensors, recomputing fused maps' rows
//   Loops.h           building blocks: loops over rows, tabulation, folds,
//                     run-time checks of row sizes
//   Parallelism.h     parallel loops only when they pay; chunks
//   InPlace.h         results computed in the tensors they replace
//   Redomap.h         a reduce folded in its map's loop
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/SoacToLoops.h"

#include "passes/Conversion/SoacToLoops/InPlace.h"
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"
#include "passes/Conversion/SoacToLoops/Patterns.h"
#include "passes/Transforms/FuseMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_CONVERTSOACTOLOOPS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

struct ConvertSoacToLoopsPass
    : soac::impl::ConvertSoacToLoopsBase<ConvertSoacToLoopsPass> {
  using ConvertSoacToLoopsBase::ConvertSoacToLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Derivatives must be expanded first; say so instead of leaving them.
    WalkResult unexpanded = module.walk([](Operation *op) {
      if (isa<VjpOp, JvpOp>(op)) {
        op->emitOpError() << "must be expanded by the soac-autodiff pass "
                             "before lowering to loops";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unexpanded.wasInterrupted())
      return signalPassFailure();
    // finalize-memref-to-llvm (MLIR 22.1) asserts on memory of integers
    // narrower than a byte; i1 is handled by convert-i1-memref-to-llvm.
    WalkResult narrow = module.walk([](Operation *op) {
      for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                                op->getResultTypes())) {
        auto shaped = dyn_cast<ShapedType>(type);
        auto integer =
            shaped ? dyn_cast<IntegerType>(shaped.getElementType()) : nullptr;
        if (integer && integer.getWidth() > 1 && integer.getWidth() < 8) {
          op->emitOpError() << "uses " << type
                            << ": tensors of integers narrower than 8 bits "
                               "(other than i1) are not supported by the CPU "
                               "lowering";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (narrow.wasInterrupted())
      return signalPassFailure();
    // One-shot bufferization asserts on a dimension past the rank.
    if (failed(verifyDimIndices(module)))
      return signalPassFailure();
    if (numChunks < 1) {
      module.emitError() << "num-chunks must be at least 1, got "
                       << static_cast<int64_t>(numChunks);
      return signalPassFailure();
    }

    RewritePatternSet patterns(&getContext());
    populateSoacToLoopsPatterns(patterns, {numChunks, openmp});
    if (failed(applyPatternsGreedily(module, std::move(patterns)))) {
      module.emitError() << "convert-soac-to-loops did not converge";
      return signalPassFailure();
    }
    declareMaxThreads(module);
    checkRowsComputedInPlace(module);
    // Checks stay, for soac-lower-checks.
    WalkResult leftover = module.walk([](Operation *op) {
      if (isa<SoacDialect>(op->getDialect()) &&
          !isa<CheckIndexOp, CheckOp>(op)) {
        op->emitOpError() << "could not be lowered to loops";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void soac::populateSoacToLoopsPatterns(
    RewritePatternSet &patterns, const ConvertSoacToLoopsOptions &options) {
  // Maps are fused, and siblings merged, before any of them is lowered, so
  // that a map read by several SOACs fuses into them instead of being
  // materialized.
  populateMapFusionPatterns(patterns, kMapFusionBenefit);
  addScatterToLoops(patterns, options);
  addIotaToLoops(patterns);
  addMatmulToLinalg(patterns);
  addMapToLoops(patterns, options);
  addReduceToLoops(patterns, options);
  addScanToLoops(patterns, options);
  addSplatToLoops(patterns, options);
}
