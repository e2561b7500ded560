//===- AllocationFunctions.cpp - what LLVM may assume of allocations -----===//
//
// soac-mark-allocation-functions: see its description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace soac {
#define GEN_PASS_DEF_SOACMARKALLOCATIONFUNCTIONS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// One of the runtime's functions that finalize-memref-to-llvm calls
/// (generic functions), as the runtime defines it.
struct RuntimeFunction {
  llvm::StringLiteral name;
  /// "allocation" (its result gets noalias) or "deallocation" (its
  /// argument gets nocapture).
  llvm::StringLiteral role;
  /// The signature it must be declared with, and how errors spell it.
  LLVM::LLVMFunctionType type;
  llvm::StringLiteral spelled;
};

struct MarkAllocationFunctions
    : soac::impl::SoacMarkAllocationFunctionsBase<MarkAllocationFunctions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Type pointer = LLVM::LLVMPointerType::get(context);
    Type i64 = IntegerType::get(context, 64);
    Type none = LLVM::LLVMVoidType::get(context);
    // The allocations return memory no live buffer uses, as malloc does. The
    // free, as C's: the buffer is dead once freed, so that the call keeps no
    // copy of its pointer that LLVM must reckon with. A free inside a loop
    // (a thread's temporaries, allocated per chunk of a parallel loop)
    // otherwise counts as a capture before the next iteration's accesses,
    // and the buffer may then alias any pointer loaded there.
    const RuntimeFunction functions[] = {
        {"_mlir_memref_to_llvm_alloc", "allocation",
         LLVM::LLVMFunctionType::get(pointer, {i64}), "(i64) -> !llvm.ptr"},
        {"_mlir_memref_to_llvm_aligned_alloc", "allocation",
         LLVM::LLVMFunctionType::get(pointer, {i64, i64}),
         "(i64, i64) -> !llvm.ptr"},
        {"_mlir_memref_to_llvm_free", "deallocation",
         LLVM::LLVMFunctionType::get(none, {pointer}), "(!llvm.ptr) -> ()"}};
    for (const RuntimeFunction &expected : functions) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(expected.name);
      if (!function)
        continue;
      if (!function.isExternal() ||
          function.getFunctionType() != expected.type) {
        function.emitOpError()
            << "is the runtime's " << expected.role
            << " function: it must be declared " << expected.spelled
            << ", as the runtime defines it";
        return signalPassFailure();
      }
      if (expected.role == "allocation")
        function.setResultAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                               UnitAttr::get(context));
      else
        function.setArgAttr(0, LLVM::LLVMDialect::getNoCaptureAttrName(),
                            UnitAttr::get(context));
    }
  }
};

} // namespace
