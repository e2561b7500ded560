//===- I1MemRefToLLVM.cpp - memref.load/store of i1 to LLVM ---------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Transforms/DialectConversion.h"

namespace soac {
#define GEN_PASS_DEF_CONVERTI1MEMREFTOLLVM
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

template <typename AccessOp>
bool accessesI1(AccessOp op) {
  return op.getMemRefType().getElementType().isInteger(1);
}

struct I1LoadLowering : ConvertOpToLLVMPattern<memref::LoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(memref::LoadOp load, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!accessesI1(load))
      return failure();
    Value address =
        getStridedElementPtr(rewriter, load.getLoc(), load.getMemRefType(),
                             adaptor.getMemref(), adaptor.getIndices());
    rewriter.replaceOpWithNewOp<LLVM::LoadOp>(load, rewriter.getI1Type(),
                                              address);
    return success();
  }
};

struct I1StoreLowering : ConvertOpToLLVMPattern<memref::StoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(memref::StoreOp store, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!accessesI1(store))
      return failure();
    Value address =
        getStridedElementPtr(rewriter, store.getLoc(), store.getMemRefType(),
                             adaptor.getMemref(), adaptor.getIndices());
    rewriter.replaceOpWithNewOp<LLVM::StoreOp>(store, adaptor.getValue(),
                                               address);
    return success();
  }
};

struct ConvertI1MemRefToLLVMPass
    : soac::impl::ConvertI1MemRefToLLVMBase<ConvertI1MemRefToLLVMPass> {
  void runOnOperation() override {
    LLVMTypeConverter converter(&getContext());
    RewritePatternSet patterns(&getContext());
    patterns.add<I1LoadLowering, I1StoreLowering>(converter);
    ConversionTarget target(getContext());
    target.addDynamicallyLegalOp<memref::LoadOp>(
        [](memref::LoadOp load) { return !accessesI1(load); });
    target.addDynamicallyLegalOp<memref::StoreOp>(
        [](memref::StoreOp store) { return !accessesI1(store); });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
