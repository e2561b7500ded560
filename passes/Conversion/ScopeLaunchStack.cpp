//===- ScopeLaunchStack.cpp - each kernel launch frees its stack ----------===//
//
// The LLVM translation of a host gpu.launch_func allocates the kernel's
// argument array with an alloca at the launch. In a loop that alloca is not
// in the entry block, so LLVM does not reuse it: every iteration takes more
// stack until the process overflows it (D-LSTM's gradient on a GPU did after
// some thousands of launches). Bracketing each launch with stacksave /
// stackrestore gives the arrays back when the launch returns.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace soac {
#define GEN_PASS_DEF_SOACSCOPELAUNCHSTACK
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

struct SoacScopeLaunchStack
    : soac::impl::SoacScopeLaunchStackBase<SoacScopeLaunchStack> {
  void runOnOperation() override {
    auto pointer = LLVM::LLVMPointerType::get(&getContext());
    WalkResult result = getOperation().walk([&](gpu::LaunchFuncOp launch) {
      if (!launch->getParentOfType<LLVM::LLVMFuncOp>()) {
        launch.emitOpError("is not in an llvm.func: soac-scope-launch-stack "
                           "runs after gpu-to-llvm");
        return WalkResult::interrupt();
      }
      OpBuilder b(launch);
      Value saved = LLVM::StackSaveOp::create(b, launch.getLoc(), pointer);
      b.setInsertionPointAfter(launch);
      LLVM::StackRestoreOp::create(b, launch.getLoc(), saved);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
