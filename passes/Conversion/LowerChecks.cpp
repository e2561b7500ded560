//===- LowerChecks.cpp - soac-lower-checks --------------------------------===//
//
// A failed cf.assert aborts the process (convert-cf-to-llvm), which takes a
// Python interpreter down with it. Every run-time check of host code, CPU
// and GPU programs alike (cf.assert, soac.check, soac.check_index, the size and the
// success of each allocation), calls soac's runtime instead when it fails:
//
// - on the calling thread, soac_report_error stops the call made through
//   soac_call_checked (a longjmp), which frees what the call allocated and
//   returns the message;
// - inside a parallel loop the other threads cannot be stopped, so
//   soac_record_error records the first failure and the rest of the check's
//   block is skipped (checks::guard); the call stops when the parallel
//   region ends (soac_parallel_check).
//
// Checks inside GPU kernels were lowered before (soac-lower-kernel-checks);
// those left, which it could not guard, become cf.asserts, which trap.
//
// Kinds of failure (the runtime's soac_failure_kind, Python's error classes)
// are numbered as in runtime/soac_calls.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"
#include "passes/Conversion/RuntimeChecks.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/Support/FormatVariadic.h"

namespace soac {
#define GEN_PASS_DEF_SOACLOWERCHECKS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

using namespace soac::checks;

/// Whether a check at `op` may run on a thread of a parallel region: inside
/// a parallel loop, or in a private function that one may call.
bool inParallelCode(Operation *op) {
  if (op->getParentOfType<omp::ParallelOp>() ||
      op->getParentOfType<scf::ParallelOp>())
    return true;
  auto function = op->getParentOfType<FunctionOpInterface>();
  return function && function.isPrivate();
}

/// Buffers larger than this are refused as overflowing: no machine has that
/// much memory, and sizes computed from negative numbers land above it.
constexpr int64_t kMaxAllocationBytes = int64_t(1) << 62;

/// Emits, before `at`, a check that `ok` holds: when it does not, the
/// runtime gets `kind`, the printf `format` (two `%lld`s at most) and the
/// values `a` and `b` (index or integer). In parallel code the rest of the
/// block after the check is skipped on failure.
void emitCheck(Runtime &runtime, Operation *at, Value ok, FailureKind kind,
               StringRef format, Value a = {}, Value bValue = {}) {
  ImplicitLocOpBuilder b(at->getLoc(), at);
  SmallVector<Operation *> rest = opsUntil(at);
  bool guarded = inParallelCode(at) && canGuard(rest);
  Value failed =
      arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1));
  auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFailed.thenBlock());
  Value kindValue =
      arith::ConstantIntOp::create(b, static_cast<int32_t>(kind), 32);
  LLVM::CallOp::create(
      b, runtime.reportFunction(/*stops=*/!guarded),
      ValueRange{kindValue, runtime.string(b, b.getLoc(), format),
                 asI64(b, b.getLoc(), a), asI64(b, b.getLoc(), bValue)});
  if (guarded)
    guard(rest, ok, at->getLoc());
}

/// Checks inside kernels that soac-lower-kernel-checks could not guard
/// (what follows them yields a buffer): the kernel traps.
bool inKernel(Operation *op) {
  return op->getParentOfType<gpu::GPUModuleOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

/// The sequential loops a check of `operands` at `check` may run before:
/// from the innermost, each holding the previous (or the check) at the top
/// level of its body, so that every iteration runs it, and none changing
/// the operands or the bounds of the loops inside. A check that passes
/// before them passes in every iteration; one that fails would have failed
/// in the first (or the loops do not run, which the hoisted check tests).
/// A bounds check of a row of a loop-invariant size by a constant index
/// (BA's gradient reads 11 camera parameters per observation) then runs
/// once, not once per iteration. Not in parallel code, where a failure is
/// recorded and skips the rest of its block.
SmallVector<scf::ForOp> loopsToHoistOutOf(Operation *check,
                                          ValueRange operands) {
  SmallVector<scf::ForOp> loops;
  if (inParallelCode(check))
    return loops;
  SmallVector<Value> needed(operands.begin(), operands.end());
  Operation *inner = check;
  while (auto loop = dyn_cast<scf::ForOp>(inner->getParentOp())) {
    if (!llvm::all_of(needed, [&](Value value) {
          return loop.isDefinedOutsideOfLoop(value);
        }))
      break;
    loops.push_back(loop);
    needed.append({loop.getLowerBound(), loop.getUpperBound()});
    inner = loop;
  }
  return loops;
}

/// `ok`, or the loops around it not running: the condition of a check run
/// before them (`loops`, innermost first) instead of in their bodies.
Value okOrSkipped(OpBuilder &b, Location loc, Value ok,
                  ArrayRef<scf::ForOp> loops) {
  for (scf::ForOp loop : loops) {
    auto runs = loop.getUnsignedCmp() ? arith::CmpIPredicate::ult
                                      : arith::CmpIPredicate::slt;
    Value empty = arith::XOrIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, runs, loop.getLowerBound(),
                              loop.getUpperBound()),
        arith::ConstantIntOp::create(b, loc, 1, 1));
    ok = arith::OrIOp::create(b, loc, ok, empty);
  }
  return ok;
}

/// The text a printf `format` of `%lld`s and `%%`s prints, with `?` for
/// each value.
std::string formatWithoutValues(StringRef format) {
  std::string text;
  while (!format.empty()) {
    if (format.consume_front("%%"))
      text += '%';
    else if (format.consume_front("%lld"))
      text += '?';
    else {
      text += format.front();
      format = format.drop_front();
    }
  }
  return text;
}

/// Lowers a soac.check_index, soac.check or cf.assert of host code to a
/// call of the runtime when it fails, before the loops it may be hoisted
/// out of. In a kernel (a check soac-lower-kernel-checks could not guard)
/// it becomes a cf.assert, which traps, and whose message cannot show the
/// values.
void lowerCheck(Runtime &runtime, Operation *check) {
  auto index = dyn_cast<soac::CheckIndexOp>(check);
  if (inKernel(check)) {
    OpBuilder b(check);
    CheckedCondition condition = checkedCondition(b, check);
    std::string message =
        index ? locationPrefix(check->getLoc()) + index.getWhat().str() +
                    ": index out of range"
              : formatWithoutValues(condition.format);
    cf::AssertOp::create(b, check->getLoc(), condition.ok, message);
  } else {
    SmallVector<scf::ForOp> loops =
        loopsToHoistOutOf(check, check->getOperands());
    Operation *at = loops.empty() ? check : loops.back();
    OpBuilder b(at);
    CheckedCondition condition = checkedCondition(b, check);
    Value ok = okOrSkipped(b, check->getLoc(), condition.ok, loops);
    emitCheck(runtime, at, ok, condition.kind, condition.format,
              condition.first, condition.second);
  }
  if (index)
    index.replaceAllUsesWith(index.getIndex());
  check->erase();
}

/// The size in bytes of `alloc`'s buffer and whether computing it
/// overflowed (or exceeded kMaxAllocationBytes).
std::pair<Value, Value> allocationBytes(ImplicitLocOpBuilder &b,
                                        memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  uint64_t elementBytes =
      DataLayout::closest(alloc).getTypeSize(type.getElementType());
  Value bytes = arith::ConstantIndexOp::create(
      b, std::max<int64_t>(static_cast<int64_t>(elementBytes), 1));
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value overflow = arith::ConstantIntOp::create(b, 0, 1);
  unsigned dynamic = 0;
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    Value size = type.isDynamicDim(dim)
                     ? alloc.getDynamicSizes()[dynamic++]
                     : arith::ConstantIndexOp::create(b, type.getDimSize(dim));
    auto product = arith::MulUIExtendedOp::create(b, bytes, size);
    bytes = product.getLow();
    overflow = arith::OrIOp::create(
        b, overflow,
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, product.getHigh(),
                              zero));
  }
  Value tooLarge = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ugt, bytes,
      arith::ConstantIndexOp::create(b, kMaxAllocationBytes));
  return {bytes, arith::OrIOp::create(b, overflow, tooLarge)};
}

/// A buffer whose size overflows is never allocated; one that malloc cannot
/// give is never used.
void checkAllocation(Runtime &runtime, memref::AllocOp alloc) {
  std::string what = locationPrefix(alloc.getLoc()) + "cannot allocate " +
                     escapePercents(llvm::formatv("{0}", alloc.getType()).str());
  ImplicitLocOpBuilder b(alloc.getLoc(), alloc);
  auto [bytes, overflow] = allocationBytes(b, alloc);
  if (!alloc.getDynamicSizes().empty()) {
    Value fits = arith::XOrIOp::create(b, overflow,
                                       arith::ConstantIntOp::create(b, 1, 1));
    emitCheck(runtime, alloc, fits, FailureKind::Memory,
              what + ": its size in bytes overflows");
  }
  Operation *next = alloc->getNextNode();
  b.setInsertionPoint(next);
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, alloc);
  Value allocated = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ne, address, arith::ConstantIndexOp::create(b, 0));
  emitCheck(runtime, next, allocated, FailureKind::Memory,
            what + " (%lld bytes): out of memory", bytes);
}

/// `soac_parallel_call()` before `loop` and `soac_parallel_check(call)`
/// after it: the call stops after the loop if a check failed in it. Returns
/// the call.
Value stopAfter(Runtime &runtime, Operation *loop) {
  Type pointer = runtime.pointer();
  ImplicitLocOpBuilder b(loop->getLoc(), loop);
  Value call = LLVM::CallOp::create(
                   b, runtime.function("soac_parallel_call", {}, pointer),
                   ValueRange{})
                   .getResult();
  b.setInsertionPointAfter(loop);
  LLVM::CallOp::create(b, runtime.function("soac_parallel_check", {pointer}),
                       ValueRange{call});
  return call;
}

/// Each thread of a parallel region works for the call that started it: the
/// runtime records its failures (and its allocations) there, and the call
/// stops after the region if one failed.
void trackParallelRegion(Runtime &runtime, omp::ParallelOp region) {
  Type pointer = runtime.pointer();
  Value call = stopAfter(runtime, region);
  ImplicitLocOpBuilder b(region.getLoc(), region);
  b.setInsertionPointToStart(&region.getRegion().front());
  LLVM::CallOp::create(b, runtime.function("soac_parallel_enter", {pointer}),
                       ValueRange{call});
  region.walk([&](omp::TerminatorOp end) {
    if (end->getParentOp() != region)
      return;
    b.setInsertionPoint(end);
    LLVM::CallOp::create(b, runtime.function("soac_parallel_exit", {}),
                         ValueRange{});
  });
}

/// Erases every cf.assert of a condition that a dominating cf.assert
/// checks: it cannot fail where that one passed. The lowered SOACs compare
/// the same sizes wherever they read a tensor's rows (vector mode's reduce
/// of 26 vectors asserted 85 conditions 2,028 times), and in a parallel
/// region each check below nests the rest of its block in one more scf.if.
void eraseRepeatedAsserts(ModuleOp module) {
  DominanceInfo dominance(module);
  DenseMap<Value, SmallVector<cf::AssertOp>> asserted;
  SmallVector<cf::AssertOp> repeated;
  module.walk([&](cf::AssertOp check) {
    SmallVector<cf::AssertOp> &same = asserted[check.getArg()];
    if (llvm::any_of(same, [&](cf::AssertOp earlier) {
          return dominance.properlyDominates(earlier.getOperation(),
                                             check.getOperation());
        }))
      repeated.push_back(check);
    same.push_back(check);
  });
  for (cf::AssertOp check : repeated)
    check.erase();
}

struct SoacLowerChecksPass
    : soac::impl::SoacLowerChecksBase<SoacLowerChecksPass> {
  using SoacLowerChecksBase::SoacLowerChecksBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    eraseRepeatedAsserts(module);
    Runtime runtime(module);
    SmallVector<Operation *> checks;
    SmallVector<omp::ParallelOp> regions;
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](Operation *op) {
      if (auto region = dyn_cast<omp::ParallelOp>(op))
        regions.push_back(region);
      else if (auto loop = dyn_cast<scf::ParallelOp>(op);
               loop && !loop->getParentOfType<scf::ParallelOp>() &&
               !loop->getParentOfType<omp::ParallelOp>())
        loops.push_back(loop); // runs on one thread (openmp=false)
      else if (isa<soac::CheckIndexOp, soac::CheckOp>(op) ||
               (isa<cf::AssertOp, memref::AllocOp>(op) && !inKernel(op)))
        checks.push_back(op);
    });
    for (omp::ParallelOp region : regions)
      trackParallelRegion(runtime, region);
    for (scf::ParallelOp loop : loops)
      stopAfter(runtime, loop);
    for (Operation *op : checks) {
      if (isCheck(op))
        lowerCheck(runtime, op);
      else
        checkAllocation(runtime, cast<memref::AllocOp>(op));
    }
  }
};

} // namespace
