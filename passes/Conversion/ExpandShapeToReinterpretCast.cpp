//===- ExpandShapeToReinterpretCast.cpp - expand_shape with many sizes ----===//
//
// memref.expand_shape names every size of its result (output_shape), but
// expand-strided-metadata in MLIR 22.1 recomputes the dynamic one of each
// reassociation group from the source size and asserts when a group has more
// than one (tensor<?x?xf32> from tensor<?xf32>). Such an expand_shape is
// rewritten here into the view it is: a memref.reinterpret_cast of the
// source's buffer with the sizes it names and the strides they imply.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {
#define GEN_PASS_DEF_SOACEXPANDSHAPETOREINTERPRETCAST
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

bool hasGroupWithSeveralDynamicSizes(memref::ExpandShapeOp expand) {
  MemRefType type = expand.getResultType();
  return llvm::any_of(expand.getReassociationIndices(),
                      [&](const ReassociationIndices &group) {
                        return llvm::count_if(group, [&](int64_t dim) {
                                 return type.isDynamicDim(dim);
                               }) > 1;
                      });
}

/// `value` as an OpFoldResult that is a constant where the result type
/// knows it statically (reinterpret_cast's verifier requires it there).
OpFoldResult staticWhereKnown(OpBuilder &b, int64_t known, Value value) {
  if (ShapedType::isDynamic(known))
    return value;
  return b.getIndexAttr(known);
}

void rewrite(memref::ExpandShapeOp expand) {
  ImplicitLocOpBuilder b(expand.getLoc(), expand);
  MemRefType type = expand.getResultType();
  auto [staticStrides, staticOffset] = type.getStridesAndOffset();
  auto source = memref::ExtractStridedMetadataOp::create(b, expand.getSrc());
  SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(type.getRank());
  // Within a group, a dimension's stride is the source dimension's times the
  // sizes of the dimensions after it in the group.
  for (auto [sourceDim, group] :
       llvm::enumerate(expand.getReassociationIndices())) {
    Value stride = source.getStrides()[sourceDim];
    for (int64_t dim : llvm::reverse(group)) {
      strides[dim] = staticWhereKnown(b, staticStrides[dim], stride);
      stride = b.createOrFold<arith::MulIOp>(
          stride, getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes[dim]));
    }
  }
  OpFoldResult offset = staticWhereKnown(b, staticOffset, source.getOffset());
  auto view = memref::ReinterpretCastOp::create(
      b, type, source.getBaseBuffer(), offset, sizes, strides);
  expand.replaceAllUsesWith(view.getResult());
  expand.erase();
}

struct SoacExpandShapeToReinterpretCastPass
    : soac::impl::SoacExpandShapeToReinterpretCastBase<
          SoacExpandShapeToReinterpretCastPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> expands;
    getOperation()->walk([&](memref::ExpandShapeOp expand) {
      if (hasGroupWithSeveralDynamicSizes(expand))
        expands.push_back(expand);
    });
    for (memref::ExpandShapeOp expand : expands)
      rewrite(expand);
  }
};

} // namespace
