//===- CopiesToLoops.cpp - soac-copies-to-loops ---------------------------===//
//
// finalize-memref-to-llvm lowers a memref.copy to a memcpy only when both
// buffers have the identity layout; any other copy (a row of a 2-D buffer,
// a subview at a dynamic offset) becomes a call of the generic memrefCopy,
// which walks the descriptors' strides element by element. The checkpoints
// of a gradient's loops copy one row per iteration that way. Such a copy,
// and any copy between 1-D buffers, is a loop nest here instead, which LLVM
// inlines and vectorizes. memrefCopy's call also took the buffers'
// descriptors through memory: LLVM then counted the buffers as captured,
// and a thread's accumulator copied out at the end of each chunk of a
// parallel loop could alias any pointer the next chunk loaded.
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

/// Whether finalize-memref-to-llvm lowers `copy` to a call of the generic
/// memrefCopy: a copy between buffers that do not both have the identity
/// layout.
bool copiesThroughTheRuntime(MemRefType source, MemRefType target) {
  return !source.getLayout().isIdentity() || !target.getLayout().isIdentity();
}

struct CopyToLoop : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!source || !target || source.getRank() == 0)
      return rewriter.notifyMatchFailure(copy, "not a copy between ranked buffers");
    if (source.getRank() > 1 && !copiesThroughTheRuntime(source, target))
      return rewriter.notifyMatchFailure(copy, "a memcpy already");
    ImplicitLocOpBuilder b(copy.getLoc(), rewriter);
    Value zero = arith::ConstantIndexOp::create(b, 0);
    Value one = arith::ConstantIndexOp::create(b, 1);
    SmallVector<Value> lower(source.getRank(), zero), steps(source.getRank(), one);
    SmallVector<Value> sizes;
    for (int64_t dim = 0; dim < source.getRank(); ++dim)
      sizes.push_back(memref::DimOp::create(b, copy.getSource(), dim));
    scf::buildLoopNest(b, b.getLoc(), lower, sizes, steps,
                       [&](OpBuilder &nested, Location loc, ValueRange indices) {
                         Value element = memref::LoadOp::create(
                             nested, loc, copy.getSource(), indices);
                         memref::StoreOp::create(nested, loc, element,
                                                 copy.getTarget(), indices);
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
