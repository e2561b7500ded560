//===- ReverseModeOpInterface.td - reverse-mode rules -------------*- tablegen -*-===//
//
// Each differentiable op answers for its own derivative. The rules live in
// passes/AutoDiff/Reverse (one file per dialect) and are attached to
// upstream ops as external models; the engine
// (passes/AutoDiff/Engine/ReverseEngine.cpp) only walks scopes.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_REVERSE_MODE_OP_INTERFACE_TD
#define SOAC_REVERSE_MODE_OP_INTERFACE_TD

include "mlir/IR/OpBase.td"

def ReverseModeOpInterface : OpInterface<"ReverseModeOpInterface"> {
  let cppNamespace = "::soac::autodiff";
  let description = [{
    The reverse-mode rule of an op: given the adjoints of its results (some may
    be absent, meaning zero), add the adjoint contributions of its operands.
    The rule builds code at the insertion point of the return sweep, where the
    forward code of the enclosing scope has been re-executed: `primal(v)` is
    the re-executed value of `v`.
  }];
  let methods = [
    InterfaceMethod<
      "Adds the adjoints of this op's operands (and of the values its regions "
      "capture) given the adjoints of its results.",
      "::llvm::LogicalResult", "reverse",
      (ins "::soac::autodiff::AdjointBuilder &":$adjoints)>,
    InterfaceMethod<
      "Re-executes this op in the forward code of its scope (mapping its "
      "results with `mapPrimal`); may keep residuals for `reverse` "
      "(AdjointBuilder::keepResiduals). Most ops are cloned as they are.",
      "void", "reexecute",
      (ins "::soac::autodiff::AdjointBuilder &":$adjoints),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ ::soac::autodiff::cloneIntoForward(adjoints, $_op.getOperation()); }]>,
  ];
}

#endif // SOAC_REVERSE_MODE_OP_INTERFACE_TD
