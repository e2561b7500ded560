//===- ReverseEngine.cpp - reverse-mode AD by re-execution ----------------===//
#include "passes/AutoDiff/Engine/ReverseEngine.h"

#include "dialect/SoacOps.h"
#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/CustomRules.h"
#include "passes/AutoDiff/Engine/LaneChunks.h"
#include "passes/AutoDiff/Engine/ResultsFromAdjoint.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace soac::autodiff {

//===----------------------------------------------------------------------===//
// Activity
//===----------------------------------------------------------------------===//

Activity::Activity(func::FuncOp function, ArrayRef<int64_t> wrt) {
  for (int64_t position : wrt) {
    Value arg = function.getArgument(position);
    if (isDifferentiableType(arg.getType()))
      active.insert(arg);
  }
  auto markActive = [&](Value value) {
    return isDifferentiableType(value.getType()) && active.insert(value).second;
  };
  // To a fixed point: loop-carried values may become active late.
  bool changed = true;
  while (changed) {
    changed = false;
    function.walk([&](Operation *op) {
      bool readsActive = llvm::any_of(
          op->getOperands(), [&](Value v) { return active.contains(v); });
      if (!readsActive && op->getNumRegions() > 0) {
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(op->getRegions(), captured);
        readsActive = llvm::any_of(
            captured, [&](Value v) { return active.contains(v); });
      }
      if (!readsActive)
        return;
      for (Value result : op->getResults())
        changed |= markActive(result);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (Value arg : block.getArguments())
            changed |= markActive(arg);
    });
  }
}

//===----------------------------------------------------------------------===//
// AdjointBuilder
//===----------------------------------------------------------------------===//

AdjointBuilder::AdjointBuilder(ImplicitLocOpBuilder &builder,
                               const Activity &activity, Block &block,
                               AdjointBuilder *parent,
                               SymbolTableCollection &symbols,
                               SparseReads sparseReads)
    : b(builder), activityInfo(activity), block(block), parent(parent),
      symbols(symbols), sparseReads(sparseReads) {}

bool AdjointBuilder::isActive(Value original) const {
  return activityInfo.isActive(original);
}

SmallVector<Value> AdjointBuilder::activeFreeValues(Operation *op) const {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  SmallVector<Value> free;
  for (Value value : captured)
    if (isActive(value))
      free.push_back(value);
  return free;
}

bool AdjointBuilder::isOuter(Value original) const {
  return !block.getParent()->isAncestor(original.getParentRegion());
}

Value AdjointBuilder::primal(Value original) const {
  if (isOuter(original))
    return parent ? parent->primal(original) : original;
  return primalMap.lookupOrDefault(original);
}

SmallVector<Value> AdjointBuilder::primals(ValueRange originals) const {
  return llvm::map_to_vector(originals, [&](Value v) { return primal(v); });
}

void AdjointBuilder::mapPrimal(Value original, Value value) {
  primalMap.map(original, value);
}

Value AdjointBuilder::adjoint(Value original) const {
  return isOuter(original) ? outer.lookup(original)
                           : adjoints.lookup({original, lane});
}

Value AdjointBuilder::adjointOrZero(Value original) {
  if (Value existing = adjoint(original))
    return existing;
  return zerosLike(primal(original));
}

void AdjointBuilder::accumulate(Value original, Value contribution) {
  if (!contribution || !isActive(original))
    return;
  contribution = castToType(b, contribution, original.getType());
  Value &slot =
      isOuter(original) ? outer[original] : adjoints[{original, lane}];
  slot = slot ? add(slot, contribution) : contribution;
}

bool AdjointBuilder::keepsSparse(Value original) const {
  if (!parent || !isOuter(original))
    return false;
  switch (sparseReads) {
  case SparseReads::Always:
    return true;
  case SparseReads::Inherit:
    return parent->keepsSparse(original);
  case SparseReads::Never:
    return false;
  }
  llvm_unreachable("unknown sparse-reads mode");
}

void AdjointBuilder::accumulateAt(Value original, ValueRange indices,
                                  Value value) {
  if (!value || !isActive(original))
    return;
  // Keep one (index, value) per read, so that the owner scatters them
  // (sparse), never a dense tensor per iteration. An element of a tensor of
  // rank > 1 is kept at its row-major position: one index per read whatever
  // the rank, so that the reads of a scope stack into one batch.
  if (keepsSparse(original)) {
    Value index = indices.front();
    if (indices.size() > 1) {
      Value tensor = primal(original);
      for (size_t d = 1; d < indices.size(); ++d)
        index = arith::AddIOp::create(
            b,
            arith::MulIOp::create(b, index,
                                  tensor::DimOp::create(b, tensor, d)),
            indices[d]);
    }
    sparse.push_back({original, index, value, {}});
    return;
  }
  Value current = adjointOrZero(original);
  Value old = extractAt(b, current, indices);
  replaceAdjoint(original, insertAt(b, add(old, value), current, indices));
}

void AdjointBuilder::accumulateSparse(Value original, Value indices,
                                      Value values,
                                      SmallVector<BatchFactor> batch) {
  if (!values || !isActive(original))
    return;
  if (keepsSparse(original)) {
    sparse.push_back({original, indices, values, std::move(batch)});
    return;
  }
  scatterIntoAdjoint(*this, original, indices, values);
}

void AdjointBuilder::replaceAdjoint(Value original, Value updated) {
  (isOuter(original) ? outer[original] : adjoints[{original, lane}]) = updated;
}

void AdjointBuilder::reexecute(Block &source) {
  if (parent) {
    // Free values of the scope read their re-executed counterparts.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(*source.getParent(), captured);
    for (Value value : captured)
      primalMap.map(value, parent->primal(value));
  }
  for (Operation &op : source.without_terminator()) {
    bool residual = op.getNumResults() > 0 &&
                    llvm::all_of(op.getResults(),
                                 [&](Value r) { return primalMap.contains(r); });
    if (residual)
      continue;
    if (auto rule = dyn_cast<ReverseModeOpInterface>(op))
      rule.reexecute(*this);
    else
      cloneForward(op);
  }
}

void AdjointBuilder::cloneForward(Operation &op) { b.clone(op, primalMap); }

void cloneIntoForward(AdjointBuilder &scope, Operation *op) {
  scope.cloneForward(*op);
}

LogicalResult AdjointBuilder::sweep(Block &source) {
  for (Operation &op : llvm::reverse(source.without_terminator())) {
    for (unsigned l = 0; l < width; ++l) {
      setLane(l);
      bool seeded = llvm::any_of(
          op.getResults(), [&](Value r) { return adjoint(r) != nullptr; });
      if (!seeded)
        continue;
      auto rule = dyn_cast<ReverseModeOpInterface>(op);
      if (!rule)
        return op.emitOpError()
               << "has no reverse-mode derivative rule (soac-autodiff)";
      OpBuilder::InsertionGuard guard(b);
      Location previous = b.getLoc();
      b.setLoc(op.getLoc());
      LogicalResult result = rule.reverse(*this);
      b.setLoc(previous);
      if (failed(result))
        return failure();
    }
  }
  setLane(0);
  return success();
}

FailureOr<SmallVector<Value>>
AdjointBuilder::pullBack(ImplicitLocOpBuilder &at, Block &source,
                         ValueRange args, ValueRange seeds) {
  AdjointBuilder scope(at, activityInfo, source, this, symbols);
  for (auto [arg, value] : llvm::zip(source.getArguments(), args))
    scope.mapPrimal(arg, value);
  scope.reexecute(source);
  for (auto [operand, seed] :
       llvm::zip(source.getTerminator()->getOperands(), seeds))
    scope.accumulate(operand, seed);
  if (failed(scope.sweep(source)))
    return failure();
  return llvm::map_to_vector(source.getArguments(), [&](Value arg) {
    return scope.adjointOrZero(arg);
  });
}

SmallVector<Value> AdjointBuilder::cloneBlock(ImplicitLocOpBuilder &at,
                                              Block &source, ValueRange args,
                                              ValueRange alsoOf) {
  IRMapping mapping;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(*source.getParent(), captured);
  for (Value value : captured)
    mapping.map(value, primal(value));
  mapping.map(source.getArguments(), args);
  for (Operation &op : source.without_terminator())
    at.clone(op, mapping);
  SmallVector<Value> clones;
  for (Value v : source.getTerminator()->getOperands())
    clones.push_back(mapping.lookupOrDefault(v));
  for (Value v : alsoOf)
    clones.push_back(mapping.lookupOrDefault(v));
  return clones;
}

Value AdjointBuilder::zerosLike(Value value) { return buildZerosLike(b, value); }

Value AdjointBuilder::add(Value x, Value y) { return buildAdd(b, x, y); }

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

FailureOr<DerivativeFunction>
getOrCreateDerivativeFunction(func::FuncOp function, StringRef mode,
                              unsigned width, ArrayRef<int64_t> wrt,
                              FunctionType type, bool custom,
                              SymbolTableCollection &symbols) {
  auto module = function->getParentOfType<ModuleOp>();
  std::string positions = llvm::join(
      llvm::map_range(wrt, [](int64_t w) { return std::to_string(w); }), "_");
  std::string lanes = width == 1 ? "" : llvm::formatv("_x{0}", width).str();
  std::string name = llvm::formatv("{0}__{1}{2}_wrt_{3}", function.getSymName(),
                                   mode, lanes, positions)
                         .str();
  if (auto existing = symbols.lookupSymbolIn<func::FuncOp>(
          module, StringAttr::get(function.getContext(), name)))
    return DerivativeFunction{existing, false};
  if (!custom && function.isExternal())
    return function.emitOpError()
           << "cannot be differentiated: it is a declaration without a body";
  if (!custom && !function.getBody().hasOneBlock())
    return function.emitOpError()
           << "cannot be differentiated: its body has more than one block";
  OpBuilder top(function);
  top.setInsertionPointAfter(function);
  auto derivative = func::FuncOp::create(top, function.getLoc(), name, type);
  derivative.setPrivate();
  derivative.addEntryBlock();
  symbols.getSymbolTable(module).insert(derivative);
  return DerivativeFunction{derivative, true};
}

LogicalResult discardDerivative(func::FuncOp derivative,
                                SymbolTableCollection &symbols) {
  symbols.getSymbolTable(derivative->getParentOfType<ModuleOp>())
      .erase(derivative);
  return failure();
}

FailureOr<func::FuncOp> getOrCreateVjpFunction(func::FuncOp function,
                                               ArrayRef<int64_t> wrt,
                                               SymbolTableCollection &symbols,
                                               bool mixedMode, unsigned width) {
  bool custom = function->hasAttr(kCustomVjpAttr);
  FailureOr<DerivativeFunction> created = getOrCreateDerivativeFunction(
      function, "vjp", width, wrt,
      getDerivativeType(DerivativeKind::Vjp, function.getFunctionType(), wrt,
                        width),
      custom, symbols);
  if (failed(created))
    return failure();
  auto [vjp, fresh] = *created;
  if (!fresh)
    return vjp;
  if (width > kLanesPerBody) {
    FailureOr<func::FuncOp> narrow = getOrCreateVjpFunction(
        function, wrt, symbols, mixedMode, kLanesPerBody);
    if (failed(narrow))
      return discardDerivative(vjp, symbols);
    buildFromLaneChunks(vjp, *narrow, function.getNumArguments(),
                        function.getNumResults(), width);
    return vjp;
  }
  if (custom) {
    if (failed(buildCustomVjp(function, wrt, width, vjp, symbols)))
      return discardDerivative(vjp, symbols);
    return vjp;
  }

  Block &body = function.getBody().front();
  Block *entry = &vjp.getBody().front();
  ImplicitLocOpBuilder b(function.getLoc(), entry, entry->end());
  Activity activity(function, wrt);
  AdjointBuilder scope(b, activity, body, nullptr, symbols);
  scope.setMixedMode(mixedMode);
  scope.setWidth(width);
  if (width == 1 && !mixedMode)
    scope.setResultsFromAdjoint(mapsWithValueFreeAdjoints(function, activity));
  size_t numArgs = function.getFunctionType().getNumInputs();
  for (auto [original, arg] :
       llvm::zip(body.getArguments(), entry->getArguments().take_front(numArgs)))
    scope.mapPrimal(original, arg);
  scope.reexecute(body);
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  ValueRange cotangents = entry->getArguments().drop_front(numArgs);
  for (auto [j, result] : llvm::enumerate(terminator.getOperands()))
    for (unsigned l = 0; l < width; ++l) {
      scope.setLane(l);
      scope.accumulate(result, cotangents[j * width + l]);
    }
  if (failed(scope.sweep(body)))
    return discardDerivative(vjp, symbols);
  SmallVector<Value> returned = llvm::map_to_vector(
      terminator.getOperands(), [&](Value r) { return scope.primal(r); });
  for (int64_t position : wrt)
    for (unsigned l = 0; l < width; ++l) {
      scope.setLane(l);
      returned.push_back(scope.adjointOrZero(function.getArgument(position)));
    }
  func::ReturnOp::create(b, returned);
  takeResultsFromAdjoints(*entry, scope.recomputedResults());
  return vjp;
}

} // namespace soac::autodiff
