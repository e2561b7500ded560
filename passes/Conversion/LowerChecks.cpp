//===- LowerChecks.cpp - soac-lower-checks --------------------------------===//
//
// A failed cf.assert aborts the process (convert-cf-to-llvm), which takes a
// Python interpreter down with it. On the CPU every run-time check of host
// code (cf.assert, soac.check_index, the size and the success of each
// allocation) calls soac's runtime instead when it fails:
//
// - on the calling thread, soac_report_error stops the call made through
//   soac_call_checked (a longjmp), which frees what the call allocated and
//   returns the message;
// - inside a parallel loop the other threads cannot be stopped, so
//   soac_record_error records the first failure and the rest of the check's
//   block is skipped (guardRest); the call stops when the parallel region
//   ends (soac_parallel_check).
//
// Kinds of failure (the runtime's soac_failure_kind, Python's error classes)
// are numbered as in runtime/soac_calls.h.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

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

enum class FailureKind : int32_t { Check = 1, Index = 2, Memory = 3 };

/// Buffers larger than this are refused as overflowing: no machine has that
/// much memory, and sizes computed from negative numbers land above it.
constexpr int64_t kMaxAllocationBytes = int64_t(1) << 62;

/// The runtime functions compiled code calls, declared once per module, and
/// the constant strings it passes them.
class Runtime {
public:
  explicit Runtime(ModuleOp module) : module(module) {}

  /// `llvm.func @name(types) -> result`, declared on first use.
  LLVM::LLVMFuncOp function(StringRef name, ArrayRef<Type> arguments,
                            Type result = {}) {
    if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      return existing;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    MLIRContext *context = module.getContext();
    auto type = LLVM::LLVMFunctionType::get(
        result ? result : LLVM::LLVMVoidType::get(context), arguments);
    return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
  }

  /// The address of a private constant global holding `text` and a NUL.
  Value string(OpBuilder &b, Location loc, StringRef text) {
    OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
    std::string bytes = (text + StringRef("\0", 1)).str();
    auto type = LLVM::LLVMArrayType::get(top.getI8Type(), bytes.size());
    auto global = LLVM::GlobalOp::create(
        top, module.getLoc(), type, /*isConstant=*/true,
        LLVM::Linkage::Private,
        llvm::formatv("soac_check_{0}", strings++).str(),
        top.getStringAttr(bytes));
    return LLVM::AddressOfOp::create(b, loc, global);
  }

  Type pointer() { return LLVM::LLVMPointerType::get(module.getContext()); }

private:
  ModuleOp module;
  unsigned strings = 0;
};

std::string escapePercents(StringRef text) {
  std::string escaped;
  for (char c : text) {
    escaped += c;
    if (c == '%')
      escaped += '%';
  }
  return escaped;
}

/// What the message of a failed check at `loc` starts with: the source
/// location as `file:line:col: ` (printf's `%` escaped), or nothing.
std::string locationPrefix(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return escapePercents(llvm::formatv("{0}:{1}:{2}: ",
                                        file.getFilename().getValue(),
                                        file.getLine(), file.getColumn())
                              .str());
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    return locationPrefix(fused.getLocations().front());
  if (auto named = dyn_cast<NameLoc>(loc))
    return locationPrefix(named.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationPrefix(call.getCallee());
  return "";
}

/// Whether a check at `op` may run on a thread of a parallel region: inside
/// a parallel loop, or in a private function that one may call.
bool inParallelCode(Operation *op) {
  if (op->getParentOfType<omp::ParallelOp>() ||
      op->getParentOfType<scf::ParallelOp>())
    return true;
  auto function = op->getParentOfType<FunctionOpInterface>();
  return function && function.isPrivate();
}

/// A constant zero of `type`, or null for types that have none here.
Value zeroOf(OpBuilder &b, Location loc, Type type) {
  if (isa<IntegerType, IndexType, FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  if (auto vector = dyn_cast<VectorType>(type))
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(vector));
  if (isa<LLVM::LLVMPointerType>(type))
    return LLVM::ZeroOp::create(b, loc, type);
  return {};
}

/// The ops from `first` to the end of its block, terminator excluded.
SmallVector<Operation *> restOfBlock(Operation *first) {
  SmallVector<Operation *> rest;
  for (Operation *op = first;
       op && !op->hasTrait<OpTrait::IsTerminator>(); op = op->getNextNode())
    rest.push_back(op);
  return rest;
}

/// The results of `ops` used outside them.
SmallVector<Value> escapingValues(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  SmallVector<Value> escaping;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            Operation *ancestor =
                op->getBlock()->findAncestorOpInBlock(*user);
            return !ancestor || !inside.contains(ancestor);
          }))
        escaping.push_back(result);
  return escaping;
}

/// Whether the ops from `first` to the end of its block can run under
/// `scf.if %ok`: every value they yield to the rest of the program has a
/// zero for when they are skipped.
bool canGuard(Operation *first) {
  for (Value value : escapingValues(restOfBlock(first))) {
    Type type = value.getType();
    if (!isa<IntegerType, IndexType, FloatType, VectorType,
             LLVM::LLVMPointerType>(type))
      return false;
  }
  return true;
}

/// Moves the ops after `check` in its block into `scf.if %ok`, whose
/// results (zeros when `ok` is false) replace the values they yield to the
/// rest of the program.
void guardRest(Operation *check, Value ok) {
  SmallVector<Operation *> rest = restOfBlock(check->getNextNode());
  if (rest.empty())
    return;
  SmallVector<Value> escaping = escapingValues(rest);
  OpBuilder b(rest.front());
  Location loc = check->getLoc();
  auto guard = scf::IfOp::create(b, loc, ValueRange(escaping).getTypes(), ok,
                                 /*withElseRegion=*/!escaping.empty());
  Block *then = guard.thenBlock();
  for (Operation *op : rest) {
    if (then->mightHaveTerminator())
      op->moveBefore(then->getTerminator());
    else
      op->moveBefore(then, then->end());
  }
  if (!escaping.empty()) {
    b.setInsertionPointToEnd(then);
    scf::YieldOp::create(b, loc, escaping);
    b.setInsertionPointToEnd(guard.elseBlock());
    SmallVector<Value> zeros;
    for (Value value : escaping)
      zeros.push_back(zeroOf(b, loc, value.getType()));
    scf::YieldOp::create(b, loc, zeros);
  }
  for (auto [value, result] : llvm::zip(escaping, guard.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !guard->isAncestor(use.getOwner());
    });
}

/// Emits, before `at`, a check that `ok` holds: when it does not, the
/// runtime gets `kind`, the printf `format` (two `%lld`s at most) and the
/// values `a` and `b` (index or integer). In parallel code the rest of the
/// block after the check is skipped on failure.
void emitCheck(Runtime &runtime, Operation *at, Value ok, FailureKind kind,
               StringRef format, Value a = {}, Value bValue = {}) {
  ImplicitLocOpBuilder b(at->getLoc(), at);
  bool guarded = inParallelCode(at) && canGuard(at);
  Type i64 = b.getI64Type();
  auto asI64 = [&](Value value) -> Value {
    if (!value)
      return arith::ConstantIntOp::create(b, 0, 64);
    if (value.getType().isIndex())
      return arith::IndexCastOp::create(b, i64, value);
    return value;
  };
  Value failed =
      arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1));
  auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifFailed.thenBlock());
  Value kindValue =
      arith::ConstantIntOp::create(b, static_cast<int32_t>(kind), 32);
  LLVM::LLVMFuncOp report = runtime.function(
      guarded ? "soac_record_error" : "soac_report_error",
      {b.getI32Type(), runtime.pointer(), i64, i64});
  // Failures are rare, and a reported one does not come back: LLVM then
  // lays the check out as a cold branch and knows it passed after it (a
  // check in a hot loop costs GMM's gradient 25 % without this).
  if (!report->hasAttr("passthrough")) {
    SmallVector<Attribute> attributes{b.getStringAttr("cold"),
                                      b.getStringAttr("nounwind")};
    if (!guarded)
      attributes.push_back(b.getStringAttr("noreturn"));
    report->setAttr("passthrough", b.getArrayAttr(attributes));
  }
  LLVM::CallOp::create(b, report,
                       ValueRange{kindValue,
                                  runtime.string(b, b.getLoc(), format),
                                  asI64(a), asI64(bValue)});
  if (guarded)
    guardRest(ifFailed, ok);
}

bool inKernel(Operation *op) {
  return op->getParentOfType<gpu::GPUModuleOp>() ||
         op->getParentOfType<gpu::LaunchOp>();
}

void lowerAssert(Runtime &runtime, cf::AssertOp check) {
  emitCheck(runtime, check, check.getArg(), FailureKind::Check,
            escapePercents(check.getMsg()));
  check.erase();
}

void lowerIndexCheck(Runtime &runtime, soac::CheckIndexOp check,
                     bool reportToRuntime) {
  OpBuilder b(check);
  Value ok = arith::CmpIOp::create(b, check.getLoc(), arith::CmpIPredicate::ult,
                                   check.getIndex(), check.getSize());
  if (!reportToRuntime || inKernel(check)) {
    cf::AssertOp::create(b, check.getLoc(), ok,
                         locationPrefix(check.getLoc()) + check.getWhat().str() +
                             ": index out of range");
  } else {
    std::string format = locationPrefix(check.getLoc()) +
                         escapePercents(check.getWhat()) +
                         ": index %lld is out of range for size %lld";
    emitCheck(runtime, check, ok, FailureKind::Index, format, check.getIndex(),
              check.getSize());
  }
  check.replaceAllUsesWith(check.getIndex());
  check.erase();
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

/// A soac.check: its message is already a format for its values. Kernels
/// and code that does not report to the runtime get a cf.assert, whose
/// message cannot show them.
void lowerCheck(Runtime &runtime, soac::CheckOp check, bool reportToRuntime) {
  std::string format = locationPrefix(check.getLoc()) + check.getMessage().str();
  ValueRange values = check.getValues();
  if (!reportToRuntime || inKernel(check)) {
    OpBuilder b(check);
    cf::AssertOp::create(b, check.getLoc(), check.getCondition(),
                         formatWithoutValues(format));
  } else {
    emitCheck(runtime, check, check.getCondition(), FailureKind::Check, format,
              values.size() > 0 ? values[0] : Value(),
              values.size() > 1 ? values[1] : Value());
  }
  check.erase();
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
    if (reportToRuntime) {
      for (omp::ParallelOp region : regions)
        trackParallelRegion(runtime, region);
      for (scf::ParallelOp loop : loops)
        stopAfter(runtime, loop);
    }
    for (Operation *op : checks) {
      if (auto check = dyn_cast<soac::CheckIndexOp>(op))
        lowerIndexCheck(runtime, check, reportToRuntime);
      else if (auto check = dyn_cast<soac::CheckOp>(op))
        lowerCheck(runtime, check, reportToRuntime);
      else if (!reportToRuntime)
        continue;
      else if (auto check = dyn_cast<cf::AssertOp>(op))
        lowerAssert(runtime, check);
      else
        checkAllocation(runtime, cast<memref::AllocOp>(op));
    }
  }
};

} // namespace
