//===- EmitCInterface.cpp - soac-emit-c-interface -------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace soac {
#define GEN_PASS_DEF_SOACEMITCINTERFACE
#include "passes/Passes.h.inc"
} // namespace soac

namespace {
struct SoacEmitCInterfacePass
    : soac::impl::SoacEmitCInterfaceBase<SoacEmitCInterfacePass> {
  void runOnOperation() override {
    mlir::UnitAttr unit = mlir::UnitAttr::get(&getContext());
    getOperation().walk([&](mlir::func::FuncOp fn) {
      if (fn.isPublic() && !fn.isExternal())
        fn->setAttr(mlir::LLVM::LLVMDialect::getEmitCWrapperAttrName(), unit);
    });
  }
};
} // namespace
