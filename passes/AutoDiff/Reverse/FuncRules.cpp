//===- FuncRules.cpp - reverse-mode rule of func.call ---------------------===//
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace soac::autodiff {

/// A call is differentiated by calling the callee's vjp function (created on
/// demand, recursively): it re-executes the callee, as every scope does.
LogicalResult reverseOf(func::CallOp call, AdjointBuilder &a) {
  auto callee = a.symbolTables().lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError() << "calls " << call.getCalleeAttr()
                              << ", which is not a func.func with a body";
  SmallVector<int64_t> wrt;
  for (auto [i, arg] : llvm::enumerate(call.getOperands()))
    if (isDifferentiableType(arg.getType()))
      wrt.push_back(i);
  FailureOr<func::FuncOp> vjp =
      getOrCreateVjpFunction(callee, wrt, a.symbolTables(), a.mixedMode());
  if (failed(vjp))
    return call.emitOpError() << "could not differentiate its callee "
                              << call.getCalleeAttr();
  SmallVector<Value> operands = llvm::map_to_vector(
      call.getOperands(), [&](Value v) { return a.primal(v); });
  for (Value result : call.getResults())
    operands.push_back(a.adjointOrZero(result));
  auto reverse = func::CallOp::create(a.builder(), *vjp, operands);
  for (auto [position, gradient] :
       llvm::zip(wrt, reverse.getResults().drop_front(call.getNumResults())))
    a.accumulate(call.getOperand(position), gradient);
  return success();
}

void registerFuncRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    attachRules<func::CallOp>(context);
  });
}

} // namespace soac::autodiff
