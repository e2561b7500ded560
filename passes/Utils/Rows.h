//===- Rows.h - reading and writing rows of tensors -------------*- C++ -*-===//
//
// The row of a rank-1 tensor is an element; of a rank-r tensor, the rank-(r-1)
// slice. Used by the lowering (SoacToLoops) and by the derivative rules.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_UTILS_ROWS_H
#define SOAC_PASSES_UTILS_ROWS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {

/// Row `i` of `tensor`: tensor.extract, or a rank-reducing tensor.extract_slice.
mlir::Value extractRow(mlir::ImplicitLocOpBuilder &b, mlir::Value tensor,
                       mlir::Value i);

/// `dest` with row `i` replaced by `row`: tensor.insert or tensor.insert_slice.
/// `rowSizes`, when given, are the row's sizes as known before the row was
/// computed (values that dominate it): the row can then be computed in place
/// in dest's slice (see empty-tensor elimination).
mlir::Value insertRow(mlir::ImplicitLocOpBuilder &b, mlir::Value row,
                      mlir::Value dest, mlir::Value i,
                      llvm::ArrayRef<mlir::OpFoldResult> rowSizes = {});

/// The sub-tensor of `tensor` at the leading `indices` (one index per leading
/// dimension; an element when they index every dimension): tensor.extract,
/// or a tensor.extract_slice dropping the indexed dimensions.
mlir::Value extractAt(mlir::ImplicitLocOpBuilder &b, mlir::Value tensor,
                      mlir::ValueRange indices);

/// `dest` with the sub-tensor at the leading `indices` replaced by `sub`
/// (shaped like extractAt's result): tensor.insert or tensor.insert_slice.
mlir::Value insertAt(mlir::ImplicitLocOpBuilder &b, mlir::Value sub,
                     mlir::Value dest, mlir::ValueRange indices);

/// A tensor.empty of `count` rows shaped like `row` (a scalar or a tensor).
mlir::Value emptyRows(mlir::ImplicitLocOpBuilder &b, mlir::Value count,
                      mlir::Value row);

} // namespace soac

#endif // SOAC_PASSES_UTILS_ROWS_H
