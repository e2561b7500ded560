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

/// ∂y/∂x and ∂y/∂p of y = x^p (math.powf), from the primals x, p and y:
/// p · x^(p-1) and y · log x, except where those formulas give NaN for a
/// finite derivative: ∂y/∂x = 0 where p = 0 (x^0 = 1 for every x, x = 0
/// included), and ∂y/∂p = 0 where y = 0 (x = 0 and p > 0: y is 0 for all p
/// near it). Elsewhere at x = 0 the formulas' values stand: ∂y/∂x is 1 for
/// p = 1, 0 for p > 1, +∞ for 0 < p < 1 (the one-sided derivative);
/// ∂y/∂p is -∞ for p = 0 and p < 0. For x < 0, ∂y/∂p is NaN (x^p is only
/// defined at integers p).
struct PowPartials {
  mlir::Value dx, dp;
};
PowPartials powPartials(mlir::ImplicitLocOpBuilder &b, mlir::Value x,
                        mlir::Value p, mlir::Value y);

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
