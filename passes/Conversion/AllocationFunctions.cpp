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

/// The functions finalize-memref-to-llvm calls for memref.alloc (generic
/// functions), which soac's runtime libraries implement, and how many i64
/// arguments each takes (a size; an alignment and a size).
constexpr std::pair<llvm::StringLiteral, unsigned> kAllocationFunctions[] = {
    {"_mlir_memref_to_llvm_alloc", 1},
    {"_mlir_memref_to_llvm_aligned_alloc", 2}};

/// The function finalize-memref-to-llvm calls for memref.dealloc.
constexpr llvm::StringLiteral kDeallocationFunction =
    "_mlir_memref_to_llvm_free";

/// Whether `function` is declared as the runtime defines it.
bool declaredAsTheRuntimes(LLVM::LLVMFuncOp function, unsigned arguments) {
  LLVM::LLVMFunctionType type = function.getFunctionType();
  return function.isExternal() && !type.isVarArg() &&
         type.getNumParams() == arguments &&
         llvm::all_of(type.getParams(),
                      [](Type param) { return param.isInteger(64); }) &&
         isa<LLVM::LLVMPointerType>(type.getReturnType());
}

struct MarkAllocationFunctions
    : soac::impl::SoacMarkAllocationFunctionsBase<MarkAllocationFunctions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [name, arguments] : kAllocationFunctions) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!function)
        continue;
      if (!declaredAsTheRuntimes(function, arguments)) {
        function.emitOpError()
            << "is the runtime's allocation function: it must be declared "
            << (arguments == 1 ? "(i64)" : "(i64, i64)")
            << " -> !llvm.ptr, as the runtime defines it";
        return signalPassFailure();
      }
      function.setResultAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                             UnitAttr::get(&getContext()));
    }
    // As with C's free: the buffer is dead once freed, so that the call
    // keeps no copy of its pointer that LLVM must reckon with. A free inside
    // a loop (a thread's temporaries, allocated per chunk of a parallel
    // loop) otherwise counts as a capture before the next iteration's
    // accesses, and the buffer may then alias any pointer loaded there.
    if (auto free = module.lookupSymbol<LLVM::LLVMFuncOp>(kDeallocationFunction)) {
      LLVM::LLVMFunctionType type = free.getFunctionType();
      if (!free.isExternal() || type.isVarArg() || type.getNumParams() != 1 ||
          !isa<LLVM::LLVMPointerType>(type.getParams()[0]) ||
          !isa<LLVM::LLVMVoidType>(type.getReturnType())) {
        free.emitOpError() << "is the runtime's deallocation function: it "
                           << "must be declared (!llvm.ptr) -> (), as the "
                           << "runtime defines it";
        return signalPassFailure();
      }
      free.setArgAttr(0, LLVM::LLVMDialect::getNoCaptureAttrName(),
                      UnitAttr::get(&getContext()));
    }
  }
};

} // namespace
