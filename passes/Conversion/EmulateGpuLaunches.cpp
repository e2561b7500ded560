//===- EmulateGpuLaunches.cpp - gpu.launch as loops on the CPU ------------===//
//
// Checking kernels without a GPU: each gpu.launch becomes loops over blocks
// and threads around a copy of its body (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

namespace soac {
#define GEN_PASS_DEF_SOACEMULATEGPULAUNCHES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Fails (with an error at the op) when a thread of `launch` may wait for
/// another: running the threads one after the other would deadlock or read
/// what the others have not written yet.
LogicalResult checkIndependentThreads(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return launch.emitOpError()
           << "cannot be emulated by sequential threads: it uses workgroup "
              "or private memory";
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitOpError()
           << "cannot be emulated by sequential threads: it is asynchronous";
  if (!launch.getBody().hasOneBlock())
    return launch.emitOpError()
           << "cannot be emulated by sequential threads: its body has "
              "several blocks";
  WalkResult waits = launch.getBody().walk([](Operation *op) {
    if (isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::SubgroupReduceOp,
            gpu::AllReduceOp>(op)) {
      op->emitOpError() << "cannot be emulated by sequential threads: the "
                           "threads of its kernel synchronize";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(waits.wasInterrupted());
}

/// The ids and sizes of the launch's body, as the values of the loops.
struct Dims {
  gpu::KernelDim3 block, thread, grid, blockSize;

  Value of(gpu::Dimension dimension, const gpu::KernelDim3 &dims) const {
    switch (dimension) {
    case gpu::Dimension::x:
      return dims.x;
    case gpu::Dimension::y:
      return dims.y;
    case gpu::Dimension::z:
      return dims.z;
    }
    llvm_unreachable("a gpu.Dimension");
  }
};

/// Copies the body of `launch` into the builder's block, ids and sizes
/// mapped to `dims`.
void copyBody(OpBuilder &b, gpu::LaunchOp launch, const Dims &dims) {
  IRMapping mapping;
  auto bind = [&](gpu::KernelDim3 args, const gpu::KernelDim3 &values) {
    mapping.map(args.x, values.x);
    mapping.map(args.y, values.y);
    mapping.map(args.z, values.z);
  };
  bind(launch.getBlockIds(), dims.block);
  bind(launch.getThreadIds(), dims.thread);
  bind(launch.getGridSize(), dims.grid);
  bind(launch.getBlockSize(), dims.blockSize);
  for (Operation &op : launch.getBody().front().without_terminator()) {
    // Id ops (when the kernel uses them rather than the block's arguments).
    Value id = llvm::TypeSwitch<Operation *, Value>(&op)
                   .Case([&](gpu::BlockIdOp o) {
                     return dims.of(o.getDimension(), dims.block);
                   })
                   .Case([&](gpu::ThreadIdOp o) {
                     return dims.of(o.getDimension(), dims.thread);
                   })
                   .Case([&](gpu::GridDimOp o) {
                     return dims.of(o.getDimension(), dims.grid);
                   })
                   .Case([&](gpu::BlockDimOp o) {
                     return dims.of(o.getDimension(), dims.blockSize);
                   })
                   .Default([](Operation *) { return Value(); });
    if (id) {
      mapping.map(op.getResult(0), id);
      continue;
    }
    b.clone(op, mapping);
  }
}

/// Loops over the blocks (z, y, x), then the threads (z, y, x), around a
/// copy of the launch's body; the launch is erased.
void emulate(gpu::LaunchOp launch) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Dims dims;
  dims.grid = {launch.getGridSizeX(), launch.getGridSizeY(),
               launch.getGridSizeZ()};
  dims.blockSize = {launch.getBlockSizeX(), launch.getBlockSizeY(),
                    launch.getBlockSizeZ()};
  // Innermost last: x varies fastest, as consecutive ids do on a GPU.
  SmallVector<std::pair<Value, Value *>> loops = {
      {dims.grid.z, &dims.block.z},       {dims.grid.y, &dims.block.y},
      {dims.grid.x, &dims.block.x},       {dims.blockSize.z, &dims.thread.z},
      {dims.blockSize.y, &dims.thread.y}, {dims.blockSize.x, &dims.thread.x}};
  for (auto [size, iv] : loops) {
    auto loop = scf::ForOp::create(b, loc, zero, size, one);
    *iv = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }
  copyBody(b, launch, dims);
  launch.erase();
}

struct SoacEmulateGpuLaunchesPass
    : soac::impl::SoacEmulateGpuLaunchesBase<SoacEmulateGpuLaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launches.push_back(launch);
    });
    bool emulable = true;
    for (gpu::LaunchOp launch : launches)
      emulable &= succeeded(checkIndependentThreads(launch));
    if (!emulable)
      return signalPassFailure();
    for (gpu::LaunchOp launch : launches)
      emulate(launch);
  }
};

} // namespace
