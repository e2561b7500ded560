//===- Patterns.h - the lowering patterns, one file each --------*- C++ -*-===//
//
// Each lowering pattern of convert-soac-to-loops lives in the file named
// after it; these add them to a pattern set (SoacToLoops.cpp adds them all).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_PATTERNS_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_PATTERNS_H

#include "passes/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace soac::loops {

/// soac.map (MapToLoops.cpp).
void addMapToLoops(mlir::RewritePatternSet &patterns,
                   const ConvertSoacToLoopsOptions &options);
/// soac.reduce (ReduceToLoops.cpp).
void addReduceToLoops(mlir::RewritePatternSet &patterns,
                      const ConvertSoacToLoopsOptions &options);
/// soac.scan (ScanToLoops.cpp).
void addScanToLoops(mlir::RewritePatternSet &patterns,
                    const ConvertSoacToLoopsOptions &options);
/// soac.scatter and soac.reduce_by_index (ScatterToLoops.cpp).
void addScatterToLoops(mlir::RewritePatternSet &patterns,
                       const ConvertSoacToLoopsOptions &options);
/// soac.matmul (MatmulToLinalg.cpp).
void addMatmulToLinalg(mlir::RewritePatternSet &patterns);
/// soac.iota (IotaToLoops.cpp).
void addIotaToLoops(mlir::RewritePatternSet &patterns);
/// tensor.splat in loops (SplatToLoops.cpp).
void addSplatToLoops(mlir::RewritePatternSet &patterns,
                     const ConvertSoacToLoopsOptions &options);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_PATTERNS_H
