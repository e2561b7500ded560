//===- Loops.h - scf.for helpers for the loop rules -------------*- C++ -*-===//
#ifndef SOAC_PASSES_AUTODIFF_ENGINE_LOOPS_H
#define SOAC_PASSES_AUTODIFF_ENGINE_LOOPS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::autodiff {

/// `value` (index or integer) as a value of integer-like type `type`.
mlir::Value castInteger(mlir::ImplicitLocOpBuilder &b, mlir::Value value,
                        mlir::Type type);

/// The number of iterations of a loop with a positive step, as an index.
mlir::Value tripCount(mlir::ImplicitLocOpBuilder &b, mlir::Value lb,
                      mlir::Value ub, mlir::Value step);

/// The induction variable of iteration `k` (an index): lb + k · step.
mlir::Value inductionValue(mlir::ImplicitLocOpBuilder &b, mlir::Value lb,
                           mlir::Value step, mlir::Value k);

/// The attribute asking for a loop's checkpoints on `levels` nested levels.
constexpr llvm::StringLiteral kCheckpointLevelsAttr = "soac.checkpoint_levels";

/// Rewrites `loop` into `levels` nested loops of about N^(1/levels)
/// iterations each (N its trip count). Differentiated, each level keeps its
/// own checkpoints: memory about levels · N^(1/levels) loop states instead of
/// N, for re-executing every level but the outermost once more.
void stripMine(mlir::scf::ForOp loop, int64_t levels);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_LOOPS_H
