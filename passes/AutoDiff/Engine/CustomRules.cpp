//===- CustomRules.cpp - derivatives given by the user --------------------===//
#include "passes/AutoDiff/Engine/CustomRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/ReverseEngine.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// The positions of the float (differentiable) arguments of `type`.
SmallVector<int64_t> floatArguments(FunctionType type) {
  SmallVector<int64_t> positions;
  for (auto [i, input] : llvm::enumerate(type.getInputs()))
    if (isDifferentiableType(input))
      positions.push_back(i);
  return positions;
}

/// The custom function `function` names in `attrName`, checked against the
/// signature `expected`.
FailureOr<func::FuncOp> customFunction(func::FuncOp function,
                                       StringRef attrName,
                                       FunctionType expected,
                                       StringRef layout,
                                       SymbolTableCollection &symbols) {
  auto symbol = function->getAttrOfType<FlatSymbolRefAttr>(attrName);
  if (!symbol)
    return function.emitOpError()
           << "has a " << attrName << " attribute that is not a symbol";
  auto custom = symbols.lookupNearestSymbolFrom<func::FuncOp>(function, symbol);
  if (!custom)
    return function.emitOpError() << "names " << symbol << " as its "
                                  << attrName << ", which is not a func.func";
  if (custom.getFunctionType() != expected)
    return function.emitOpError()
           << "names " << symbol << " as its " << attrName << ", of type "
           << custom.getFunctionType() << ", but it must be " << expected
           << " (" << layout << ")";
  return custom;
}

} // namespace

LogicalResult buildCustomVjp(func::FuncOp function, ArrayRef<int64_t> wrt,
                             unsigned width, func::FuncOp vjp,
                             SymbolTableCollection &symbols) {
  FunctionType type = function.getFunctionType();
  SmallVector<int64_t> floats = floatArguments(type);
  FailureOr<func::FuncOp> custom = customFunction(
      function, kCustomVjpAttr,
      getDerivativeType(DerivativeKind::Vjp, type, floats, /*width=*/1),
      "its arguments and one cotangent per result, to its results and one "
      "gradient per float argument",
      symbols);
  if (failed(custom))
    return failure();
  Block *entry = &vjp.getBody().front();
  ImplicitLocOpBuilder b(function.getLoc(), entry, entry->end());
  size_t numArgs = type.getNumInputs(), numResults = type.getNumResults();
  ValueRange args = entry->getArguments().take_front(numArgs);
  ValueRange cotangents = entry->getArguments().drop_front(numArgs);
  // One call per lane: the custom vjp knows one cotangent per result.
  SmallVector<func::CallOp> calls;
  for (unsigned lane = 0; lane < width; ++lane) {
    SmallVector<Value> operands(args);
    for (size_t j = 0; j < numResults; ++j)
      operands.push_back(cotangents[j * width + lane]);
    calls.push_back(func::CallOp::create(b, *custom, operands));
  }
  SmallVector<Value> returned(calls.front().getResults().take_front(numResults));
  for (int64_t position : wrt) {
    size_t k = llvm::find(floats, position) - floats.begin();
    for (func::CallOp call : calls)
      returned.push_back(call.getResult(numResults + k));
  }
  func::ReturnOp::create(b, returned);
  return success();
}

LogicalResult buildCustomJvp(func::FuncOp function, ArrayRef<int64_t> wrt,
                             unsigned width, func::FuncOp jvp,
                             SymbolTableCollection &symbols) {
  FunctionType type = function.getFunctionType();
  SmallVector<int64_t> floats = floatArguments(type);
  FailureOr<func::FuncOp> custom = customFunction(
      function, kCustomJvpAttr,
      getDerivativeType(DerivativeKind::Jvp, type, floats, /*width=*/1),
      "its arguments and one tangent per float argument, to its results and "
      "one tangent per result",
      symbols);
  if (failed(custom))
    return failure();
  Block *entry = &jvp.getBody().front();
  ImplicitLocOpBuilder b(function.getLoc(), entry, entry->end());
  size_t numArgs = type.getNumInputs(), numResults = type.getNumResults();
  ValueRange args = entry->getArguments().take_front(numArgs);
  ValueRange tangents = entry->getArguments().drop_front(numArgs);
  // One call per lane: the custom jvp knows one tangent per argument.
  SmallVector<Value> results;
  SmallVector<SmallVector<Value>> laneTangents;
  for (unsigned lane = 0; lane < width; ++lane) {
    SmallVector<Value> operands(args);
    for (int64_t position : floats) {
      auto it = llvm::find(wrt, position);
      operands.push_back(
          it == wrt.end()
              ? buildZerosLike(b, args[position])
              : tangents[(it - wrt.begin()) * width + lane]);
    }
    auto call = func::CallOp::create(b, *custom, operands);
    if (lane == 0)
      results.assign(call.getResults().begin(),
                     call.getResults().begin() + numResults);
    laneTangents.push_back(
        llvm::to_vector_of<Value>(call.getResults().drop_front(numResults)));
  }
  SmallVector<Value> returned(results);
  for (size_t j = 0; j < numResults; ++j)
    for (unsigned lane = 0; lane < width; ++lane)
      returned.push_back(laneTangents[lane][j]);
  func::ReturnOp::create(b, returned);
  return success();
}

} // namespace soac::autodiff
