//===- DerivativeSignature.h - what a vjp or jvp takes and gives -*- C++ -*-===//
//
// The one definition of a derivative's signature, used by the verifiers of
// soac.vjp and soac.jvp, by both engines of soac-autodiff (the functions
// they generate, custom derivatives' expected types) and, through the
// Python extension, by soac.builders, soac.autodiff and soac.forward:
//
//   vjp: (args..., width cotangents per result)
//          -> (results..., width gradients per differentiated argument)
//   jvp: (args..., width tangents per differentiated argument)
//          -> (results..., width tangents per result)
//
// The lanes of one value are consecutive (value j, lane l at j·width + l).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_DIALECT_DERIVATIVESIGNATURE_H
#define SOAC_DIALECT_DERIVATIVESIGNATURE_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeRange.h"

#include <optional>
#include <string>

namespace soac {

/// Which derivative: soac.vjp (reverse mode) or soac.jvp (forward mode).
enum class DerivativeKind { Vjp, Jvp };

/// Whether a type carries derivatives: floats and tensors of floats.
bool isDifferentiableType(mlir::Type type);

/// The differentiated argument positions: `wrt`, or every argument.
llvm::SmallVector<int64_t> wrtPositions(std::optional<llvm::ArrayRef<int64_t>> wrt,
                                        size_t numArguments);

/// One operand or result of a derivative: its type and what it stands for.
struct DerivativeSlot {
  enum class Role { Argument, Result, Cotangent, Gradient, Tangent };
  mlir::Type type;
  Role role;
  /// The argument or result it stands for (gradients and tangents of
  /// arguments: the argument's position).
  int64_t of;
  /// Its lane in vector mode (0 for arguments and results).
  int64_t lane;
  /// Whether it stands for a result of the function (else an argument).
  bool ofResult;

  /// What it stands for, e.g. "cotangent of result #0 (lane 1)" (the lane
  /// only when `width` > 1).
  std::string describe(int64_t width) const;
};

/// The operands and results of a derivative of a function of type
/// (`arguments`) -> (`results`) with respect to the arguments at `wrt`
/// (valid positions), with `width` lanes.
struct DerivativeSignature {
  llvm::SmallVector<DerivativeSlot> inputs, outputs;
  /// How the inputs and the outputs are laid out, in words (for messages).
  std::string inputLayout, outputLayout;

  llvm::SmallVector<mlir::Type> inputTypes() const;
  llvm::SmallVector<mlir::Type> outputTypes() const;
};

DerivativeSignature getDerivativeSignature(DerivativeKind kind,
                                           mlir::TypeRange arguments,
                                           mlir::TypeRange results,
                                           llvm::ArrayRef<int64_t> wrt,
                                           int64_t width);

/// The function type of that derivative.
mlir::FunctionType getDerivativeType(DerivativeKind kind,
                                     mlir::FunctionType function,
                                     llvm::ArrayRef<int64_t> wrt,
                                     int64_t width);

} // namespace soac

#endif // SOAC_DIALECT_DERIVATIVESIGNATURE_H
