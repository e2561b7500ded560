//===- LowerKernelChecks.cpp - soac-lower-kernel-checks -------------------===//
//
// A failed check inside a GPU kernel cannot stop the call: the threads that
// find it record it and skip what it guards, and the host stops the call
// after the launch. The failure record is three i64s the runtime gives the
// calling thread (soac_failure_record): the number of the launch's first
// failed check (0: none), then its two values (an index and its size).
// Threads race for the first word with a compare-and-swap; the winner writes
// the values. The host reads the record once the launch has finished: it
// first waits for the kernels of its stream (soac_wait_for_kernels; in
// device memory the runtime leaves other launches in flight), so no fence is
// needed.
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

/// Words of the failure record.
enum RecordWord { kFailedCheck = 0, kFirstValue = 1, kSecondValue = 2 };

/// A check of a kernel the host reports, numbered from 1 within its launch.
struct KernelCheck {
  Location loc;
  FailureKind kind;
  std::string message;
};

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
  if (word == kFailedCheck)
    return record;
  return LLVM::GEPOp::create(b, record.getType(), b.getI64Type(), record,
                             ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(word)});
}

/// In the kernel: when `ok` is false, check `number` (and its values `a`,
/// `bValue`) becomes the record's failure unless another got there first.
void recordFailure(ImplicitLocOpBuilder &b, Value record, Value ok,
                   int64_t number, Value a, Value bValue) {
  Value failed =
      arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1));
  auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFailed.thenBlock());
  Value none = arith::ConstantIntOp::create(b, 0, 64);
  Value mine = arith::ConstantIntOp::create(b, number, 64);
  auto exchange = LLVM::AtomicCmpXchgOp::create(
      b, record, none, mine, LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic);
  Value won = LLVM::ExtractValueOp::create(b, exchange, 1);
  auto ifWon = scf::IfOp::create(b, won, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifWon.thenBlock());
  LLVM::StoreOp::create(b, asI64(b, b.getLoc(), a),
                        recordWord(b, record, kFirstValue));
  LLVM::StoreOp::create(b, asI64(b, b.getLoc(), bValue),
                        recordWord(b, record, kSecondValue));
}

/// Lowers `check` (the `number`th of its launch) to a recorded failure and
/// a guard, and returns what the host reports of it; none when it cannot
/// be guarded (it stays, and traps).
std::optional<KernelCheck> lowerKernelCheck(Operation *check, Value record,
                                            int64_t number) {
  std::optional<SmallVector<Operation *>> guarded = guardedOps(check);
  if (!guarded)
    return std::nullopt;
  ImplicitLocOpBuilder b(check->getLoc(), check);
  CheckedCondition condition = checkedCondition(b, check);
  {
    OpBuilder::InsertionGuard point(b);
    recordFailure(b, record, condition.ok, number, condition.first,
                  condition.second);
  }
  guard(*guarded, condition.ok, check->getLoc());
  if (auto index = dyn_cast<soac::CheckIndexOp>(check))
    index.replaceAllUsesWith(index.getIndex());
  KernelCheck reported{check->getLoc(), condition.kind, condition.format};
  check->erase();
  return reported;
}

/// After `launch`: when one of its `checks` failed, the record is cleared
/// and the call stops with that check's message.
void reportAfter(Runtime &runtime, gpu::LaunchOp launch, Value record,
                 ArrayRef<KernelCheck> checks) {
  ImplicitLocOpBuilder b(launch.getLoc(), launch->getBlock(),
                         std::next(launch->getIterator()));
  LLVM::CallOp::create(b, runtime.function("soac_wait_for_kernels", {}),
                       ValueRange{});
  Type i64 = b.getI64Type();
  Value failedCheck = LLVM::LoadOp::create(b, i64, record);
  Value failed =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ne, failedCheck,
                            arith::ConstantIntOp::create(b, 0, 64));
  auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFailed.thenBlock());
  Value a = LLVM::LoadOp::create(b, i64, recordWord(b, record, kFirstValue));
  Value size =
      LLVM::LoadOp::create(b, i64, recordWord(b, record, kSecondValue));
  // The next launch of this thread starts from a clear record.
  LLVM::StoreOp::create(b, arith::ConstantIntOp::create(b, 0, 64), record);
  SmallVector<int64_t> numbers;
  for (size_t i = 0; i < checks.size(); ++i)
    numbers.push_back(static_cast<int64_t>(i) + 1);
  auto which = scf::IndexSwitchOp::create(
      b, TypeRange{},
      arith::IndexCastOp::create(b, b.getIndexType(), failedCheck), numbers,
      numbers.size());
  LLVM::LLVMFuncOp report = runtime.reportFunction(/*stops=*/true);
  for (auto [check, region] : llvm::zip(checks, which.getCaseRegions())) {
    b.setInsertionPointToStart(&region.emplaceBlock());
    Value kind =
        arith::ConstantIntOp::create(b, static_cast<int32_t>(check.kind), 32);
    LLVM::CallOp::create(
        b, report,
        ValueRange{kind, runtime.string(b, check.loc, check.message),
                   a, size});
    scf::YieldOp::create(b);
  }
  b.setInsertionPointToStart(&which.getDefaultRegion().emplaceBlock());
  scf::YieldOp::create(b);
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
      OpBuilder b(launch);
      Value record =
          LLVM::CallOp::create(
              b, launch.getLoc(),
              runtime.function("soac_failure_record", {}, runtime.pointer()),
              ValueRange{})
              .getResult();
      SmallVector<KernelCheck> lowered;
      for (Operation *check : checks)
        if (std::optional<KernelCheck> reported =
                lowerKernelCheck(check, record, lowered.size() + 1))
          lowered.push_back(std::move(*reported));
      if (lowered.empty()) {
        record.getDefiningOp()->erase();
        continue;
      }
      reportAfter(runtime, launch, record, lowered);
    }
  }
};

} // namespace
