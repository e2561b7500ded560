//===- InterfaceInlining.cpp - functions compiled inside their wrappers ---===//
//
// soac-inline-into-interfaces: see its description in Passes.td.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace soac {
#define GEN_PASS_DEF_SOACINLINEINTOINTERFACES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kInterfacePrefix = "_mlir_ciface_";

/// The fewest arguments (memref descriptors count their fields) at which
/// the call from the wrapper costs LLVM more than the function's own code
/// does; below, the function keeps its symbol for callers such as
/// mlir-runner, which calls `@main` through a wrapper of its own.
constexpr unsigned kManyArguments = 64;

struct InlineIntoInterfaces
    : soac::impl::SoacInlineIntoInterfacesBase<InlineIntoInterfaces> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto wrapper : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!wrapper.getSymName().starts_with(kInterfacePrefix))
        continue;
      auto function = symbols.lookup<LLVM::LLVMFuncOp>(
          wrapper.getSymName().drop_front(kInterfacePrefix.size()));
      if (!function || function.isExternal() ||
          function.getLinkage() != LLVM::Linkage::External ||
          function.getNumArguments() < kManyArguments)
        continue;
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(function, module);
      bool onlyFromWrapper =
          uses && llvm::all_of(*uses, [&](const SymbolTable::SymbolUse &use) {
            return wrapper->isAncestor(use.getUser());
          });
      if (!onlyFromWrapper)
        continue;
      function.setLinkage(LLVM::Linkage::Internal);
      function.setAlwaysInline(true);
    }
  }
};

} // namespace
