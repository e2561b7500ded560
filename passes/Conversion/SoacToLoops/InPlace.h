//===- InPlace.h - results computed in the tensors they replace -*- C++ -*-===//
//
// In-place updates: a map computes a result in the tensor of a loop-carried
// input that only it reads (seedInputs) or in the slice its result is
// inserted into (sliceComputedIn), and a row computed in its slot of a
// result is checked against the slot's sizes before it is computed
// (checkRowsComputedInPlace).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_INPLACE_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_INPLACE_H

#include "dialect/SoacOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::loops {

/// For each result of `map`, the tensor it is computed in, or null for a
/// new tensor: a loop-carried input of the same shape that only this map
/// reads, so that its row i is dead once row i of the result is computed
/// from it (`acc' = map (+) acc row` in a fold then updates the accumulator
/// in place instead of allocating and copying a new one per row); or the
/// slice of a tensor that the result is inserted back into, read by this
/// map or a map fused into it (see sliceReplaced in InPlace.cpp).
llvm::SmallVector<mlir::Value> seedInputs(MapOp map);

/// The slice of `result`'s one reader besides tensor.dims, a
/// tensor.insert_slice of it (unit strides, no dropped dimension,
/// everything but its source defined before `map`, into a destination
/// nothing else reads or writes), in which `map`
/// computes `result` (a tensor of `n` scalar rows)
/// instead of a new tensor; null otherwise. The slice's size is asserted to
/// be `n` before the rows are written. (Empty-tensor elimination does not do
/// this for maps: the parallel and the sequential loop of a map share its
/// tensor.empty, and it replaces the empty on one path only. A gradient's
/// slices, `.at[]` updates and concatenations insert maps' results so.)
mlir::Value sliceComputedIn(mlir::ImplicitLocOpBuilder &b, MapOp map,
                            mlir::Value result, mlir::Value n);

/// A row computed in place in its slot of a result (eliminate-empty-tensors
/// gives the row's tensor.empty the slot's sizes, known before the row) is
/// written with those sizes while the body computes it: a body whose rows
/// have sizes that depend on the data would write past the slot before
/// assertRowFits runs. So the sizes of such a tensor.empty are compared with
/// the slot's, before the row is computed.
void checkRowsComputedInPlace(mlir::ModuleOp module);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_INPLACE_H
