//===- EmulateGpuLaunches.cpp - gpu.launch as loops on the CPU ------------===//
//
// Checking kernels without a GPU: each gpu.launch becomes loops over blocks
// and threads around a copy of its body, or, where its threads synchronize,
// loops over blocks around an OpenMP team running the block's threads
// concurrently (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace soac {
#define GEN_PASS_DEF_SOACEMULATEGPULAUNCHES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Ops at which the threads of a block wait for each other: barriers and
/// the warp-wide ops (shuffles, products on the tensor cores).
bool waits(Operation *op) {
  return isa<gpu::BarrierOp, gpu::ShuffleOp, NVVM::MmaOp>(op);
}

/// Whether the threads of `launch` wait for each other (waits) or share
/// workgroup memory: such a kernel runs its threads concurrently
/// (emulateWithThreads), any other one after the other.
bool synchronizes(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty())
    return true;
  return launch.getBody()
      .walk([](Operation *op) {
        return waits(op) ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The product on the tensor cores the emulation knows (emulateMma):
/// mma.sync m8n8k4 of float64, A row-major and B column-major, whose two
/// results are only read by llvm.extractvalue.
bool emulableMma(NVVM::MmaOp mma) {
  NVVM::MMAShapeAttr shape = mma.getShape();
  Type f64 = Float64Type::get(mma.getContext());
  auto allF64 = [&](ValueRange values) {
    return llvm::all_of(values.getTypes(), [&](Type t) { return t == f64; });
  };
  return shape.getM() == 8 && shape.getN() == 8 && shape.getK() == 4 &&
         mma.getLayoutA() == NVVM::MMALayout::row &&
         mma.getLayoutB() == NVVM::MMALayout::col &&
         mma.getOperandA().size() == 1 && mma.getOperandB().size() == 1 &&
         mma.getOperandC().size() == 2 && allF64(mma.getOperandA()) &&
         allF64(mma.getOperandB()) && allF64(mma.getOperandC()) &&
         llvm::all_of(mma->getUsers(), [](Operation *user) {
           return isa<LLVM::ExtractValueOp>(user);
         });
}

/// Fails (with an error at the op) when `launch` has what neither way of
/// running it supports.
LogicalResult checkEmulable(gpu::LaunchOp launch) {
  if (!launch.getPrivateAttributions().empty())
    return launch.emitOpError()
           << "cannot be emulated on the CPU: it uses private memory";
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty())
    return launch.emitOpError()
           << "cannot be emulated on the CPU: it is asynchronous";
  if (!launch.getBody().hasOneBlock())
    return launch.emitOpError()
           << "cannot be emulated on the CPU: its body has several blocks";
  WalkResult unsupported = launch.getBody().walk([](Operation *op) {
    if (isa<gpu::SubgroupReduceOp, gpu::AllReduceOp>(op)) {
      op->emitOpError() << "cannot be emulated on the CPU: only barriers, "
                           "shuffles and products on the tensor cores "
                           "synchronize emulated threads";
      return WalkResult::interrupt();
    }
    if (auto mma = dyn_cast<NVVM::MmaOp>(op); mma && !emulableMma(mma)) {
      op->emitOpError() << "cannot be emulated on the CPU: only mma.sync "
                           "m8n8k4 of float64 (row, col) whose results are "
                           "read by llvm.extractvalue can be";
      return WalkResult::interrupt();
    }
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op);
        shuffle && !isa<IntegerType, FloatType>(shuffle.getValue().getType())) {
      op->emitOpError()
          << "cannot be emulated on the CPU: it shuffles a vector";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(unsupported.wasInterrupted());
}

/// The ids and sizes of the launch's body, as the values of the loops.
struct Dims {
  gpu::KernelDim3 block, thread, grid, blockSize;

  /// The launch's grid and block sizes; the ids are set by the loops.
  explicit Dims(gpu::LaunchOp launch)
      : grid{launch.getGridSizeX(), launch.getGridSizeY(),
             launch.getGridSizeZ()},
        blockSize{launch.getBlockSizeX(), launch.getBlockSizeY(),
                  launch.getBlockSizeZ()} {}

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
/// mapped to `dims`, values already in `mapping` (workgroup memory) to theirs.
void copyBody(OpBuilder &b, gpu::LaunchOp launch, const Dims &dims,
              IRMapping mapping = {}) {
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

/// Nested loops from 0 to each size, outermost first; each loop's induction
/// variable is stored where its pair points, and the builder is left in the
/// innermost body.
void openLoops(OpBuilder &b, Location loc,
               ArrayRef<std::pair<Value, Value *>> loops) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [size, iv] : loops) {
    auto loop = scf::ForOp::create(b, loc, zero, size, one);
    *iv = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }
}

/// Loops over the blocks (z, y, x), then the threads (z, y, x), around a
/// copy of the launch's body; the launch is erased.
void emulate(gpu::LaunchOp launch) {
  OpBuilder b(launch);
  Dims dims(launch);
  // Innermost last: x varies fastest, as consecutive ids do on a GPU.
  openLoops(b, launch.getLoc(),
            {{dims.grid.z, &dims.block.z},
             {dims.grid.y, &dims.block.y},
             {dims.grid.x, &dims.block.x},
             {dims.blockSize.z, &dims.thread.z},
             {dims.blockSize.y, &dims.thread.y},
             {dims.blockSize.x, &dims.thread.x}});
  copyBody(b, launch, dims);
  launch.erase();
}

/// The id of a thread of a block of `sizes` threads from its linear id
/// (x varies fastest, as a GPU numbers the lanes of a warp).
gpu::KernelDim3 unlinearize(ImplicitLocOpBuilder &b, Value linear,
                            const gpu::KernelDim3 &sizes) {
  Value x = arith::RemUIOp::create(b, linear, sizes.x);
  Value rest = arith::DivUIOp::create(b, linear, sizes.x);
  Value y = arith::RemUIOp::create(b, rest, sizes.y);
  Value z = arith::DivUIOp::create(b, rest, sizes.y);
  return {x, y, z};
}

/// The declaration of `name`, a function of the OpenMP runtime, in `module`.
func::FuncOp runtimeFunction(ModuleOp module, StringRef name,
                             FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(b, module.getLoc(), name, type);
  function.setPrivate();
  return function;
}

/// A warp shuffle among the emulated threads: each writes its value into
/// its slot of `exchange`, all wait, each reads its source lane's slot (its
/// own value where the source is out of the width, as a GPU gives), all wait
/// again before the slots can be written anew.
void emulateShuffle(gpu::ShuffleOp shuffle, Value exchange, Value linear) {
  ImplicitLocOpBuilder b(shuffle.getLoc(), shuffle);
  memref::StoreOp::create(b, shuffle.getValue(), exchange, linear);
  omp::BarrierOp::create(b);
  Type index = b.getIndexType();
  Value offset = arith::IndexCastUIOp::create(b, index, shuffle.getOffset());
  Value width = arith::IndexCastUIOp::create(b, index, shuffle.getWidth());
  Value lane = arith::RemUIOp::create(b, linear, width);
  Value first = arith::SubIOp::create(b, linear, lane);
  Value source;
  switch (shuffle.getMode()) {
  case gpu::ShuffleMode::XOR:
    source = arith::XOrIOp::create(b, lane, offset);
    break;
  case gpu::ShuffleMode::UP:
    // Below lane 0 it wraps to a huge unsigned value: out of the width.
    source = arith::SubIOp::create(b, lane, offset);
    break;
  case gpu::ShuffleMode::DOWN:
    source = arith::AddIOp::create(b, lane, offset);
    break;
  case gpu::ShuffleMode::IDX:
    source = offset;
    break;
  }
  Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, source, width);
  Value from = arith::AddIOp::create(
      b, first, arith::SelectOp::create(b, valid, source, lane));
  Value value = memref::LoadOp::create(b, exchange, from);
  omp::BarrierOp::create(b);
  shuffle.getShuffleResult().replaceAllUsesWith(value);
  shuffle.getValid().replaceAllUsesWith(valid);
  shuffle.erase();
}

/// A warp's product on the tensor cores (mma.sync m8n8k4 of float64) among
/// the emulated threads, in PTX's fragment layout: lane l of a warp holds
/// A[l / 4][l % 4] of the 8 x 4 operand, B[l % 4][l / 4] of the 4 x 8 one,
/// and C[l / 4][2 (l % 4) + v] of the 8 x 8 result. Each thread writes its
/// A and B into its slots of `fragments` (A's first, then `threads` slots
/// of B's), all wait, each computes its two results from its warp's slots,
/// all wait again.
void emulateMma(NVVM::MmaOp mma, Value fragments, Value threads,
                Value linear) {
  ImplicitLocOpBuilder b(mma.getLoc(), mma);
  auto index = [&](int64_t value) {
    return arith::ConstantIndexOp::create(b, value).getResult();
  };
  memref::StoreOp::create(b, mma.getOperandA()[0], fragments, linear);
  memref::StoreOp::create(
      b, mma.getOperandB()[0], fragments,
      ValueRange{arith::AddIOp::create(b, threads, linear)});
  omp::BarrierOp::create(b);
  Value lane = arith::RemUIOp::create(b, linear, index(32));
  Value warp = arith::SubIOp::create(b, linear, lane);
  Value row = arith::DivUIOp::create(b, lane, index(4));
  Value firstColumn =
      arith::MulIOp::create(b, arith::RemUIOp::create(b, lane, index(4)),
                            index(2));
  // A[row][k] is lane 4 row + k's; B[k][column] lane 4 column + k's.
  auto fragment = [&](Value offset, Value lineOfFour, int64_t k) -> Value {
    Value slot = arith::AddIOp::create(
        b, arith::AddIOp::create(b, offset, warp),
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, lineOfFour, index(4)), index(k)));
    return memref::LoadOp::create(b, fragments, ValueRange{slot});
  };
  SmallVector<Value, 2> results;
  for (int64_t v = 0; v < 2; ++v) {
    Value column = arith::AddIOp::create(b, firstColumn, index(v));
    Value sum = mma.getOperandC()[v];
    for (int64_t k = 0; k < 4; ++k)
      sum = math::FmaOp::create(b, fragment(index(0), row, k),
                                fragment(threads, column, k), sum);
    results.push_back(sum);
  }
  omp::BarrierOp::create(b);
  for (Operation *user : llvm::make_early_inc_range(mma->getUsers())) {
    auto extract = cast<LLVM::ExtractValueOp>(user);
    extract.getResult().replaceAllUsesWith(
        results[extract.getPosition().front()]);
    extract.erase();
  }
  mma.erase();
}

/// A kernel whose threads synchronize: its blocks one after the other, the
/// threads of each as an OpenMP team of as many threads, so that they run
/// concurrently and wait for each other as a GPU's would. Barriers become
/// team barriers, shuffles exchanges through memory (emulateShuffle),
/// workgroup memory one buffer that every block reuses.
void emulateWithThreads(gpu::LaunchOp launch, ModuleOp module) {
  ImplicitLocOpBuilder b(launch.getLoc(), launch);
  // The buffers below are stack allocations: scoped, so that a launch in a
  // loop does not grow the stack.
  auto scope = memref::AllocaScopeOp::create(b, TypeRange{});
  Block *scopeBody = b.createBlock(&scope.getBodyRegion());
  b.setInsertionPointToStart(scopeBody);
  auto terminator = memref::AllocaScopeReturnOp::create(b, ValueRange{});
  b.setInsertionPoint(terminator);

  Dims dims(launch);
  Value threads = arith::MulIOp::create(
      b, arith::MulIOp::create(b, dims.blockSize.x, dims.blockSize.y),
      dims.blockSize.z);
  IRMapping mapping;
  for (BlockArgument attribution : launch.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(attribution.getType());
    auto onHost = MemRefType::get(type.getShape(), type.getElementType());
    mapping.map(attribution, memref::AllocaOp::create(b, onHost).getResult());
  }
  // One exchange buffer per type shuffled, a slot per thread.
  llvm::MapVector<Type, Value> exchanges;
  launch.getBody().walk([&](gpu::ShuffleOp shuffle) {
    Type type = shuffle.getValue().getType();
    if (!exchanges.count(type))
      exchanges[type] = memref::AllocaOp::create(
          b, MemRefType::get({ShapedType::kDynamic}, type), ValueRange{threads});
  });

  // Two slots per thread for the operands of products on the tensor cores,
  // which whole warps compute: a partial warp would read past its block.
  Value fragments;
  if (launch.getBody()
          .walk([](NVVM::MmaOp) { return WalkResult::interrupt(); })
          .wasInterrupted()) {
    Value partial = arith::RemUIOp::create(
        b, threads, arith::ConstantIndexOp::create(b, 32));
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, partial,
                              arith::ConstantIndexOp::create(b, 0)),
        "soac-emulate-gpu-launches: a block computing products on the "
        "tensor cores must have whole warps (a multiple of 32 threads)");
    fragments = memref::AllocaOp::create(
        b, MemRefType::get({ShapedType::kDynamic}, b.getF64Type()),
        ValueRange{arith::MulIOp::create(
            b, threads, arith::ConstantIndexOp::create(b, 2))});
  }

  openLoops(b, b.getLoc(),
            {{dims.grid.z, &dims.block.z},
             {dims.grid.y, &dims.block.y},
             {dims.grid.x, &dims.block.x}});
  omp::ParallelOperands team;
  team.numThreads = arith::IndexCastOp::create(b, b.getI32Type(), threads);
  auto parallel = omp::ParallelOp::create(b, team);
  b.setInsertionPointToStart(b.createBlock(&parallel.getRegion()));
  auto end = omp::TerminatorOp::create(b);
  b.setInsertionPoint(end);
  auto runtimeI32 = [&](StringRef name) {
    func::FuncOp function = runtimeFunction(
        module, name, b.getFunctionType({}, {b.getI32Type()}));
    return func::CallOp::create(b, function).getResult(0);
  };
  // A smaller team (OMP_THREAD_LIMIT, OMP_DYNAMIC) would skip threads and
  // their barriers: stop rather than compute something else.
  cf::AssertOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                            runtimeI32("soac_omp_team_size"),
                            team.numThreads),
      "soac-emulate-gpu-launches: the OpenMP runtime gave a team smaller "
      "than a block");
  Value linear = arith::IndexCastUIOp::create(b, b.getIndexType(),
                                              runtimeI32("soac_omp_thread_number"));
  dims.thread = unlinearize(b, linear, dims.blockSize);
  copyBody(b, launch, dims, mapping);

  SmallVector<Operation *> waiting;
  parallel.getRegion().walk([&](Operation *op) {
    if (waits(op))
      waiting.push_back(op);
  });
  for (Operation *op : waiting) {
    if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      emulateShuffle(shuffle, exchanges[shuffle.getValue().getType()], linear);
      continue;
    }
    if (auto mma = dyn_cast<NVVM::MmaOp>(op)) {
      emulateMma(mma, fragments, threads, linear);
      continue;
    }
    OpBuilder at(op);
    omp::BarrierOp::create(at, op->getLoc());
    op->erase();
  }
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
      emulable &= succeeded(checkEmulable(launch));
    if (!emulable)
      return signalPassFailure();
    for (gpu::LaunchOp launch : launches) {
      if (synchronizes(launch))
        emulateWithThreads(launch, getOperation());
      else
        emulate(launch);
    }
  }
};

} // namespace
