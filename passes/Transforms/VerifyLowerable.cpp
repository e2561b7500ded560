//===- VerifyLowerable.cpp - soac-verify-lowerable ------------------------===//
//
// Programs that the ops' verifiers accept but that MLIR's own passes assert
// on, refused with an error at the op before any of them runs: both named
// pipelines start here, so that no input makes soac-opt or the Python API
// abort instead of reporting.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"

namespace soac {
#define GEN_PASS_DEF_SOACVERIFYLOWERABLE
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// The most bytes soac allocates for one buffer (its runtime refuses more).
constexpr uint64_t kMaxBytes = uint64_t{1} << 62;

/// Whether a shaped type with static sizes holds more bytes than any buffer
/// can: layout computations (strides, byte sizes) overflow on it.
bool tooLarge(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasRank())
    return false;
  // Index elements take 8 bytes; other non-numeric ones count as 1 (a lower
  // bound is enough to find the shapes nothing can hold).
  Type element = shaped.getElementType();
  uint64_t bits = element.isIndex()        ? 64
                  : element.isIntOrFloat() ? element.getIntOrFloatBitWidth()
                                           : 8;
  uint64_t bytes = std::max<uint64_t>(1, llvm::divideCeil(bits, 8));
  for (int64_t size : shaped.getShape()) {
    if (ShapedType::isDynamic(size) || size == 0)
      continue;
    if (static_cast<uint64_t>(size) > kMaxBytes / bytes)
      return true;
    bytes *= size;
  }
  return false;
}

LogicalResult verifyStaticSizes(Operation *op) {
  auto check = [&](Type type, StringRef what) -> LogicalResult {
    if (!tooLarge(type))
      return success();
    return op->emitOpError() << "has " << what << " of type " << type
                             << ", larger than the 2^62 bytes a buffer can "
                                "have";
  };
  for (Type type : op->getResultTypes())
    if (failed(check(type, "a result")))
      return failure();
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        if (failed(check(arg.getType(), "a region argument")))
          return failure();
  return success();
}

/// A gpu.launch written by hand: constant sizes within what a launch can
/// have (the NVVM lowering asserts on a size that does not fit in 32 bits).
LogicalResult verifyLaunchSizes(gpu::LaunchOp launch) {
  constexpr int64_t kMaxThreadsPerBlock = 1024;
  constexpr int64_t kMaxBlocks[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
  gpu::KernelDim3 threads = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 blocks = launch.getGridSizeOperandValues();
  Value threadSizes[3] = {threads.x, threads.y, threads.z};
  Value blockSizes[3] = {blocks.x, blocks.y, blocks.z};
  int64_t perBlock = 1;
  for (int d = 0; d < 3; ++d) {
    std::optional<int64_t> size = getConstantIntValue(threadSizes[d]);
    if (size && (*size < 1 || *size > kMaxThreadsPerBlock))
      return launch.emitOpError()
             << "has a block of " << *size << " threads in dimension " << d
             << ": a block has 1 to " << kMaxThreadsPerBlock << " threads";
    perBlock *= size.value_or(1);
    size = getConstantIntValue(blockSizes[d]);
    if (size && (*size < 1 || *size > kMaxBlocks[d]))
      return launch.emitOpError()
             << "has " << *size << " blocks in dimension " << d
             << ": a grid has 1 to " << kMaxBlocks[d] << " blocks there";
  }
  if (perBlock > kMaxThreadsPerBlock)
    return launch.emitOpError() << "has blocks of " << perBlock
                                << " threads: a block has at most "
                                << kMaxThreadsPerBlock;
  return success();
}

/// A slice that drops dimensions with a stride of 0 among its strides:
/// MLIR cannot tell which dimensions a rank-reducing subview drops when a
/// stride is 0 (memref::SubViewOp::getDroppedDims asserts), so bufferized
/// code aborts. Kept dimensions with a stride of 0 (a repeated element) are
/// fine.
LogicalResult verifySliceStrides(Operation *op) {
  ArrayRef<int64_t> strides;
  int64_t fullRank = 0, sliceRank = 0;
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
    strides = extract.getStaticStrides();
    fullRank = extract.getSourceType().getRank();
    sliceRank = extract.getResultType().getRank();
  } else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    strides = insert.getStaticStrides();
    fullRank = insert.getDestType().getRank();
    sliceRank = insert.getSourceType().getRank();
  } else if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
    strides = subview.getStaticStrides();
    fullRank = subview.getSourceType().getRank();
    sliceRank = subview.getType().getRank();
  } else {
    return success();
  }
  if (sliceRank == fullRank || !llvm::is_contained(strides, 0))
    return success();
  return op->emitOpError()
         << "drops " << fullRank - sliceRank
         << " dimension(s) and has a stride of 0: a slice that drops "
            "dimensions needs nonzero strides (which dimensions it drops is "
            "then known)";
}

struct SoacVerifyLowerablePass
    : soac::impl::SoacVerifyLowerableBase<SoacVerifyLowerablePass> {
  void runOnOperation() override {
    bool valid = succeeded(soac::verifyDimIndices(getOperation()));
    getOperation()->walk([&](Operation *op) {
      valid &= succeeded(verifyStaticSizes(op));
      valid &= succeeded(verifySliceStrides(op));
      if (auto launch = dyn_cast<gpu::LaunchOp>(op))
        valid &= succeeded(verifyLaunchSizes(launch));
    });
    if (!valid)
      signalPassFailure();
  }
};

} // namespace
