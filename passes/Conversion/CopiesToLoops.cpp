//===- CopiesToLoops.cpp - soac-copies-to-loops ---------------------------===//
//
// finalize-memref-to-llvm lowers a memref.copy to a memcpy only when both
// buffers have the identity layout; any other copy (a row of a 2-D buffer,
// a subview at a dynamic offset) becomes a call of the generic memrefCopy,
// which walks the descriptors' strides element by element. The checkpoints
// of a gradient's loops copy one row per iteration that way. A copy between
// 1-D buffers is a loop here instead, which LLVM inlines and vectorizes.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACCOPIESTOLOOPS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

struct CopyToLoop : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getRank() != 1 || target.getRank() != 1)
      return rewriter.notifyMatchFailure(copy, "not a copy between 1-D buffers");
    ImplicitLocOpBuilder b(copy.getLoc(), rewriter);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    Value size = memref::DimOp::create(b, copy.getSource(), 0);
    scf::ForOp::create(
        b, zero, size, one, ValueRange{},
        [&](OpBuilder &nested, Location loc, Value i, ValueRange) {
          Value element =
              memref::LoadOp::create(nested, loc, copy.getSource(), i);
          memref::StoreOp::create(nested, loc, element, copy.getTarget(), i);
          scf::YieldOp::create(nested, loc);
        });
    rewriter.eraseOp(copy);
    return success();
  }
};

struct SoacCopiesToLoopsPass
    : soac::impl::SoacCopiesToLoopsBase<SoacCopiesToLoopsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CopyToLoop>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
