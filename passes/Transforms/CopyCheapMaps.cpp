//===- CopyCheapMaps.cpp - soac-copy-cheap-maps ----------------------------===//
//
// A cheap map of scalars read by several SOACs gets a copy per reader, so
// that the GPU lowering, which fuses a map into the one SOAC reading it,
// computes it inside each reader's kernel rather than in a kernel of its
// own (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/FuseMaps.h"
#include "passes/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACCOPYCHEAPMAPS
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

struct SoacCopyCheapMapsPass
    : soac::impl::SoacCopyCheapMapsBase<SoacCopyCheapMapsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    soac::populateRecomputePerReaderPatterns(patterns, /*benefit=*/1,
                                             /*evenWhenMergeable=*/true);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
