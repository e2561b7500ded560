//===- SinkScalarReads.cpp - kernels read the scalars kernels wrote -------===//
//
// A reduce's total is written by a kernel into a buffer and read back by the
// host. When only later kernels use it (directly, or through host scalar
// arithmetic), each of them reads the buffer and redoes the arithmetic
// instead, and the host never reads it: in device memory a host read is a
// copy that waits for the stream (see Passes.td). A scalar that a loop
// carries and updates from such totals (a running loss) is carried in a
// buffer instead, updated by a kernel of one thread, and read once after the
// loop.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"
#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace soac {
#define GEN_PASS_DEF_SOACSINKSCALARREADS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

bool isScalar(Type type) { return type.isIntOrIndexOrFloat(); }

/// Host arithmetic on scalars that a kernel can redo.
bool isScalarArithmetic(Operation *op) {
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         op->getNumRegions() == 0 && isPure(op) &&
         llvm::all_of(op->getOperandTypes(), isScalar) &&
         llvm::all_of(op->getResultTypes(), isScalar);
}

/// Whether nothing writes the buffer `load` reads once `load` has read it:
/// a buffer allocated by the function, which the host only loads from, and
/// which kernels write only in launches before `load` (in its block, or in
/// ops of its block before it). Kernels run in the order they are launched,
/// so a kernel launched after `load` reads what `load` reads.
bool readsFinishedBuffer(memref::LoadOp load) {
  auto alloc = load.getMemRef().getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return false;
  Block *block = load->getBlock();
  for (Operation *user : alloc->getUsers()) {
    auto launch = user->getParentOfType<gpu::LaunchOp>();
    if (!launch) {
      if (!isa<memref::LoadOp>(user))
        return false;
      continue;
    }
    if (isa<memref::LoadOp>(user))
      continue;
    Operation *writer = block->findAncestorOpInBlock(*launch);
    if (!writer || !writer->isBeforeInBlock(load))
      return false;
  }
  return true;
}

/// `load` and the host arithmetic computed from it, when only kernels use
/// what they compute; empty otherwise.
SmallVector<Operation *> readOnlyByKernels(memref::LoadOp load) {
  llvm::SetVector<Operation *> chain;
  chain.insert(load);
  for (size_t i = 0; i < chain.size(); ++i)
    for (Operation *user : chain[i]->getUsers()) {
      if (user->getParentOfType<gpu::LaunchOp>())
        continue;
      if (!isScalarArithmetic(user))
        return {};
      chain.insert(user);
    }
  return chain.takeVector();
}

/// The value `value` of `chain` has inside the kernel `builder` builds:
/// `value`'s op cloned there after the ops it needs (once each).
Value cloneInKernel(OpBuilder &builder, Value value,
                    const llvm::SmallPtrSetImpl<Operation *> &chain,
                    IRMapping &cloned) {
  if (Value known = cloned.lookupOrNull(value))
    return known;
  Operation *op = value.getDefiningOp();
  if (!op || !chain.contains(op))
    return value; // a host value the kernel takes as an argument
  for (Value operand : op->getOperands())
    cloneInKernel(builder, operand, chain, cloned);
  builder.clone(*op, cloned);
  return cloned.lookup(value);
}

/// Erases `ops`, which only use each other now: each once its users are.
/// (An op something else still used would stay, rather than loop forever.)
void eraseUnused(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> left(ops);
  while (!left.empty()) {
    auto unused = llvm::partition(
        left, [](Operation *op) { return !op->use_empty(); });
    if (unused == left.end())
      return;
    for (Operation *op : llvm::make_range(unused, left.end()))
      op->erase();
    left.erase(unused, left.end());
  }
}

void sinkIntoKernels(ArrayRef<Operation *> chainOps) {
  llvm::SmallPtrSet<Operation *, 8> chain(chainOps.begin(), chainOps.end());
  // The kernels using the chain's values, each with the uses inside it.
  llvm::MapVector<gpu::LaunchOp, SmallVector<OpOperand *>> uses;
  for (Operation *op : chainOps)
    for (OpOperand &use : op->getUses())
      if (auto launch = use.getOwner()->getParentOfType<gpu::LaunchOp>())
        uses[launch].push_back(&use);
  for (auto &[launch, operands] : uses) {
    OpBuilder builder = OpBuilder::atBlockBegin(&launch.getBody().front());
    IRMapping cloned;
    for (OpOperand *use : operands)
      use->set(cloneInKernel(builder, use->get(), chain, cloned));
  }
  eraseUnused(chainOps);
}

/// The host ops of `loop`'s body computing the value it yields for its
/// scalar `carry` from `carry`, from loads of finished buffers and from host
/// values, when nothing else uses them or `carry`; empty otherwise.
SmallVector<Operation *> updateOnly(scf::ForOp loop, BlockArgument carry) {
  Block *body = loop.getBody();
  Value next = body->getTerminator()->getOperand(carry.getArgNumber() -
                                                 loop.getNumInductionVars());
  llvm::SetVector<Operation *> chain;
  SmallVector<Value> pending{next};
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val().getDefiningOp();
    if (!op || op->getBlock() != body || chain.contains(op))
      continue; // the carry, the induction variable or a value from before
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!(load ? isScalar(load.getType()) && readsFinishedBuffer(load)
               : isScalarArithmetic(op)))
      return {};
    chain.insert(op);
    // A load's buffer and indices are host values the kernel takes.
    if (!load)
      llvm::append_range(pending, op->getOperands());
  }
  if (chain.empty())
    return {};
  auto usedInChain = [&](OpOperand &use) {
    return chain.contains(use.getOwner());
  };
  if (!llvm::all_of(carry.getUses(), usedInChain))
    return {};
  for (Operation *op : chain)
    for (OpOperand &use : op->getUses())
      if (!usedInChain(use) && !(use.get() == next &&
                                 use.getOwner() == body->getTerminator()))
        return {};
  return chain.takeVector();
}

/// Carries `carry` in a buffer on the GPU: a one-thread kernel stores its
/// initial value before `loop`, another computes `update` from it at the
/// end of each iteration, and the host reads the buffer after the loop.
void carryOnTheGpu(scf::ForOp loop, BlockArgument carry,
                   ArrayRef<Operation *> update) {
  using namespace soac::kernels;
  unsigned position = carry.getArgNumber() - loop.getNumInductionVars();
  Operation *yield = loop.getBody()->getTerminator();
  Value next = yield->getOperand(position);
  ImplicitLocOpBuilder host(loop.getLoc(), loop);
  Value zero = indexConstant(host, 0);
  Value one = indexConstant(host, 1);
  Value buffer = memref::AllocOp::create(
      host, MemRefType::get({ShapedType::kDynamic}, carry.getType()), one);
  Value initial = loop.getInitArgs()[position];
  auto store = [&](ImplicitLocOpBuilder &b, Value value) {
    memref::StoreOp::create(b, value, buffer, ValueRange{zero});
  };
  Buffers none;
  launchKernel(
      host, one, {}, none,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &, ValueRange) {
        store(b, initial);
      },
      /*blockSize=*/1);
  ImplicitLocOpBuilder end(loop.getLoc(), yield);
  llvm::SmallPtrSet<Operation *, 8> chain(update.begin(), update.end());
  launchKernel(
      end, one, {}, none,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &, ValueRange) {
        IRMapping cloned;
        cloned.map(carry, memref::LoadOp::create(b, buffer, ValueRange{zero}));
        store(b, cloneInKernel(b, next, chain, cloned));
      },
      /*blockSize=*/1);
  // The loop now carries `carry` unchanged (canonicalization drops it).
  yield->setOperand(position, carry);
  eraseUnused(update);
  host.setInsertionPointAfter(loop);
  Value final = memref::LoadOp::create(host, buffer, ValueRange{zero});
  loop.getResult(position).replaceAllUsesWith(final);
}

struct SinkScalarReadsPass
    : soac::impl::SoacSinkScalarReadsBase<SinkScalarReadsPass> {
  void runOnOperation() override {
    // Loop carries first: their updates' loads are then gone.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (!loop->getParentOfType<gpu::LaunchOp>())
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      for (BlockArgument carry : loop.getRegionIterArgs()) {
        if (!isScalar(carry.getType()))
          continue;
        SmallVector<Operation *> update = updateOnly(loop, carry);
        if (llvm::any_of(update, [](Operation *op) {
              return isa<memref::LoadOp>(op);
            }))
          carryOnTheGpu(loop, carry, update);
      }
    SmallVector<memref::LoadOp> loads;
    getOperation().walk([&](memref::LoadOp load) {
      if (!load->getParentOfType<gpu::LaunchOp>() &&
          isScalar(load.getType()) && readsFinishedBuffer(load))
        loads.push_back(load);
    });
    for (memref::LoadOp load : loads) {
      SmallVector<Operation *> chain = readOnlyByKernels(load);
      if (!chain.empty() && !load->use_empty())
        sinkIntoKernels(chain);
    }
  }
};

} // namespace
