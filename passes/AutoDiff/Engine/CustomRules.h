//===- CustomRules.h - derivatives given by the user ------------*- C++ -*-===//
//
// A function can name its own derivatives, used instead of differentiating
// its body (numerically delicate code, code with no rule):
//
//   func.func @f(...) attributes {soac.custom_vjp = @f_vjp, soac.custom_jvp = @f_jvp}
//
// @f_vjp: (args..., one cotangent per result) -> (results..., one gradient
//         per float argument of @f, in order);
// @f_jvp: (args..., one tangent per float argument of @f, in order)
//         -> (results..., one tangent per result).
//
// That is, the signatures of soac.vjp and soac.jvp of @f with respect to its
// float arguments, one lane (dialect/DerivativeSignature.h).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_CUSTOMRULES_H
#define SOAC_PASSES_AUTODIFF_ENGINE_CUSTOMRULES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace soac::autodiff {

inline constexpr llvm::StringLiteral kCustomVjpAttr = "soac.custom_vjp";
inline constexpr llvm::StringLiteral kCustomJvpAttr = "soac.custom_jvp";

/// Fills the entry block of `vjp`, the vjp function of `function` with
/// respect to `wrt` with `width` lanes, with calls to the custom vjp
/// `function` names (one per lane). Errors at `function` when the custom
/// function is missing or has the wrong signature.
mlir::LogicalResult buildCustomVjp(mlir::func::FuncOp function,
                                   llvm::ArrayRef<int64_t> wrt, unsigned width,
                                   mlir::func::FuncOp vjp,
                                   mlir::SymbolTableCollection &symbols);

/// Fills the entry block of `jvp`, the jvp function of `function` with respect to `wrt` with
/// `width` lanes, with calls to the custom jvp (one per lane; the float
/// arguments outside `wrt` get zero tangents).
mlir::LogicalResult buildCustomJvp(mlir::func::FuncOp function,
                                   llvm::ArrayRef<int64_t> wrt, unsigned width,
                                   mlir::func::FuncOp jvp,
                                   mlir::SymbolTableCollection &symbols);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_CUSTOMRULES_H
