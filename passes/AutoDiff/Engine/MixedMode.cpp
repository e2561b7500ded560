//===- MixedMode.cpp - maps differentiated in mixed mode ------------------===//
#include "passes/AutoDiff/Engine/MixedMode.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/ForwardEngine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {

FailureOr<bool> usesMixedMode(MapOp map, const AdjointBuilder &a) {
  auto attr = map->getAttrOfType<BoolAttr>(kMixedModeAttr);
  bool requested = attr ? attr.getValue() : a.mixedMode();
  if (!requested)
    return false;
  Block &body = map.getBody().front();
  auto scalar = [](Type type) { return !isa<ShapedType>(type); };
  bool qualifies =
      llvm::all_of(body.getArgumentTypes(), scalar) &&
      llvm::all_of(body.getTerminator()->getOperandTypes(), scalar) &&
      llvm::all_of(a.activeFreeValues(map),
                   [&](Value v) { return scalar(v.getType()); });
  if (qualifies)
    return true;
  if (!attr) // asked for every map: this one keeps the reverse rule
    return false;
  return map.emitOpError()
         << "cannot be differentiated in mixed mode: its body must map "
            "scalars to scalars and read no active tensor from outside";
}

LogicalResult reverseInMixedMode(MapOp map, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &body = map.getBody().front();
  size_t numInputs = map.getInputs().size();
  // One tangent lane per active input, then per active free scalar.
  SmallVector<unsigned> activeInputs;
  for (auto [j, input] : llvm::enumerate(map.getInputs()))
    if (a.isActive(input))
      activeInputs.push_back(j);
  SmallVector<Value> freeScalars = a.activeFreeValues(map);
  unsigned width = activeInputs.size() + freeScalars.size();
  if (width == 0)
    return success();

  SmallVector<Value> inputs = llvm::map_to_vector(
      map.getInputs(), [&](Value v) { return a.primal(v); });
  SmallVector<unsigned> seeded;
  for (auto [i, result] : llvm::enumerate(map.getResults()))
    if (Value bar = a.adjoint(result)) {
      inputs.push_back(bar);
      seeded.push_back(i);
    }

  bool failedLift = false;
  SmallVector<Value> perRow = buildMap(
      b, inputs,
      [&](ImplicitLocOpBuilder &ib, ValueRange rows) -> SmallVector<Value> {
        TangentBuilder partials(ib, a.activity(), nullptr, a.symbolTables(),
                                width);
        llvm::SetVector<Value> captured;
        getUsedValuesDefinedAbove(map.getBody(), captured);
        for (Value value : captured)
          partials.mapPrimal(value, a.primal(value));
        for (auto [arg, row] :
             llvm::zip(body.getArguments(), rows.take_front(numInputs)))
          partials.mapPrimal(arg, row);
        auto one = [&](Value like) {
          return floatConstant(ib, like.getType(), 1.0);
        };
        for (auto [lane, j] : llvm::enumerate(activeInputs))
          partials.setTangent(body.getArgument(j), lane,
                              one(body.getArgument(j)));
        for (auto [k, value] : llvm::enumerate(freeScalars))
          partials.setTangent(value, activeInputs.size() + k, one(value));
        SmallVector<Value> adjoints;
        if (failed(partials.run(body))) {
          failedLift = true;
          return adjoints;
        }
        // x̄ (lane l) = Σ over the seeded results of ȳ · ∂y/∂x (lane l)
        Operation *yield = body.getTerminator();
        for (unsigned lane = 0; lane < width; ++lane) {
          Value sum;
          for (auto [k, i] : llvm::enumerate(seeded)) {
            Value partial = partials.tangent(yield->getOperand(i), lane);
            if (!partial)
              continue;
            Value term = arith::MulFOp::create(ib, rows[numInputs + k], partial);
            sum = sum ? Value(arith::AddFOp::create(ib, sum, term)) : term;
          }
          Type type = lane < activeInputs.size()
                          ? body.getArgument(activeInputs[lane]).getType()
                          : freeScalars[lane - activeInputs.size()].getType();
          adjoints.push_back(sum ? sum : floatConstant(ib, type, 0.0));
        }
        return adjoints;
      });
  if (failedLift)
    return failure();

  for (auto [lane, j] : llvm::enumerate(activeInputs))
    a.accumulate(map.getInputs()[j], perRow[lane]);
  for (auto [k, value] : llvm::enumerate(freeScalars))
    a.accumulate(value, buildSumAll(b, perRow[activeInputs.size() + k]));
  return success();
}

} // namespace soac::autodiff
