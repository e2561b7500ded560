//===- SoacToGPU.cpp - soac ops to GPU kernels ----------------------------===//
//
// Each SOAC outside other SOACs becomes one or more gpu.launch kernels of
// kBlockSize threads (see Kernel.h for how tensors cross into kernels):
//
//   map, iota        one thread per row; a map over vector rows, or with
//                    SOACs in its body, one block per row (RowKernel.h),
//                    or one thread per row running the body sequentially
//                    when it nests deeper (ThreadKernel.h)
//   reduce           (over vector rows of any rank combined elementwise:
//                    one thread per element and range of rows, then one
//                    per element where there were several ranges)
//                    blocks fold rows (interleaved when the operator is one
//                    commutative op, several loads in flight per thread,
//                    else contiguous ranges a tile at a time), combine in the
//                    block by warp shuffles and workgroup memory; one block
//                    combines the blocks' partial results (a second kernel,
//                    launched only when there are several blocks)
//   scan             block totals; an exclusive scan of the block totals
//                    in one block; each block rescans its rows from its
//                    offset (both passes a tile of neighbouring rows at a
//                    time, so that loads coalesce; the rescan 4 consecutive
//                    rows per thread, scanned by the thread alone)
//   scatter          copy of dest, then one thread per (index, row element);
//                    up to 4096 of each, one block does both in one launch,
//                    a barrier between them (a loop's small adjoints)
//   reduce_by_index  copy of dest, then one atomic per value (per element
//                    of vector rows combined elementwise); one histogram
//                    per destination where there are several and the
//                    operator combines each by itself (SplitHistograms.h),
//                    else all destinations updated under a lock per bin
//   matmul           tiles of the result staged through workgroup memory
//                    (MatmulKernel.h)
//
// A map whose rows only one SOAC reads is recomputed inside that SOAC's
// kernel (ElementReader). What the kernels cannot run is an error at its
// location. Temporary buffers are freed by the deallocation pipeline that
// runs after bufferization.
//
// This file: what the kernels support, and the pass choosing each SOAC's
// lowering; the lowerings are in OpKernels.cpp (one per op), RowKernel.cpp
// and ThreadKernel.cpp (maps over rows), MatmulKernel.cpp (products).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"
#include "passes/Conversion/SoacToGPU/BlockPrimitives.h"
#include "passes/Conversion/SoacToGPU/Kernel.h"
#include "passes/Conversion/SoacToGPU/MatmulKernel.h"
#include "passes/Conversion/SoacToGPU/OpKernels.h"
#include "passes/Conversion/SoacToGPU/RowKernel.h"
#include "passes/Conversion/SoacToGPU/SplitHistograms.h"
#include "passes/Conversion/SoacToGPU/ThreadKernel.h"
#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace soac {
#define GEN_PASS_DEF_CONVERTSOACTOGPU
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;
using namespace soac::kernels;

namespace {

//===----------------------------------------------------------------------===//
// What the kernels support
//===----------------------------------------------------------------------===//

/// A map whose rows are vectors, or whose body computes tensors (nested
/// SOACs), runs one block per row.
bool needsRowKernel(MapOp map) {
  return !hasScalarRows(map) || computesTensors(map.getBody());
}

bool allRank1(ValueRange tensors) {
  return llvm::all_of(tensors.getTypes(), [](Type t) {
    return cast<RankedTensorType>(t).getRank() == 1;
  });
}

LogicalResult unsupported(Operation *op, StringRef why) {
  return op->emitOpError() << "is not supported by the GPU lowering: " << why;
}

LogicalResult checkSupported(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([](MapOp map) {
        if (needsRowKernel(map))
          return fitsRowKernel(map) ? success() : checkThreadKernel(map);
        return checkScalarCode(map.getBody(), map);
      })
      .Case([](ReduceOp reduce) -> LogicalResult {
        Region *op = scalarOperator(reduce);
        if (!op)
          return unsupported(reduce, "the rows combined must be scalars, or "
                                     "vectors combined elementwise");
        return checkScalarCode(*op, reduce);
      })
      .Case([](ScanOp op) {
        if (!allRank1(op.getInputs()))
          return unsupported(op, "the rows combined must be scalars");
        return checkScalarCode(op.getBody(), op);
      })
      .Case([](ScatterOp scatter) {
        if (cast<RankedTensorType>(scatter.getIndices().getType()).getRank() !=
            1)
          return unsupported(scatter, "the indices must be a 1-D tensor");
        return success();
      })
      .Case([](ReduceByIndexOp histogram) -> LogicalResult {
        if (histogram.getDests().size() > 1)
          return checkLockedCombine(histogram);
        Region *op = scalarOperator(histogram);
        if (!op)
          return unsupported(histogram, "the rows combined must be scalars, "
                                        "or vectors combined elementwise");
        if (failed(checkScalarCode(*op, histogram)))
          return failure();
        return checkAtomicCombine(
            *op, getElementTypeOrSelf(histogram.getInits()[0]), histogram);
      })
      .Case([](IotaOp) { return success(); })
      .Case<VjpOp, JvpOp>([](Operation *derivative) {
        return derivative->emitOpError()
               << "must be expanded by the soac-autodiff pass before "
                  "lowering to the GPU";
      })
      .Default([](Operation *) { return success(); });
}

/// Host constants of one value repeated (static zeros: the adjoints a
/// gradient accumulates into) as splats of a scalar, which the kernels read
/// as that scalar or a kernel fills on the GPU; as constants they became
/// host globals copied into device memory at every use (D-LSTM's gradient
/// with static inner sizes, in device memory: 18 of its 19 host copies,
/// each a wait for the stream).
/// (Constants inside SOAC bodies are left to the kernels that run them.)
void constantSplatsAsSplats(Operation *root) {
  auto inHostCode = [](Operation *op) {
    for (Operation *parent = op->getParentOp(); parent;
         parent = parent->getParentOp())
      if (isa<gpu::LaunchOp>(parent) ||
          isa<SoacDialect>(parent->getDialect()))
        return false;
    return true;
  };
  SmallVector<arith::ConstantOp> constants;
  root->walk([&](arith::ConstantOp constant) {
    auto value = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (value && isa<RankedTensorType>(constant.getType()) &&
        inHostCode(constant))
      constants.push_back(constant);
  });
  for (arith::ConstantOp constant : constants) {
    auto value = cast<SplatElementsAttr>(constant.getValue());
    ImplicitLocOpBuilder b(constant.getLoc(), constant);
    Value element = arith::ConstantOp::create(
        b, cast<TypedAttr>(value.getSplatValue<Attribute>()));
    Value splat = tensor::SplatOp::create(
        b, cast<RankedTensorType>(constant.getType()), element, ValueRange{});
    constant.replaceAllUsesWith(splat);
    constant.erase();
  }
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Replaces each tensor.dim of `splat` at a constant index by that size (a
/// constant or the splat's operand).
void foldSizeReads(tensor::SplatOp splat) {
  RankedTensorType type = splat.getType();
  for (Operation *user : llvm::make_early_inc_range(splat->getUsers())) {
    auto dim = dyn_cast<tensor::DimOp>(user);
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!index || *index < 0 || *index >= type.getRank())
      continue;
    OpBuilder b(dim);
    Value size;
    if (type.isDynamicDim(*index))
      size = splat.getDynamicSizes()[type.getDynamicDimIndex(*index)];
    else
      size = arith::ConstantIndexOp::create(b, dim.getLoc(),
                                            type.getDimSize(*index));
    dim.replaceAllUsesWith(size);
    dim.erase();
  }
}

struct ConvertSoacToGPUPass
    : soac::impl::ConvertSoacToGPUBase<ConvertSoacToGPUPass> {
  using ConvertSoacToGPUBase::ConvertSoacToGPUBase;

  void runOnOperation() override {
    constantSplatsAsSplats(getOperation());
    // The SOACs not nested in other SOACs, in program order: nested ones run
    // inside their parent's kernel.
    SmallVector<Operation *> soacs;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isa<SoacDialect>(op->getDialect()) || isa<CheckIndexOp, CheckOp>(op))
        return WalkResult::advance();
      soacs.push_back(op);
      return WalkResult::skip();
    });
    // One-shot bufferization asserts on a dimension past the rank.
    bool supported = succeeded(verifyDimIndices(getOperation()));
    // Histograms of several destinations: one per destination where the
    // operator combines each by itself (atomics); else one, under locks.
    SmallVector<Operation *> split;
    for (Operation *op : soacs) {
      auto histogram = dyn_cast<ReduceByIndexOp>(op);
      std::optional<SmallVector<Operation *>> parts;
      if (histogram && histogram.getDests().size() > 1)
        parts = splitByDestination(histogram);
      if (parts)
        llvm::append_range(split, *parts);
      else
        split.push_back(op);
    }
    soacs = std::move(split);
    for (Operation *op : soacs)
      supported &= succeeded(checkSupported(op));
    if (!supported)
      return signalPassFailure();
    for (Operation *op : soacs) {
      // A map recomputed inside the kernel of the one SOAC reading it.
      if (auto map = dyn_cast<MapOp>(op);
          map && !map->use_empty() &&
          fusedScalarMap(map.getResult(0), *map->getUsers().begin()) == map)
        continue;
      if (foldBlocks < 1 && isa<ReduceOp, ScanOp>(op)) {
        op->emitOpError() << "needs blocks to fold its rows: "
                          << "convert-soac-to-gpu's fold-blocks must be at "
                             "least 1, not "
                          << static_cast<int64_t>(foldBlocks);
        return signalPassFailure();
      }
      llvm::TypeSwitch<Operation *>(op)
          .Case([](MapOp op) {
            if (!needsRowKernel(op))
              lowerMap(op);
            else if (fitsRowKernel(op))
              lowerRowKernel(op);
            else
              lowerThreadKernel(op);
          })
          .Case([&](ReduceOp op) {
            // Vector rows combined elementwise: a fold per element.
            if (Region *scalar = scalarOperator(op); scalar != &op.getBody())
              lowerColumnReduce(op, *scalar);
            else
              lowerReduce(op, foldBlocks);
          })
          .Case([&](ScanOp op) { lowerScan(op, foldBlocks); })
          .Case([](ScatterOp op) { lowerScatter(op); })
          .Case([](ReduceByIndexOp op) {
            if (op.getDests().size() > 1)
              lowerLockedReduceByIndex(op);
            else
              lowerReduceByIndex(op);
          })
          .Case([](IotaOp op) { lowerIota(op); })
          .Case([&](MatmulOp op) { lowerMatmul(op, tensorCores); });
    }
    // Splats the kernels did not read as scalars: filled by a kernel. Their
    // sizes are read from the splat's operands first, so that a splat only
    // the host asked the sizes of (the zeros a histogram copies from its
    // value) needs no kernel.
    SmallVector<tensor::SplatOp> splats;
    getOperation().walk([&](tensor::SplatOp splat) {
      if (!splat->getParentOfType<gpu::LaunchOp>() &&
          !isa<SoacDialect>(splat->getParentOp()->getDialect()))
        splats.push_back(splat);
    });
    // After the walk: folding erases the tensor.dim ops it replaces.
    for (tensor::SplatOp splat : splats) {
      foldSizeReads(splat);
      if (splat->use_empty())
        splat.erase();
      else
        lowerSplat(splat);
    }
  }
};

} // namespace
