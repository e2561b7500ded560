//===- Builders.h - building soac ops from C++ callbacks --------*- C++ -*-===//
//
// The derivative rules build new SOACs whose bodies they write with C++
// lambdas; these helpers create the body block, call the lambda on its
// arguments, add the soac.yield and infer the result types.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_BUILDERS_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_BUILDERS_H

#include "dialect/SoacOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::autodiff {

using BodyBuilder = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::ImplicitLocOpBuilder &, mlir::ValueRange)>;

/// A detached SOAC body block with arguments of `argTypes`, filled by `body`
/// and ended by soac.yield of what it returns.
mlir::Block *buildBody(mlir::ImplicitLocOpBuilder &b, mlir::TypeRange argTypes,
                       BodyBuilder body);

/// soac.map over the rows of `inputs`; `body` gets one row per input and
/// returns the rows of the results.
llvm::SmallVector<mlir::Value> buildMap(mlir::ImplicitLocOpBuilder &b,
                                        mlir::ValueRange inputs,
                                        BodyBuilder body);

/// soac.reduce of `inputs` from `inits`; `op` gets the accumulators, then the
/// rows, and returns the new accumulators.
llvm::SmallVector<mlir::Value> buildReduce(mlir::ImplicitLocOpBuilder &b,
                                           mlir::ValueRange inputs,
                                           mlir::ValueRange inits,
                                           BodyBuilder op);

/// soac.scan of `inputs` from `inits`, operator as for buildReduce.
llvm::SmallVector<mlir::Value> buildScan(mlir::ImplicitLocOpBuilder &b,
                                         mlir::ValueRange inputs,
                                         mlir::ValueRange inits,
                                         BodyBuilder op);

/// soac.reduce_by_index of `values` into `dests` at `indices` from neutral
/// elements `inits`, operator as for buildReduce.
llvm::SmallVector<mlir::Value>
buildHistogram(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange dests,
               mlir::Value indices, mlir::ValueRange values,
               mlir::ValueRange inits, BodyBuilder op);

/// soac.reduce_by_index (+) of the rows of `values` into `dest` at `indices`
/// (scalar rows, or tensor rows added elementwise).
mlir::Value buildScatterAdd(mlir::ImplicitLocOpBuilder &b, mlir::Value dest,
                            mlir::Value indices, mlir::Value values);

/// x + y for floats, elementwise for tensors of floats (a map over rows,
/// which the lowering fuses into its consumers).
mlir::Value buildAdd(mlir::ImplicitLocOpBuilder &b, mlir::Value x,
                     mlir::Value y);

/// The sum of all elements of a tensor of floats (a scalar).
mlir::Value buildSumAll(mlir::ImplicitLocOpBuilder &b, mlir::Value tensor);

/// `value` as a value of `type`: a tensor.cast when both are tensors of the
/// same element type and rank but differ in which sizes are static (rules
/// infer static sizes from any operand, derivatives keep their value's type).
mlir::Value castToType(mlir::ImplicitLocOpBuilder &b, mlir::Value value,
                       mlir::Type type);

/// Zeros of `value`'s type (a float or integer scalar, or a tensor of its
/// shape).
mlir::Value buildZerosLike(mlir::ImplicitLocOpBuilder &b, mlir::Value value);

/// A float constant of type `type`.
mlir::Value floatConstant(mlir::ImplicitLocOpBuilder &b, mlir::Type type,
                          double value);

/// The outer size of a tensor, as an index value.
mlir::Value outerSize(mlir::ImplicitLocOpBuilder &b, mlir::Value tensor);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_BUILDERS_H
