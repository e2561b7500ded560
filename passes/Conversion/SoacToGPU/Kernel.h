//===- Kernel.h - building gpu.launch kernels from SOACs --------*- C++ -*-===//
//
// The host side stays on tensors: a SOAC becomes kernels (gpu.launch on
// memrefs) between bufferization.to_buffer of the tensors it reads and
// bufferization.to_tensor of the buffers it writes, so that one-shot
// bufferization lowers the rest of the function as usual. Inside a kernel
// there are only scalars and buffers: tensor.extract / tensor.dim of a tensor
// read by the kernel become memref.load / memref.dim of its buffer.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_KERNEL_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_KERNEL_H

#include "dialect/SoacOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::kernels {

/// Threads per block of every kernel (a multiple of the warp size).
constexpr int64_t kBlockSize = 256;
constexpr int64_t kWarpSize = 32;
constexpr int64_t kWarpsPerBlock = kBlockSize / kWarpSize;

/// Succeeds when `region` (a SOAC body or operator) can run inside a kernel:
/// its values are scalars, and it reads tensors defined outside it only with
/// tensor.extract and tensor.dim. Otherwise emits an error at `soacOp` naming
/// the op that cannot.
mlir::LogicalResult checkScalarCode(mlir::Region &region,
                                    mlir::Operation *soacOp);

/// True when `value` is defined inside `map`'s body (at any depth).
bool definedIn(MapOp map, mlir::Value value);
/// True when some op in `region` has a tensor result (a nested SOAC...).
bool computesTensors(mlir::Region &region);
/// The scalar operator of an operator `op` (of a reduce or reduce_by_index)
/// that combines its two tensor arguments elementwise: `soac.map ins(%a, %b)`,
/// nested once per dimension, around a scalar body, as the derivatives of
/// maps over rows make them. Null for any other operator.
mlir::Region *elementwiseScalarOperator(mlir::Region &op);
/// The operator a kernel runs on scalars for a reduce or reduce_by_index:
/// its body when its rows are scalars, the scalar body of an elementwise
/// operator when they are vectors (one input); null otherwise.
mlir::Region *scalarOperator(ReduceOp reduce);
mlir::Region *scalarOperator(ReduceByIndexOp histogram);

/// The tensors a SOAC's kernels read, as buffers on the host side.
class Buffers {
public:
  /// The buffer of `tensor`, made at the host builder's insertion point the
  /// first time (a constant is copied into memory the GPU can read).
  mlir::Value of(mlir::ImplicitLocOpBuilder &host, mlir::Value tensor);
  /// Buffers every tensor used in `region` and defined outside it.
  void addFreeTensors(mlir::ImplicitLocOpBuilder &host, mlir::Region &region);
  /// Replaces tensor.extract / tensor.dim of buffered tensors in `launch` by
  /// memref.load / memref.dim of their buffers.
  void rewriteReads(mlir::gpu::LaunchOp launch) const;

private:
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
};

/// Reads element `i` of 1-D tensors inside a kernel. An element of a map's
/// result that only this SOAC reads is recomputed from the map's inputs
/// (recursively): `reduce (+) (map f xs)` reads `xs` once and writes nothing.
class ElementReader {
public:
  /// Buffers (on the host side) what reading `tensors` needs.
  ElementReader(mlir::ImplicitLocOpBuilder &host, Buffers &buffers,
                mlir::ValueRange tensors, mlir::Operation *consumer);

  /// The common outer size, from a tensor actually read (host side).
  mlir::Value size(mlir::ImplicitLocOpBuilder &host) const;
  /// Element `i` of each tensor (kernel side).
  llvm::SmallVector<mlir::Value> read(mlir::ImplicitLocOpBuilder &b,
                                      mlir::Value i) const;
  /// The maps recomputed in the kernel, erased with the consumer.
  llvm::SmallVector<MapOp> fusedMaps() const;

private:
  void prepare(mlir::ImplicitLocOpBuilder &host, Buffers &buffers,
               mlir::ValueRange tensors, mlir::Operation *consumer);

  llvm::SmallVector<mlir::Value> tensors;
  mlir::Operation *consumer;
  llvm::SmallVector<MapOp> fused;
  mlir::Value firstLeaf;
};

/// The map producing `tensor` when `consumer` recomputes its elements.
MapOp fusedScalarMap(mlir::Value tensor, mlir::Operation *consumer);

/// Ids of the running thread, at the start of a kernel's body.
struct ThreadIds {
  mlir::Value thread; // in the block
  mlir::Value block;
  mlir::Value global; // block * kBlockSize + thread
  mlir::Value count;  // threads in the grid
};

/// A gpu.launch of `blocks` blocks of `blockSize` threads on the host
/// builder's insertion point, with one workgroup buffer per type of
/// `workgroup` (memrefs in workgroup memory). `body` fills it; reads of
/// buffered tensors are then rewritten (see Buffers::rewriteReads).
mlir::gpu::LaunchOp
launchKernel(mlir::ImplicitLocOpBuilder &host, mlir::Value blocks,
             mlir::TypeRange workgroup, const Buffers &buffers,
             llvm::function_ref<void(mlir::ImplicitLocOpBuilder &,
                                     const ThreadIds &, mlir::ValueRange)>
                 body,
             int64_t blockSize = kBlockSize);

/// A new buffer for a tensor of `type` with the given dynamic sizes.
mlir::Value allocBuffer(mlir::ImplicitLocOpBuilder &host,
                        mlir::RankedTensorType type,
                        mlir::ValueRange dynamicSizes);
/// The tensor whose contents a kernel wrote into `buffer`.
mlir::Value asTensor(mlir::ImplicitLocOpBuilder &host, mlir::Value buffer,
                     mlir::Type tensorType);

/// The tensors of `types` whose contents kernels wrote into `buffers`.
llvm::SmallVector<mlir::Value> asTensors(mlir::ImplicitLocOpBuilder &host,
                                         mlir::ValueRange buffers,
                                         mlir::TypeRange types);
/// Replaces the SOAC `op` by `results` and erases the maps its kernels
/// recomputed (`reader`'s fused maps, if any).
void replaceSoac(mlir::Operation *op, mlir::ValueRange results,
                 const ElementReader *reader);
/// The sizes of `tensor` on the host (constants where static).
llvm::SmallVector<mlir::Value> sizesOf(mlir::ImplicitLocOpBuilder &host,
                                       mlir::Value tensor);
/// True in thread 0 of the block.
mlir::Value isThreadZero(mlir::ImplicitLocOpBuilder &b, const ThreadIds &ids);

/// A workgroup-memory buffer type of `size` elements of `element`.
mlir::MemRefType workgroupType(mlir::Type element, int64_t size);

mlir::Value indexConstant(mlir::ImplicitLocOpBuilder &b, int64_t value);
/// ceil(a / b) for non-negative indices.
mlir::Value ceilDiv(mlir::ImplicitLocOpBuilder &b, mlir::Value a,
                    mlir::Value bValue);
/// Blocks of `blockSize` threads for one thread per element of `n` (at
/// least one).
mlir::Value blocksFor(mlir::ImplicitLocOpBuilder &host, mlir::Value n,
                      int64_t blockSize = kBlockSize);
/// lhs < rhs and min(lhs, rhs) on indices.
mlir::Value lessThan(mlir::ImplicitLocOpBuilder &b, mlir::Value lhs,
                     mlir::Value rhs);
mlir::Value minIndex(mlir::ImplicitLocOpBuilder &b, mlir::Value lhs,
                     mlir::Value rhs);
/// `index` (any integer type) as an index, and whether it is in [0, size).
std::pair<mlir::Value, mlir::Value>
checkedIndex(mlir::ImplicitLocOpBuilder &b, mlir::Value index,
             mlir::Value size);
/// The contiguous range [lo, hi) of `n` rows that thread `t` of `threads`
/// folds when rows must be combined in order.
std::pair<mlir::Value, mlir::Value> contiguousRange(mlir::ImplicitLocOpBuilder &b,
                                                    mlir::Value t,
                                                    mlir::Value threads,
                                                    mlir::Value n);
/// The sizes among `sizes` (one per dimension) that `type` leaves dynamic.
llvm::SmallVector<mlir::Value> dynamicSizes(mlir::RankedTensorType type,
                                            mlir::ValueRange sizes);
/// A loop over `lo`, `lo + step`, ... below `hi` that runs `body` on each
/// index and carries nothing (a thread's share of a block's elements).
void forEachIndexIn(
    mlir::ImplicitLocOpBuilder &b, mlir::Value lo, mlir::Value hi,
    mlir::Value step,
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &, mlir::Value)> body);
/// The same over [0, `count`).
void forEachIndex(
    mlir::ImplicitLocOpBuilder &b, mlir::Value count,
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &, mlir::Value)> body);
/// scf.if `condition` then `then` (no results).
void ifThen(mlir::ImplicitLocOpBuilder &b, mlir::Value condition,
            llvm::function_ref<void(mlir::ImplicitLocOpBuilder &)> then);
/// scf.if `condition` then `then` else `otherwise` (no results).
void ifThenElse(
    mlir::ImplicitLocOpBuilder &b, mlir::Value condition,
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &)> then,
    llvm::function_ref<void(mlir::ImplicitLocOpBuilder &)> otherwise);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_KERNEL_H
