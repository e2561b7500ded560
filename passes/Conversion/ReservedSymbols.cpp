//===- ReservedSymbols.cpp - user functions out of the C namespace --------===//
//
// Compiled code calls libm, libc and the soac runtimes by symbol name, and a
// definition in the same module with that name takes the call: a program's
// `@pow` calling `math.powf` recursed into itself. soac-rename-reserved-symbols
// moves such definitions to `soac.reserved.<name>` ('.' keeps the name out of
// C's namespace) before the math lowerings; soac-restore-interface-names gives
// their C interface wrappers back the name callers look up.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

namespace soac {
#define GEN_PASS_DEF_SOACRENAMERESERVEDSYMBOLS
#define GEN_PASS_DEF_SOACRESTOREINTERFACENAMES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kReservedPrefix = "soac.reserved.";
constexpr llvm::StringLiteral kInterfacePrefix = "_mlir_ciface_";

/// The C library functions lowered code may call by name: libm (each in its
/// double, float and long double spelling: LLVM emits `powf` for an f32
/// `llvm.pow`) and the allocation and memory functions of libc.
const llvm::StringSet<> &cLibraryNames() {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> set;
    static const char *const math[] = {
        "acos",  "acosh", "asin",      "asinh", "atan",  "atan2", "atanh",
        "cbrt",  "ceil",  "copysign",  "cos",   "cosh",  "erf",   "erfc",
        "exp",   "exp10", "exp2",      "expm1", "fabs",  "fdim",  "floor",
        "fma",   "fmax",  "fmin",      "fmod",  "frexp", "hypot", "ilogb",
        "ldexp", "lgamma", "llrint",   "llround", "log", "log10", "log1p",
        "log2",  "logb",  "lrint",     "lround", "modf", "nan",   "nearbyint",
        "nextafter", "pow", "remainder", "rint", "round", "roundeven",
        "scalbn", "sin",  "sincos",    "sinh",  "sqrt",  "tan",   "tanh",
        "tgamma", "trunc"};
    for (const char *name : math)
      for (const char *suffix : {"", "f", "l"})
        set.insert((llvm::Twine(name) + suffix).str());
    static const char *const libc[] = {
        "abort",  "aligned_alloc", "calloc", "exit",   "free",  "malloc",
        "memcmp", "memcpy",        "memmove", "memset", "posix_memalign",
        "printf", "puts",          "realloc"};
    for (const char *name : libc)
      set.insert(name);
    return set;
  }();
  return names;
}

/// Whether a definition named `name` would take calls meant for a library:
/// the C library's, or the runtimes' (soac's, MLIR's ABI and GPU launches,
/// OpenMP's).
bool isReserved(StringRef name) {
  return cLibraryNames().contains(name) || name.starts_with("soac_") ||
         name.starts_with("_mlir_") || name.starts_with("mgpu") ||
         name.starts_with("__kmpc_") || name.starts_with("omp_");
}

struct RenameReservedSymbols
    : soac::impl::SoacRenameReservedSymbolsBase<RenameReservedSymbols> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Declarations are the library functions themselves: only definitions
    // (functions of the program) move.
    SmallVector<func::FuncOp> reserved;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && isReserved(function.getSymName()))
        reserved.push_back(function);
    for (func::FuncOp function : reserved) {
      std::string renamed = (kReservedPrefix + function.getSymName()).str();
      if (symbols.lookup(renamed)) {
        function.emitError() << "cannot move '" << function.getSymName()
                             << "' out of the C library's names: '" << renamed
                             << "' is taken";
        return signalPassFailure();
      }
      if (failed(symbols.rename(function, StringAttr::get(&getContext(),
                                                          renamed))))
        return signalPassFailure();
    }
  }
};

struct RestoreInterfaceNames
    : soac::impl::SoacRestoreInterfaceNamesBase<RestoreInterfaceNames> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    std::string renamedInterface = (kInterfacePrefix + kReservedPrefix).str();
    SmallVector<LLVM::LLVMFuncOp> wrappers;
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (function.getSymName().starts_with(renamedInterface))
        wrappers.push_back(function);
    for (LLVM::LLVMFuncOp wrapper : wrappers) {
      std::string original =
          (kInterfacePrefix +
           wrapper.getSymName().drop_front(renamedInterface.size()))
              .str();
      if (failed(symbols.rename(wrapper,
                                StringAttr::get(&getContext(), original))))
        return signalPassFailure();
    }
  }
};

} // namespace
