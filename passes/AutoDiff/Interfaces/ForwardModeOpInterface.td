//===- ForwardModeOpInterface.td - forward-mode rules -------------*- tablegen -*-===//
//
// The forward-mode (dual number) rule of each differentiable op, attached to
// upstream ops as external models (passes/AutoDiff/Forward, one file per
// dialect); the engine (passes/AutoDiff/Engine/ForwardEngine.cpp) walks scopes.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_FORWARD_MODE_OP_INTERFACE_TD
#define SOAC_FORWARD_MODE_OP_INTERFACE_TD

include "mlir/IR/OpBase.td"

def ForwardModeOpInterface : OpInterface<"ForwardModeOpInterface"> {
  let cppNamespace = "::soac::autodiff";
  let description = [{
    The forward-mode rule of an op with an active result: build the op's
    primal results and the tangents of its active results from the primal
    values and tangents of its operands (and of the values its regions read
    from outside). Ops with regions lift them to (primal, tangent) pairs.
  }];
  let methods = [
    InterfaceMethod<
      "Maps this op's results to their primal values and sets the tangents "
      "of its active results.",
      "::llvm::LogicalResult", "forward",
      (ins "::soac::autodiff::TangentBuilder &":$tangents)>,
  ];
}

#endif // SOAC_FORWARD_MODE_OP_INTERFACE_TD
