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
  }
};

} // namespace
