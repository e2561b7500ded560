//===- RuntimeChecks.h - what the lowerings of run-time checks share ------===//
//
// Host checks (soac-lower-checks) and kernel checks (soac-lower-kernel-checks)
// both report to soac's runtime with a kind and a printf message that names
// the source location, and both keep a thread that found a failure from
// running what the check guarded: the rest of the check's block runs only
// when the check passed.
//
//===----------------------------------------------------------------------===//
#ifndef SOAC_PASSES_CONVERSION_RUNTIMECHECKS_H
#define SOAC_PASSES_CONVERSION_RUNTIMECHECKS_H

#include "dialect/SoacOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace soac::checks {

/// Kinds of failure, numbered as the runtime's soac_failure_kind
/// (runtime/soac_calls.h) and Python's error classes.
enum class FailureKind : int32_t { Check = 1, Index = 2, Memory = 3 };

/// The runtime functions compiled code calls, declared once per module, and
/// the constant strings it passes them.
class Runtime {
public:
  explicit Runtime(mlir::ModuleOp module) : module(module) {}

  /// `llvm.func @name(types) -> result`, declared on first use.
  mlir::LLVM::LLVMFuncOp function(llvm::StringRef name,
                                  llvm::ArrayRef<mlir::Type> arguments,
                                  mlir::Type result = {});

  /// `soac_report_error(kind, format, a, b)`, which stops the call and does
  /// not return, or `soac_record_error`, which records the failure and
  /// returns (for threads that cannot stop the call).
  mlir::LLVM::LLVMFuncOp reportFunction(bool stops);

  /// The address of a private constant global holding `text` and a NUL.
  mlir::Value string(mlir::OpBuilder &b, mlir::Location loc,
                     llvm::StringRef text);

  mlir::Type pointer();

private:
  mlir::ModuleOp module;
  /// The number of the next string's global (counted on first use).
  std::optional<unsigned> strings;
};

/// `text` with printf's `%` escaped.
std::string escapePercents(llvm::StringRef text);

/// What the message of a failed check at `loc` starts with: the source
/// location as `file:line:col: ` (printf's `%` escaped), or nothing.
std::string locationPrefix(mlir::Location loc);

/// The printf message of a failed soac.check_index, its index and size the
/// two `%lld`s.
std::string indexCheckMessage(soac::CheckIndexOp check);

/// What a check op asks: `ok` (built with `b` for a soac.check_index, whose
/// operands it compares), the kind of its failure, the printf message the
/// runtime reports, and the values (null: none) its `%lld`s show.
struct CheckedCondition {
  mlir::Value ok;
  FailureKind kind;
  std::string format;
  mlir::Value first, second;
};

/// The condition of `check`: a soac.check_index, soac.check or cf.assert.
CheckedCondition checkedCondition(mlir::OpBuilder &b, mlir::Operation *check);

/// Whether `op` is a check checkedCondition reads.
bool isCheck(mlir::Operation *op);

/// `value` as the i64 the runtime's report functions take (0 when null).
mlir::Value asI64(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// The ops from `first` up to `end` (or the block's terminator), `end`
/// excluded.
llvm::SmallVector<mlir::Operation *> opsUntil(mlir::Operation *first,
                                              mlir::Operation *end = nullptr);

/// Whether `ops` (consecutive, in one block) can run under `scf.if %ok`:
/// every value they yield to the rest of the program has a zero for when
/// they are skipped.
bool canGuard(llvm::ArrayRef<mlir::Operation *> ops);

/// Moves `ops` (consecutive, in one block) into `scf.if %ok`, whose results
/// (zeros when `ok` is false) replace the values they yield to the rest of
/// the program.
void guard(llvm::ArrayRef<mlir::Operation *> ops, mlir::Value ok,
           mlir::Location loc);

} // namespace soac::checks

#endif // SOAC_PASSES_CONVERSION_RUNTIMECHECKS_H
