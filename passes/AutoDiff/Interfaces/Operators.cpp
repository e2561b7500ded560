//===- Operators.cpp - how SOAC operators combine -------------------------===//
#include "passes/AutoDiff/Interfaces/Operators.h"

#include "dialect/SoacOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace soac::autodiff {

namespace {

/// How a scalar op combines its two operands.
Combine scalarKind(Operation *op) {
  if (isa<arith::AddFOp>(op))
    return Combine::Add;
  if (isa<arith::MulFOp>(op))
    return Combine::Mul;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return Combine::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return Combine::Min;
  return Combine::Other;
}

/// How `op`, applied to (x, y), combines them: a scalar op, or a soac.map
/// over the rows of x and y applying one (elementwise, at any depth).
Combine combineKind(Operation *op, Value x, Value y) {
  if (!op || op->getNumOperands() != 2)
    return Combine::Other;
  bool pair = (op->getOperand(0) == x && op->getOperand(1) == y) ||
              (op->getOperand(0) == y && op->getOperand(1) == x);
  if (!pair)
    return Combine::Other;
  auto map = dyn_cast<MapOp>(op);
  if (!map)
    return scalarKind(op);
  if (map.getNumResults() != 1)
    return Combine::Other;
  Block &body = map.getBody().front();
  // The map's own inputs are (x, y) in some order; its body combines the rows.
  bool swapped = map.getInputs()[0] == y;
  Value rowX = body.getArgument(swapped ? 1 : 0);
  Value rowY = body.getArgument(swapped ? 0 : 1);
  return combineKind(body.getTerminator()->getOperand(0).getDefiningOp(), rowX,
                     rowY);
}

} // namespace

Combine componentKind(Region &region, unsigned j) {
  Block &block = region.front();
  unsigned k = block.getNumArguments() / 2;
  Value result = block.getTerminator()->getOperand(j);
  Operation *def = result.getDefiningOp();
  if (!def || def->getBlock() != &block)
    return Combine::Other;
  return combineKind(def, block.getArgument(j), block.getArgument(k + j));
}

} // namespace soac::autodiff
