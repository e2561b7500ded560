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

/// The OpenMP runtime's thread count (what soac.set_num_threads sets),
/// declared in the module by the pass once a pattern has called it.
inline constexpr llvm::StringLiteral kMaxThreadsFunction =
    "omp_get_max_threads";

/// The run-time choice between a parallel loop and one thread:
/// `func.call @soac.parallel_pays(%work) : (index) -> i1` holds while the
/// SOACs are loops and their buffers are decided, and soac-parallel-choices
/// lowers it to `work >= kMinParallelWork && omp_get_max_threads() > 1`
/// once the loops are OpenMP regions. A call with the kSerializableAttr
/// attribute guards an scf.if whose parallel branch may run on one thread.
inline constexpr llvm::StringLiteral kParallelPaysFunction =
    "soac.parallel_pays";
inline constexpr llvm::StringLiteral kSerializableAttr = "soac.serializable";

/// The number of threads parallel loops will run on, as an index.
mlir::Value maxThreads(mlir::ImplicitLocOpBuilder &b);

/// Declares kMaxThreadsFunction (provided by the OpenMP runtime) and
/// kParallelPaysFunction where the module calls them.
void declareParallelismFunctions(mlir::ModuleOp module);

/// Whether `work` reaches kMinParallelWork elements.
mlir::Value enoughWork(mlir::ImplicitLocOpBuilder &b, mlir::Value work);

/// Whether `work` elements repay a parallel region on the threads there are.
mlir::Value parallelPays(mlir::ImplicitLocOpBuilder &b, mlir::Value work);

/// What runs when there is too little work for threads, or one thread.
enum class SmallWork {
  /// The sequential form, `build(false)`: the parallel form costs more on
  /// one thread (a scan's, which reads its rows twice).
  Sequential,
  /// The parallel form, its OpenMP regions run by the calling thread alone
  /// (`omp.parallel if`): it computes what the sequential form computes at
  /// the same cost (a map, a fill, a reduce cut into one chunk when the
  /// work is small), and LLVM compiles one copy of the loop instead of
  /// two. The sequential form stays an scf.if branch until
  /// soac-parallel-choices removes it, after bufferization.
  Serialized,
};

/// An scf.if on soac.parallel_pays(`work`) running `build(parallel = true)`
/// when the work repays a parallel region (kMinParallelWork elements, more
/// than one thread), else `build(parallel = false)`, which `small` says
/// what becomes of. Without OpenMP, only `build(false)`.
llvm::SmallVector<mlir::Value>
chooseByWork(mlir::ImplicitLocOpBuilder &b,
             const ConvertSoacToLoopsOptions &options, mlir::Value work,
             mlir::TypeRange types, SmallWork small,
             llvm::function_ref<llvm::SmallVector<mlir::Value>(bool parallel)>
                 build);

/// `n` times the number of elements of `tensor` from dimension `fromDim`
/// on: the work of n rows shaped like `tensor` (fromDim 0) or like its rows
/// (fromDim 1).
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
