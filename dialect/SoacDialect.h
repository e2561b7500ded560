//===- SoacDialect.h - the soac dialect -------------------------*- C++ -*-===//
#ifndef SOAC_DIALECT_SOACDIALECT_H
#define SOAC_DIALECT_SOACDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialect/SoacDialect.h.inc"

namespace soac {
/// Adds every dialect soac defines to `registry`. The one entry point used by
/// soac-opt, the Python extension and the tests.
void registerSoacDialects(mlir::DialectRegistry &registry);
} // namespace soac

#endif // SOAC_DIALECT_SOACDIALECT_H
