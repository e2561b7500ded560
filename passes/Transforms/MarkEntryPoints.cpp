//===- MarkEntryPoints.cpp - soac-mark-entry-points -----------------------===//
#include "passes/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace soac {
#define GEN_PASS_DEF_SOACMARKENTRYPOINTS
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {
struct SoacMarkEntryPointsPass
    : soac::impl::SoacMarkEntryPointsBase<SoacMarkEntryPointsPass> {
  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn.isPublic() || fn.isExternal())
        return;
      fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                  builder.getUnitAttr());
      for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes()))
        if (isa<TensorType>(type))
          fn.setArgAttr(i,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        builder.getBoolAttr(false));
    });
  }
};
} // namespace
