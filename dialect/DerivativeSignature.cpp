//===- DerivativeSignature.cpp - what a vjp or jvp takes and gives --------===//
#include "dialect/DerivativeSignature.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;

namespace soac {

bool isDifferentiableType(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    type = tensor.getElementType();
  return isa<FloatType>(type);
}

SmallVector<int64_t> wrtPositions(std::optional<ArrayRef<int64_t>> wrt,
                                  size_t numArguments) {
  if (wrt)
    return llvm::to_vector(*wrt);
  return llvm::to_vector(llvm::seq<int64_t>(0, numArguments));
}

std::string DerivativeSlot::describe(int64_t width) const {
  std::string what = (ofResult ? "result #" : "argument #") + std::to_string(of);
  switch (role) {
  case Role::Argument:
  case Role::Result:
    return what;
  case Role::Cotangent:
    what = "cotangent of " + what;
    break;
  case Role::Gradient:
    what = "gradient of " + what;
    break;
  case Role::Tangent:
    what = "tangent of " + what;
    break;
  }
  if (width != 1)
    what += " (lane " + std::to_string(lane) + ")";
  return what;
}

namespace {

using Role = DerivativeSlot::Role;

/// "one tangent" or "k tangents".
std::string perWidth(int64_t width, StringRef what) {
  return width == 1 ? ("one " + what).str()
                    : std::to_string(width) + " " + what.str() + "s";
}

SmallVector<Type> typesOf(ArrayRef<DerivativeSlot> slots) {
  return llvm::map_to_vector(slots, [](const DerivativeSlot &s) { return s.type; });
}

} // namespace

SmallVector<Type> DerivativeSignature::inputTypes() const {
  return typesOf(inputs);
}

SmallVector<Type> DerivativeSignature::outputTypes() const {
  return typesOf(outputs);
}

DerivativeSignature getDerivativeSignature(DerivativeKind kind,
                                           TypeRange arguments,
                                           TypeRange results,
                                           ArrayRef<int64_t> wrt,
                                           int64_t width) {
  DerivativeSignature signature;
  // The primal part: the function's arguments in, its results out.
  for (auto [i, type] : llvm::enumerate(arguments))
    signature.inputs.push_back({type, Role::Argument, int64_t(i), 0, false});
  for (auto [i, type] : llvm::enumerate(results))
    signature.outputs.push_back({type, Role::Result, int64_t(i), 0, true});
  // The derivative part: per result (cotangents in, tangents out) or per
  // differentiated argument (gradients out, tangents in), `width` lanes each.
  auto perResult = [&](SmallVector<DerivativeSlot> &slots, Role role) {
    for (auto [i, type] : llvm::enumerate(results))
      for (int64_t l = 0; l < width; ++l)
        slots.push_back({type, role, int64_t(i), l, true});
  };
  auto perArgument = [&](SmallVector<DerivativeSlot> &slots, Role role) {
    for (int64_t position : wrt)
      for (int64_t l = 0; l < width; ++l)
        slots.push_back({arguments[position], role, position, l, false});
  };
  if (kind == DerivativeKind::Vjp) {
    perResult(signature.inputs, Role::Cotangent);
    perArgument(signature.outputs, Role::Gradient);
    signature.inputLayout =
        "its arguments, then " + perWidth(width, "cotangent") + " per result";
    signature.outputLayout = "its results, then " +
                             perWidth(width, "gradient") +
                             " per differentiated argument";
  } else {
    perArgument(signature.inputs, Role::Tangent);
    perResult(signature.outputs, Role::Tangent);
    signature.inputLayout = "its arguments, then " +
                            perWidth(width, "tangent") +
                            " per differentiated argument";
    signature.outputLayout =
        "its results, then " + perWidth(width, "tangent") + " per result";
  }
  return signature;
}

FunctionType getDerivativeType(DerivativeKind kind, FunctionType function,
                               ArrayRef<int64_t> wrt, int64_t width) {
  DerivativeSignature signature = getDerivativeSignature(
      kind, function.getInputs(), function.getResults(), wrt, width);
  return FunctionType::get(function.getContext(), signature.inputTypes(),
                           signature.outputTypes());
}

} // namespace soac
