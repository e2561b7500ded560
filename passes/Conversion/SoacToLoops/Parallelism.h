//===- Parallelism.h - parallel loops only when they pay --------*- C++ -*-===//
//
// A top-level SOAC runs in parallel only when its work and the thread count
// make it pay (an scf.if chooses at run time); a reduce or scan is cut into
// chunks folded in parallel, then combined in order.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_PARALLELISM_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_PARALLELISM_H

#include "passes/Conversion/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::loops {

/// Elements a parallel loop must process to repay entering a parallel region
/// (microseconds of waking and joining threads): below, a sequential loop
/// runs instead. Sizes are dynamic, so the choice is made at run time.
inline constexpr int64_t kMinParallelWork = 1 << 14;

/// The OpenMP runtime's thread count (what soac.set_num_threads sets), asked
/// of libiomp5 by soac's runtime (runtime/soac_openmp.c: by name,
/// omp_get_max_threads may resolve to another OpenMP runtime); declared in
/// the module by the pass once a pattern has called it.
inline constexpr llvm::StringLiteral kMaxThreadsFunction =
    "soac_omp_max_threads";

/// The number of threads parallel loops will run on, as an index.
mlir::Value maxThreads(mlir::ImplicitLocOpBuilder &b);

/// Declares kMaxThreadsFunction (provided by the OpenMP runtime) when the
/// lowering called it.
void declareMaxThreads(mlir::ModuleOp module);

/// Whether `work` is a constant below kMinParallelWork: a parallel form
/// would never run, so it is not built (static sizes: D-LSTM's gradient has
/// 14-lane histograms in its time loops).
bool tooLittleWork(mlir::Value work);

/// Whether a parallel form pays at run time: `work` (elements) reaches
/// kMinParallelWork and there is more than one thread (an i1).
mlir::Value parallelPays(mlir::ImplicitLocOpBuilder &b, mlir::Value work);

/// An scf.if running `build(parallel = true)` when `work` (elements) reaches
/// kMinParallelWork and there is more than one thread, else
/// `build(parallel = false)`: on one thread the parallel forms would only
/// add their costs (chunk partials, an OpenMP region per loop). Without
/// OpenMP, or with tooLittleWork, only `build(false)`.
llvm::SmallVector<mlir::Value>
chooseByWork(mlir::ImplicitLocOpBuilder &b,
             const ConvertSoacToLoopsOptions &options, mlir::Value work,
             mlir::TypeRange types,
             llvm::function_ref<llvm::SmallVector<mlir::Value>(bool parallel)>
                 build);

/// `n` times the number of elements of `tensor` from dimension `fromDim`
/// on: the work of n rows shaped like `tensor` (fromDim 0) or like its rows
/// (fromDim 1); a constant when all those sizes are static.
mlir::Value timesElements(mlir::ImplicitLocOpBuilder &b, mlir::Value n,
                          mlir::Value tensor, int64_t fromDim);

/// The work of a SOAC over `n` rows of `tensors`, as far as the rows it
/// reads tell: n times the elements of a tensor row, or n.
mlir::Value rowWork(mlir::ImplicitLocOpBuilder &b, mlir::ValueRange tensors,
                    mlir::Operation *consumer, mlir::Value n);

/// The bounds of chunk `c` of `n` rows cut into chunks of `chunkSize`.
std::pair<mlir::Value, mlir::Value> chunkBounds(mlir::ImplicitLocOpBuilder &b,
                                                mlir::Value c,
                                                mlir::Value chunkSize,
                                                mlir::Value n);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_PARALLELISM_H
