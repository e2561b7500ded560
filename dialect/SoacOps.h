//===- SoacOps.h - soac operations ------------------------------*- C++ -*-===//
#ifndef SOAC_DIALECT_SOACOPS_H
#define SOAC_DIALECT_SOACOPS_H

#include "dialect/SoacDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialect/SoacOps.h.inc"

namespace soac {
/// The type of one row of a ranked tensor: its element type at rank 1,
/// otherwise the tensor of the remaining dimensions.
mlir::Type rowType(mlir::Type tensorType);
} // namespace soac

#endif // SOAC_DIALECT_SOACOPS_H
