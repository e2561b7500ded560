//===- RuntimeChecks.cpp - what the lowerings of run-time checks share ----===//
#include "passes/Conversion/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace soac::checks {

LLVM::LLVMFuncOp Runtime::function(StringRef name, ArrayRef<Type> arguments,
                                   Type result) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MLIRContext *context = module.getContext();
  auto type = LLVM::LLVMFunctionType::get(
      result ? result : LLVM::LLVMVoidType::get(context), arguments);
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

LLVM::LLVMFuncOp Runtime::reportFunction(bool stops) {
  OpBuilder b(module.getContext());
  Type i64 = b.getI64Type();
  LLVM::LLVMFuncOp report =
      function(stops ? "soac_report_error" : "soac_record_error",
               {b.getI32Type(), pointer(), i64, i64});
  // Failures are rare, and a reported one does not come back: LLVM then
  // lays the check out as a cold branch and knows it passed after it (a
  // check in a hot loop costs GMM's gradient 25 % without this).
  if (!report->hasAttr("passthrough")) {
    SmallVector<Attribute> attributes{b.getStringAttr("cold"),
                                      b.getStringAttr("nounwind")};
    if (stops)
      attributes.push_back(b.getStringAttr("noreturn"));
    report->setAttr("passthrough", b.getArrayAttr(attributes));
  }
  return report;
}

Value Runtime::string(OpBuilder &b, Location loc, StringRef text) {
  OpBuilder top = OpBuilder::atBlockBegin(module.getBody());
  std::string bytes = (text + StringRef("\0", 1)).str();
  auto type = LLVM::LLVMArrayType::get(top.getI8Type(), bytes.size());
  // Numbered past the strings already there: the kernel checks' pass and
  // the host checks' pass both add some to one module.
  if (!strings) {
    strings = 0;
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      StringRef existing = global.getSymName();
      unsigned number;
      if (existing.consume_front("soac_check_") &&
          !existing.getAsInteger(10, number))
        strings = std::max(*strings, number + 1);
    }
  }
  std::string name = llvm::formatv("soac_check_{0}", (*strings)++).str();
  auto global = LLVM::GlobalOp::create(top, module.getLoc(), type,
                                       /*isConstant=*/true,
                                       LLVM::Linkage::Private, name,
                                       top.getStringAttr(bytes));
  return LLVM::AddressOfOp::create(b, loc, global);
}

Type Runtime::pointer() { return LLVM::LLVMPointerType::get(module.getContext()); }

std::string escapePercents(StringRef text) {
  std::string escaped;
  for (char c : text) {
    escaped += c;
    if (c == '%')
      escaped += '%';
  }
  return escaped;
}

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

std::string indexCheckMessage(soac::CheckIndexOp check) {
  return locationPrefix(check.getLoc()) + escapePercents(check.getWhat()) +
         ": index %lld is out of range for size %lld";
}

CheckedCondition checkedCondition(OpBuilder &b, Operation *check) {
  if (auto index = dyn_cast<soac::CheckIndexOp>(check)) {
    Value ok = arith::CmpIOp::create(b, check->getLoc(),
                                     arith::CmpIPredicate::ult,
                                     index.getIndex(), index.getSize());
    return {ok, FailureKind::Index, indexCheckMessage(index), index.getIndex(),
            index.getSize()};
  }
  if (auto sizes = dyn_cast<soac::CheckOp>(check)) {
    // Its message is already a format for its values.
    ValueRange values = sizes.getValues();
    return {sizes.getCondition(), FailureKind::Check,
            locationPrefix(check->getLoc()) + sizes.getMessage().str(),
            values.size() > 0 ? values[0] : Value(),
            values.size() > 1 ? values[1] : Value()};
  }
  // A cf.assert of soac's lowerings names its location in its message.
  auto assertion = cast<cf::AssertOp>(check);
  return {assertion.getArg(), FailureKind::Check,
          escapePercents(assertion.getMsg()), Value(), Value()};
}

bool isCheck(Operation *op) {
  return isa<soac::CheckIndexOp, soac::CheckOp, cf::AssertOp>(op);
}

Value asI64(OpBuilder &b, Location loc, Value value) {
  if (!value)
    return arith::ConstantIntOp::create(b, loc, 0, 64);
  if (value.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
  return value;
}

SmallVector<Operation *> opsUntil(Operation *first, Operation *end) {
  SmallVector<Operation *> ops;
  for (Operation *op = first;
       op && op != end && !op->hasTrait<OpTrait::IsTerminator>();
       op = op->getNextNode())
    ops.push_back(op);
  return ops;
}

namespace {

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

/// The results of `ops` used outside them.
SmallVector<Value> escapingValues(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  SmallVector<Value> escaping;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
            return !ancestor || !inside.contains(ancestor);
          }))
        escaping.push_back(result);
  return escaping;
}

} // namespace

bool canGuard(ArrayRef<Operation *> ops) {
  return llvm::all_of(escapingValues(ops), [](Value value) {
    return isa<IntegerType, IndexType, FloatType, VectorType,
               LLVM::LLVMPointerType>(value.getType());
  });
}

void guard(ArrayRef<Operation *> ops, Value ok, Location loc) {
  if (ops.empty())
    return;
  SmallVector<Value> escaping = escapingValues(ops);
  OpBuilder b(ops.front());
  auto guarded = scf::IfOp::create(b, loc, ValueRange(escaping).getTypes(), ok,
                                   /*withElseRegion=*/!escaping.empty());
  Block *then = guarded.thenBlock();
  for (Operation *op : ops) {
    if (then->mightHaveTerminator())
      op->moveBefore(then->getTerminator());
    else
      op->moveBefore(then, then->end());
  }
  if (!escaping.empty()) {
    b.setInsertionPointToEnd(then);
    scf::YieldOp::create(b, loc, escaping);
    b.setInsertionPointToEnd(guarded.elseBlock());
    SmallVector<Value> zeros;
    for (Value value : escaping)
      zeros.push_back(zeroOf(b, loc, value.getType()));
    scf::YieldOp::create(b, loc, zeros);
  }
  for (auto [value, result] : llvm::zip(escaping, guarded.getResults()))
    value.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !guarded->isAncestor(use.getOwner());
    });
}

} // namespace soac::checks
