//===- SparseAdjoints.h - sparse adjoints of free tensors -------*- C++ -*-===//
//
// A tensor read at computed indices inside a scope that runs many times (a
// SOAC body, and a loop body inside one) gets a sparse adjoint: one
// (index, value) per read, never a dense tensor per run of the scope.
// This is Futhark's accumulator (`withacc`/`update_acc`) without a new type:
// the reads of a scope are yielded by its owner as a batch (a map's rows, a
// loop's iterations, stacked along a new outer dimension; a branch's, the
// other branch yielding zeros of their shape), which becomes one
// read batch of the enclosing scope, up to the scope where the tensor is
// defined (or a scope that runs once), where the batch is flattened and
// added by one reduce_by_index (+) (whose lowering computes the outermost
// map's rows one at a time: Utils/Bodies.h, stackedProducer).
//
// A batch is stacked over rows only when its shape is the same in every row
// (a map's rows must have one shape): a `BatchFactor` per dimension says
// what its size is made of, in terms of the original program, so that each
// owner can check that it is uniform (`liftBatch`) and a loop can allocate
// its records before it runs (`materializeBatchSizes`). Otherwise the scope
// adds its reads into a dense adjoint, as a scope that runs once does.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_SPARSEADJOINTS_H
#define SOAC_PASSES_AUTODIFF_ENGINE_SPARSEADJOINTS_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <optional>

namespace soac::autodiff {

class AdjointBuilder;

/// An index-valued extent of the original program: a static size, an index
/// or integer value, or dimension `dim` of tensor `value`.
struct Extent {
  enum class Kind { Static, Value, Dim } kind;
  int64_t size = 0;
  mlir::Value value;
  int64_t dim = 0;

  static Extent ofStatic(int64_t size) { return {Kind::Static, size, {}, 0}; }
  static Extent ofValue(mlir::Value v) { return {Kind::Value, 0, v, 0}; }
  static Extent ofDim(mlir::Value tensor, int64_t dim) {
    return {Kind::Dim, 0, tensor, dim};
  }
};

/// One factor of a batch's size: an extent (`parts` of size 1), or the trip
/// count of a loop (`parts` = lower bound, upper bound, step).
struct BatchFactor {
  llvm::SmallVector<Extent, 3> parts;
};

/// The adjoint of reads of `tensor` (an original value free in the scope
/// that holds it): `value` is added at `index`, a row-major position over
/// the leading dimensions of the tensor that `value` leaves out (a row: the
/// first; an element: all of them). One read: a scalar index and a scalar
/// or tensor `value`. A batch (`batch` not empty): a tensor of
/// indices with one dimension per factor of `batch`, and the values stacked
/// the same way (in dimensions of the same sizes, then the row's).
struct SparseAdjoint {
  mlir::Value tensor;
  mlir::Value index;
  mlir::Value value;
  llvm::SmallVector<BatchFactor> batch;
};

/// The factors of `batch` (values of `body`, the block of `owner`, or from
/// outside it) as values outside `body`, when its size is the same in every
/// run of `body`: static, from outside, a row size of the map's inputs, a
/// constant, the size of a map, scan or iota in `body` with uniform sizes.
std::optional<llvm::SmallVector<BatchFactor>>
liftBatch(llvm::ArrayRef<BatchFactor> batch, mlir::Operation *owner,
          mlir::Block &body);

/// The sizes of the dimensions of a batch with `batch` factors (lifted to
/// the scope of `a`), computed in that scope's forward code.
llvm::SmallVector<mlir::Value>
materializeBatchSizes(AdjointBuilder &a, llvm::ArrayRef<BatchFactor> batch);

/// A tensor for `part` (the index or the value) of `read`, in scope `a`: of
/// the `leading` sizes, then the shape of `part` past its batch dimensions
/// (a value's sub-tensor: the last dimensions of the tensor read).
/// Empty (tensor.empty, to be written), or filled with zeros (`zeros`; with
/// no leading size and a scalar `part`, a zero scalar).
mlir::Value buildRecord(AdjointBuilder &a, llvm::ArrayRef<mlir::Value> leading,
                        const SparseAdjoint &read, mlir::Value part,
                        bool zeros);

/// `reads` with the scalar reads of one tensor made one batch (their indices
/// and values stacked, built with `b`), so that the reads of one scope are
/// scattered by one reduce_by_index.
llvm::SmallVector<SparseAdjoint>
mergeScalarReads(mlir::ImplicitLocOpBuilder &b,
                 llvm::ArrayRef<SparseAdjoint> reads);

/// Adds `values` at `indices` (a tensor of indices as SparseAdjoint::index,
/// of any rank, the values stacked the same way) to the adjoint of tensor
/// `original` in scope `a` with one reduce_by_index (+) of the batch
/// flattened, into the adjoint so far (or zeros): of rows, or of sub-tensors
/// of the tensor with the leading dimensions they leave out merged.
void scatterIntoAdjoint(AdjointBuilder &a, mlir::Value original,
                        mlir::Value indices, mlir::Value values);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_SPARSEADJOINTS_H
