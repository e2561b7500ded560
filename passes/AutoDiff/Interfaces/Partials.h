//===- Partials.h - derivatives of scalar math functions --------*- C++ -*-===//
//
// f'(x) of each unary function of the math dialect, shared by the reverse
// rules (x̄ += ȳ · f'(x)) and the forward rules (ẏ = ẋ · f'(x)).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_PARTIALS_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_PARTIALS_H

#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::autodiff {

/// Builds f'(x) for `op`, y = f(x, ...), from the primal `operands` (x first;
/// an integer exponent for fpowi) and the primal result `y`, where cheaper.
/// Returns null for piecewise-constant functions (floor, ceil, round, trunc).
mlir::Value unaryDerivative(mlir::Operation *op, mlir::ImplicitLocOpBuilder &b,
                            mlir::ValueRange operands, mlir::Value y);

/// Attaches `Model<Op>` to every op unaryDerivative knows.
template <template <typename> class Model>
void attachToUnaryMathOps(mlir::MLIRContext *context) {
  using namespace mlir::math;
  attachModels<Model, ExpOp, Exp2Op, ExpM1Op, LogOp, Log1pOp, Log2Op, Log10Op,
               SinOp, CosOp, TanOp, TanhOp, SinhOp, CoshOp, AtanOp, SqrtOp,
               RsqrtOp, AbsFOp, ErfOp, FPowIOp, FloorOp, CeilOp, RoundOp,
               RoundEvenOp, TruncOp>(context);
}

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_PARTIALS_H
