//===- SoacOps.h - soac operations ------------------------------*- C++ -*-===//
#ifndef SOAC_DIALECT_SOACOPS_H
#define SOAC_DIALECT_SOACOPS_H

#include "dialect/SoacDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/SoacOps.h.inc"

namespace soac {
/// The type of one row of a ranked tensor: its element type at rank 1,
/// otherwise the tensor of the remaining dimensions.
mlir::Type rowType(mlir::Type tensorType);

/// The one op of an operator body with two arguments (a reduce's or a
/// histogram's, one accumulator) that combines the two arguments, in either
/// order, and whose result the body yields; null for any other body.
mlir::Operation *combiningOp(mlir::Region &body);

/// A copy of `map`, built at `b`'s insertion point, that reads only the
/// inputs marked in `keepInputs` (the body must not read the others) and
/// yields only the results marked in `keepResults`.
MapOp copyMap(mlir::OpBuilder &b, MapOp map, llvm::ArrayRef<bool> keepInputs,
              llvm::ArrayRef<bool> keepResults);
/// Checks every op in `root`'s regions that reads a dimension of a ranked
/// value (tensor.dim, memref.dim) at a constant index: the index must be below
/// the rank. Upstream leaves such an op valid (undefined behavior when it
/// runs), but one-shot bufferization asserts on it and the GPU lowering reads
/// the source's shape at that index, so soac rejects it where it can: in the
/// bodies of SOACs (their verifiers; a SOAC nested in `root` checks its own),
/// and in whole functions before lowering them. Errors are at the op.
mlir::LogicalResult verifyDimIndices(mlir::Operation *root);
} // namespace soac

#endif // SOAC_DIALECT_SOACOPS_H
