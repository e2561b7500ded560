//===- ForwardEngine.cpp - forward-mode AD with dual numbers --------------===//
#include "passes/AutoDiff/Engine/ForwardEngine.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/CustomRules.h"
#include "passes/AutoDiff/Engine/LaneChunks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {

TangentBuilder::TangentBuilder(ImplicitLocOpBuilder &builder,
                               const Activity &activity, TangentBuilder *parent,
                               SymbolTableCollection &symbols, unsigned width)
    : b(builder), activityInfo(activity), parent(parent), symbols(symbols),
      lanes(parent ? parent->width() : width) {}

Value TangentBuilder::primal(Value original) const {
  if (Value mapped = primalMap.lookupOrNull(original))
    return mapped;
  return parent ? parent->primal(original) : original;
}

SmallVector<Value> TangentBuilder::primals(ValueRange originals) const {
  return llvm::map_to_vector(originals, [&](Value v) { return primal(v); });
}

void TangentBuilder::mapPrimal(Value original, Value value) {
  primalMap.map(original, value);
}

Value TangentBuilder::tangent(Value original, unsigned lane) const {
  if (Value known = tangents.lookup({original, lane}))
    return known;
  return parent ? parent->tangent(original, lane) : Value();
}

Value TangentBuilder::tangentOrZero(Value original, unsigned lane) {
  if (Value known = tangent(original, lane))
    return known;
  return zerosLike(primal(original));
}

void TangentBuilder::setTangent(Value original, unsigned lane, Value value) {
  if (value && isActive(original))
    tangents[{original, lane}] = castToType(b, value, original.getType());
}

SmallVector<Value> spreadTangents(ValueRange packed,
                                  ArrayRef<unsigned> positions, size_t count,
                                  unsigned width) {
  SmallVector<Value> tangents(count * width);
  for (auto [k, j] : llvm::enumerate(positions))
    for (unsigned lane = 0; lane < width; ++lane)
      tangents[j * width + lane] = packed[k * width + lane];
  return tangents;
}

SmallVector<Type> withTangentTypes(TypeRange types,
                                   ArrayRef<unsigned> positions,
                                   unsigned width) {
  SmallVector<Type> all(types);
  for (unsigned j : positions)
    all.append(width, types[j]);
  return all;
}

SmallVector<unsigned> TangentBuilder::activePositions(ValueRange originals) const {
  SmallVector<unsigned> positions;
  for (auto [j, value] : llvm::enumerate(originals))
    if (isActive(value))
      positions.push_back(j);
  return positions;
}

SmallVector<Value> TangentBuilder::withTangents(ValueRange originals,
                                                ArrayRef<unsigned> positions) {
  SmallVector<Value> all = primals(originals);
  for (unsigned j : positions)
    for (unsigned lane : laneIndices())
      all.push_back(tangentOrZero(originals[j], lane));
  return all;
}

void TangentBuilder::mapLiftedResults(Operation *original, Operation *lifted,
                                      ArrayRef<unsigned> positions) {
  size_t n = original->getNumResults();
  for (unsigned j = 0; j < n; ++j)
    mapPrimal(original->getResult(j), lifted->getResult(j));
  for (auto [k, j] : llvm::enumerate(positions))
    for (unsigned lane : laneIndices())
      setTangent(original->getResult(j), lane,
                 lifted->getResult(n + k * lanes + lane));
}

Operation *TangentBuilder::clonePrimal(Operation *op) {
  // Values of enclosing scopes are not in this scope's map: bind them first.
  auto bind = [&](Value v) {
    if (!primalMap.contains(v))
      primalMap.map(v, primal(v));
  };
  llvm::for_each(op->getOperands(), bind);
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  llvm::for_each(captured, bind);
  return b.clone(*op, primalMap);
}

LogicalResult TangentBuilder::forwardLinear(Operation *op) {
  clonePrimal(op);
  for (unsigned lane : laneIndices()) {
    bool anyTangent = false;
    IRMapping onTangents;
    for (Value operand : op->getOperands()) {
      if (!isDifferentiableType(operand.getType())) {
        onTangents.map(operand, primal(operand));
        continue;
      }
      anyTangent |= tangent(operand, lane) != nullptr;
      onTangents.map(operand, tangentOrZero(operand, lane));
    }
    if (!anyTangent)
      continue;
    Operation *onTangent = b.clone(*op, onTangents);
    for (auto [result, value] :
         llvm::zip(op->getResults(), onTangent->getResults()))
      setTangent(result, lane, value);
  }
  return success();
}

LogicalResult TangentBuilder::run(Block &block) {
  for (Operation &op : block.without_terminator()) {
    bool active = llvm::any_of(op.getResults(),
                               [&](Value r) { return isActive(r); });
    if (!active) {
      clonePrimal(&op);
      continue;
    }
    auto rule = dyn_cast<ForwardModeOpInterface>(op);
    if (!rule)
      return op.emitOpError()
             << "has no forward-mode derivative rule (soac-autodiff)";
    Location previous = b.getLoc();
    b.setLoc(op.getLoc());
    LogicalResult result = rule.forward(*this);
    b.setLoc(previous);
    if (failed(result))
      return failure();
  }
  return success();
}

FailureOr<Lifted> TangentBuilder::lift(ImplicitLocOpBuilder &at, Block &block,
                                       ValueRange args, ValueRange argTangents,
                                       ArrayRef<unsigned> tangentPositions) {
  TangentBuilder scope(at, activityInfo, this, symbols);
  for (auto [arg, value] : llvm::zip(block.getArguments(), args))
    scope.mapPrimal(arg, value);
  for (auto [i, value] : llvm::enumerate(argTangents))
    scope.setTangent(block.getArgument(i / lanes), i % lanes, value);
  if (failed(scope.run(block)))
    return failure();
  Lifted lifted;
  ValueRange yielded = block.getTerminator()->getOperands();
  lifted.primals = scope.primals(yielded);
  for (unsigned position : tangentPositions)
    for (unsigned lane : laneIndices())
      lifted.tangents.push_back(scope.tangentOrZero(yielded[position], lane));
  return lifted;
}

Value TangentBuilder::zerosLike(Value value) { return buildZerosLike(b, value); }

Value TangentBuilder::add(Value x, Value y) {
  if (!x || !y)
    return x ? x : y;
  return buildAdd(b, x, y);
}

Value TangentBuilder::sub(Value x, Value y) {
  if (!y)
    return x;
  if (!x)
    return neg(y);
  return arith::SubFOp::create(b, x, y);
}

Value TangentBuilder::mul(Value x, Value y) {
  if (!x || !y)
    return Value();
  return arith::MulFOp::create(b, x, y);
}

Value TangentBuilder::neg(Value x) {
  return x ? Value(arith::NegFOp::create(b, x)) : Value();
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

FailureOr<func::FuncOp> getOrCreateJvpFunction(func::FuncOp function,
                                               ArrayRef<int64_t> wrt,
                                               unsigned width,
                                               SymbolTableCollection &symbols) {
  bool custom = function->hasAttr(kCustomJvpAttr);
  FailureOr<DerivativeFunction> created = getOrCreateDerivativeFunction(
      function, "jvp", width, wrt,
      getDerivativeType(DerivativeKind::Jvp, function.getFunctionType(), wrt,
                        width),
      custom, symbols);
  if (failed(created))
    return failure();
  auto [jvp, fresh] = *created;
  if (!fresh)
    return jvp;
  if (width > kLanesPerBody) {
    FailureOr<func::FuncOp> narrow =
        getOrCreateJvpFunction(function, wrt, kLanesPerBody, symbols);
    if (failed(narrow))
      return discardDerivative(jvp, symbols);
    buildFromLaneChunks(jvp, *narrow, function.getNumArguments(),
                        function.getNumResults(), width);
    return jvp;
  }
  if (custom) {
    if (failed(buildCustomJvp(function, wrt, width, jvp, symbols)))
      return discardDerivative(jvp, symbols);
    return jvp;
  }

  Block &body = function.getBody().front();
  Block *entry = &jvp.getBody().front();
  ImplicitLocOpBuilder b(function.getLoc(), entry, entry->end());
  Activity activity(function, wrt);
  TangentBuilder scope(b, activity, nullptr, symbols, width);
  size_t numArgs = function.getFunctionType().getNumInputs();
  for (auto [original, arg] :
       llvm::zip(body.getArguments(), entry->getArguments().take_front(numArgs)))
    scope.mapPrimal(original, arg);
  ValueRange tangents = entry->getArguments().drop_front(numArgs);
  for (auto [k, position] : llvm::enumerate(wrt))
    for (unsigned lane = 0; lane < width; ++lane)
      scope.setTangent(body.getArgument(position), lane,
                       tangents[k * width + lane]);
  if (failed(scope.run(body)))
    return discardDerivative(jvp, symbols);
  ValueRange results = body.getTerminator()->getOperands();
  SmallVector<Value> returned = scope.primals(results);
  for (Value result : results)
    for (unsigned lane = 0; lane < width; ++lane)
      returned.push_back(scope.tangentOrZero(result, lane));
  func::ReturnOp::create(b, returned);
  return jvp;
}

} // namespace soac::autodiff
