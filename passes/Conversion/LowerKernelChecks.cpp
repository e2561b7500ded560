//===- LowerKernelChecks.cpp - soac-lower-kernel-checks -------------------===//
//
// A failed check inside a GPU kernel cannot stop the call: the threads that
// find it record it and skip what it guards, and the runtime stops the call
// once the kernel has finished. The failure record is four i64s the runtime
// gives the calling thread (soac_failure_record): the failed check's kind
// (0: none), the address of its message (a host string the kernel only
// copies), then its two values (an index and its size). Threads race for the
// first word with a compare-and-swap; the winner writes the rest. After the
// launch, host code calls soac_check_kernel_failures: the CPU's emulation
// and managed memory report a recorded failure there and then; in device
// memory the runtime reads the record at its next wait for the stream (a
// host read of a buffer, the call's end), so launches stay in flight.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"
#include "passes/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {
#define GEN_PASS_DEF_SOACLOWERKERNELCHECKS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac::checks;

namespace {

/// Words of the failure record (runtime/soac_runtime.c, soac_cuda_runtime.c).
enum RecordWord { kKind = 0, kMessage = 1, kFirstValue = 2, kSecondValue = 3 };

/// Whether `op` is, or holds, an op the threads of a block wait for each
/// other at: a thread that skipped it would hang the others.
bool synchronizes(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<gpu::BarrierOp, gpu::ShuffleOp, gpu::AllReduceOp,
                   gpu::SubgroupReduceOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// What a failed `check` skips: the ops after it in its block, up to the
/// first that synchronizes; empty when they cannot be skipped (a buffer
/// computed there is used later, or the checked index is used past them).
std::optional<SmallVector<Operation *>> guardedOps(Operation *check) {
  Operation *end = nullptr;
  for (Operation *op = check->getNextNode(); op; op = op->getNextNode())
    if (synchronizes(op)) {
      end = op;
      break;
    }
  SmallVector<Operation *> ops = opsUntil(check->getNextNode(), end);
  if (!canGuard(ops))
    return std::nullopt;
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  for (Operation *user : check->getUsers()) {
    Operation *ancestor = check->getBlock()->findAncestorOpInBlock(*user);
    if (!ancestor || !inside.contains(ancestor))
      return std::nullopt;
  }
  return ops;
}

Value recordWord(ImplicitLocOpBuilder &b, Value record, RecordWord word) {
  if (word == kKind)
    return record;
  return LLVM::GEPOp::create(b, record.getType(), b.getI64Type(), record,
                             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(word)});
}

/// In the kernel: when `ok` is false, the failure (its `kind`, the address
/// of its `message` as an i64, its values `a`, `bValue`) becomes the
/// record's unless another got there first.
void recordFailure(ImplicitLocOpBuilder &b, Value record, Value ok,
                   FailureKind kind, Value message, Value a, Value bValue) {
  Value failed =
      arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1));
  auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFailed.thenBlock());
  Value none = arith::ConstantIntOp::create(b, 0, 64);
  Value mine = arith::ConstantIntOp::create(b, static_cast<int64_t>(kind), 64);
  auto exchange = LLVM::AtomicCmpXchgOp::create(
      b, record, none, mine, LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic);
  Value won = LLVM::ExtractValueOp::create(b, exchange, 1);
  auto ifWon = scf::IfOp::create(b, won, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifWon.thenBlock());
  LLVM::StoreOp::create(b, message, recordWord(b, record, kMessage));
  LLVM::StoreOp::create(b, asI64(b, b.getLoc(), a),
                        recordWord(b, record, kFirstValue));
  LLVM::StoreOp::create(b, asI64(b, b.getLoc(), bValue),
                        recordWord(b, record, kSecondValue));
}

/// Lowers `check` to a recorded failure and a guard; false when it cannot
/// be guarded (it stays, and traps). Its message is a host string whose
/// address `host` (before the launch) computes and the kernel copies.
bool lowerKernelCheck(Runtime &runtime, OpBuilder &host, Operation *check,
                      Value record) {
  std::optional<SmallVector<Operation *>> guarded = guardedOps(check);
  if (!guarded)
    return false;
  ImplicitLocOpBuilder b(check->getLoc(), check);
  CheckedCondition condition = checkedCondition(b, check);
  Value message = LLVM::PtrToIntOp::create(
      host, check->getLoc(), host.getI64Type(),
      runtime.string(host, check->getLoc(), condition.format));
  {
    OpBuilder::InsertionGuard point(b);
    recordFailure(b, record, condition.ok, condition.kind, message,
                  condition.first, condition.second);
  }
  guard(*guarded, condition.ok, check->getLoc());
  if (auto index = dyn_cast<soac::CheckIndexOp>(check))
    index.replaceAllUsesWith(index.getIndex());
  check->erase();
  return true;
}

struct SoacLowerKernelChecksPass
    : soac::impl::SoacLowerKernelChecksBase<SoacLowerKernelChecksPass> {
  void runOnOperation() override {
    Runtime runtime(getOperation());
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    for (gpu::LaunchOp launch : launches) {
      SmallVector<Operation *> checks;
      launch.getBody().walk([&](Operation *op) {
        if (isCheck(op))
          checks.push_back(op);
      });
      if (checks.empty())
        continue;
      if (launch.getAsyncToken()) {
        launch.emitOpError("is asynchronous: the failures of the checks in "
                           "its kernel cannot be read after it (soac's "
                           "pipelines launch synchronously)");
        return signalPassFailure();
      }
      OpBuilder host(launch);
      Value record =
          LLVM::CallOp::create(
              host, launch.getLoc(),
              runtime.function("soac_failure_record", {}, runtime.pointer()),
              ValueRange{})
              .getResult();
      bool lowered = false;
      for (Operation *check : checks)
        lowered |= lowerKernelCheck(runtime, host, check, record);
      if (!lowered) {
        record.getDefiningOp()->erase();
        continue;
      }
      host.setInsertionPointAfter(launch);
      LLVM::CallOp::create(host, launch.getLoc(),
                           runtime.function("soac_check_kernel_failures", {}),
                           ValueRange{});
    }
  }
};

} // namespace
