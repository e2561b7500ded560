//===- RowReader.h - rows of tensors and of fused maps ----------*- C++ -*-===//
//
// A consumer reads row i of its operand tensors; a map whose rows only that
// consumer reads (fusableProducer, Utils/Bodies.h) is not materialized: its
// rows are recomputed from the rows of its own inputs, recursively.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWREADER_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWREADER_H

#include "dialect/SoacOps.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace soac::loops {

/// Reads row `i` of a consumer's operand tensors. Rows of a fusable map's
/// result are recomputed from the rows of the map's inputs (recursively), so
/// the map's result tensor is never materialized.
class RowReader {
public:
  RowReader(mlir::ValueRange tensors, mlir::Operation *consumer)
      : tensors(tensors), consumer(consumer) {}

  /// The common outer size of the tensors read, looked up through fused maps
  /// (reading a fused map's result size would keep the map alive). Sizes that
  /// may differ at run time are compared: a mismatch stops the call with a
  /// message naming the op instead of reading out of bounds (a failed
  /// cf.assert: soac-lower-checks on the CPU).
  mlir::Value size(mlir::ImplicitLocOpBuilder &b) const;

  /// Row `i` of each tensor; `known` has rows the caller already has of
  /// tensors read (inputs, or those of fused maps: see seedInputs), taken
  /// instead of read.
  llvm::SmallVector<mlir::Value>
  rowsAt(mlir::ImplicitLocOpBuilder &b, mlir::Value i,
         const llvm::DenseMap<mlir::Value, mlir::Value> &known = {}) const;

  /// The fused maps, erased once the consumer is replaced.
  llvm::SmallVector<MapOp> fusedMaps() const;

private:
  /// The outer size of each tensor actually read: fused maps contribute the
  /// sizes of their own inputs, once per map (`visited`) however many of its
  /// results are read: a vector-mode reduce reads the k+1 results of one map
  /// of k+1 inputs, and compared (k+1)² sizes.
  static void collectSizes(mlir::ImplicitLocOpBuilder &b,
                           mlir::ValueRange tensors, mlir::Operation *consumer,
                           llvm::SmallVector<mlir::Value> &sizes,
                           llvm::SmallPtrSetImpl<mlir::Operation *> &visited);
  std::string mismatchMessage() const;
  static mlir::Value
  rowOf(mlir::ImplicitLocOpBuilder &b, mlir::Value tensor,
        mlir::Operation *consumer, mlir::Value i,
        const llvm::DenseMap<mlir::Value, mlir::Value> &known,
        llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::Value>>
            &fusedRows);
  static void collectFused(mlir::ValueRange tensors, mlir::Operation *consumer,
                           llvm::SmallVector<MapOp> &maps);

  llvm::SmallVector<mlir::Value> tensors;
  mlir::Operation *consumer;
};

/// Replaces the results of `op` (a null replacement: a result nobody reads
/// any more), erases it and the maps fused into it.
void replaceAndEraseFused(mlir::PatternRewriter &rewriter, mlir::Operation *op,
                          mlir::ValueRange replacements,
                          const RowReader &rows);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWREADER_H
