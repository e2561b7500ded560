//===- Loops.h - building blocks of the loops -------------------*- C++ -*-===//
//
// What every lowering pattern of convert-soac-to-loops builds with: index
// constants, loops over rows (marked as such), tensors tabulated row by row
// sequentially (scf.for), in parallel with scalar rows (linalg.generic) or
// with tensor rows (scf.forall), folds of a range of rows, and the run-time
// checks that rows fit where they are written.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOOPS_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOOPS_H

#include "passes/Conversion/SoacToLoops/RowReader.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::loops {

/// An `index` constant.
mlir::Value indexConstant(mlir::ImplicitLocOpBuilder &b, int64_t value);

/// Marks the scf.for loops this conversion creates over the rows of a SOAC
/// (folds, scans, scatters, sequential maps), and the scf.if running a map's
/// body on its first row for its row sizes: what runs inside runs per row.
inline constexpr llvm::StringLiteral kRowLoopAttr = "soac.row_loop";

/// `loop`, marked with kRowLoopAttr.
mlir::scf::ForOp markRowLoop(mlir::scf::ForOp loop);

/// True when `op` runs once per row of another SOAC (inside its body or
/// operator, before or after that SOAC is lowered): it is then lowered to
/// sequential loops, the enclosing op providing the parallelism. (A map
/// inside a reduce operator, parallel on its own, would start a parallel
/// region per row of the reduce.)
bool isNestedInParallelOp(mlir::Operation *op);

/// `tensor.empty` of `type` whose outer size is `outer` and whose other
/// dynamic sizes are `innerSizes` (in order).
mlir::Value emptyTensor(mlir::ImplicitLocOpBuilder &b,
                        mlir::RankedTensorType type, mlir::Value outer,
                        mlir::ValueRange innerSizes = {});

/// The body of a loop that computes row i of its results, given i.
using IndexedBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::ImplicitLocOpBuilder &, mlir::Value)>;

/// The body of a loop that writes row i of its outputs, given i and, for each
/// output that is `seeded` (it starts as an input's tensor, see seedInputs),
/// its row i as it is before the body writes it (null for the others).
using SeededBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::ImplicitLocOpBuilder &, mlir::Value, llvm::ArrayRef<mlir::Value>)>;

/// Row i of each seeded output (null for the others).
llvm::SmallVector<mlir::Value> seededRows(mlir::ImplicitLocOpBuilder &b,
                                          mlir::ValueRange outputs,
                                          llvm::ArrayRef<bool> seeded,
                                          mlir::Value i);

/// `outputs` with element i replaced by `body(i)` for i in [0, n), scalar
/// rows. Parallel: a linalg.generic with only outputs whose body reads what
/// it needs at linalg.index 0 (a seeded output's old element is its block
/// argument). Sequential: an scf.for inserting into the outputs.
llvm::SmallVector<mlir::Value>
tabulateInto(mlir::ImplicitLocOpBuilder &b, mlir::Value n,
             mlir::ValueRange outputs, llvm::ArrayRef<bool> seeded,
             bool parallel, SeededBody body);

/// Tensors `result[i] = body(i)` for i in [0, n), with scalar rows, in new
/// tensors.
llvm::SmallVector<mlir::Value> tabulate(mlir::ImplicitLocOpBuilder &b,
                                        mlir::Value n,
                                        mlir::TypeRange resultTypes,
                                        bool parallel, IndexedBody body);

/// Writes each row into its output at row `i` from an scf.forall body:
/// everything the inserts need is computed first, since the terminator
/// (scf.forall.in_parallel) may hold nothing but the inserts. Tensor rows
/// are written with `slotSizes` (their sizes past the outer dimension),
/// which they are checked to have.
void parallelInsertRows(
    mlir::ImplicitLocOpBuilder &b, mlir::ValueRange rows,
    mlir::ValueRange outputs, mlir::Value i,
    llvm::ArrayRef<llvm::SmallVector<mlir::OpFoldResult>> slotSizes);

/// `outputs` with row i replaced by `body(i)`, for i in [0, n) in parallel
/// (an scf.forall).
llvm::SmallVector<mlir::Value> forallRows(mlir::ImplicitLocOpBuilder &b,
                                          mlir::Value n,
                                          mlir::ValueRange outputs,
                                          llvm::ArrayRef<bool> seeded,
                                          SeededBody body);

/// Tensors `result[c] = body(c)` for c in [0, n) in parallel, whose rows have
/// the types and sizes of `likeRows` (tensors, or scalars among them: the
/// partial results of a reduce whose merged operands mix both).
llvm::SmallVector<mlir::Value>
tabulateTensorRows(mlir::ImplicitLocOpBuilder &b, mlir::Value n,
                   mlir::ValueRange likeRows, IndexedBody body);

/// Folds rows [lo, hi) into `accumulators` with the operator region `op`
/// (reassociable: see inlineBody).
llvm::SmallVector<mlir::Value> foldRange(mlir::ImplicitLocOpBuilder &b,
                                         mlir::Region &op,
                                         const RowReader &rows, mlir::Value lo,
                                         mlir::Value hi,
                                         mlir::ValueRange accumulators);

/// 1-D tensor types of dynamic size with the given element types.
llvm::SmallVector<mlir::Type> vectorTypes(mlir::TypeRange elementTypes);

/// Whether none of `types` is a tensor.
bool allScalar(mlir::TypeRange types);

/// "file:line:col: `what`", the message of a failed check at `loc`.
std::string checkMessage(mlir::Location loc, llvm::StringRef what);

/// A row written into `dest` must have the shape of dest's rows, which come
/// from row 0 (arrays are regular): a body yielding rows whose sizes depend
/// on the data would otherwise write past its slot. Dimensions static on
/// both sides were compared by the verifier.
void assertRowFits(mlir::ImplicitLocOpBuilder &b, mlir::Value row,
                   mlir::Value dest);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOOPS_H
