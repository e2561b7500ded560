//===- RowSizes.cpp - sizes of a body's rows, known before it runs --------===//
//
// Follows use-def chains up from a row the body yields to sizes available
// before the map: rows of inputs, values defined above, results of nested
// SOACs (whose sizes are their inputs' or neutral elements'), tensors built
// with sizes that are themselves available, and index arithmetic on those.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/RowSizes.h"

#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace soac::loops {
namespace {

class SizeFinder {
public:
  SizeFinder(ImplicitLocOpBuilder &b, MapOp map) : b(b), map(map) {}

  /// Size `dim` of the tensor `value`, or null.
  Value size(Value value, int64_t dim) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || dim < 0 || dim >= type.getRank())
      return {};
    if (!type.isDynamicDim(dim))
      return indexConstant(b, type.getDimSize(dim));
    // A map fused into the one lowered is never materialized: reading its
    // result's size would keep it alive.
    if (available(value) && !fusableProducer(value, map))
      return tensor::DimOp::create(b, value, dim);
    if (auto row = dyn_cast<BlockArgument>(value)) {
      // The row of a map's input: the input's sizes past the outer one.
      auto owner = dyn_cast<MapOp>(row.getOwner()->getParentOp());
      if (!owner)
        return {};
      return size(owner.getInputs()[row.getArgNumber()], dim + 1);
    }
    Operation *op = value.getDefiningOp();
    unsigned r = cast<OpResult>(value).getResultNumber();
    if (auto nested = dyn_cast<MapOp>(op))
      return dim == 0 ? size(nested.getInputs().front(), 0)
                      : size(yielded(nested, r), dim - 1);
    if (auto reduce = dyn_cast<ReduceOp>(op))
      return size(reduce.getInits()[r], dim);
    if (auto scan = dyn_cast<ScanOp>(op))
      return dim == 0 ? size(scan.getInputs().front(), 0)
                      : size(scan.getInits()[r], dim - 1);
    if (auto scatter = dyn_cast<ScatterOp>(op))
      return size(scatter.getDest(), dim);
    if (auto histogram = dyn_cast<ReduceByIndexOp>(op))
      return size(histogram.getDests()[r], dim);
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      return size(insert.getDest(), dim);
    if (auto insert = dyn_cast<tensor::InsertOp>(op))
      return size(insert.getDest(), dim);
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      return index(empty.getDynamicSize(dim));
    return {};
  }

private:
  /// The index `value` before the map: itself when available, else rebuilt
  /// from sizes and index arithmetic; null otherwise.
  Value index(Value value) {
    if (available(value))
      return value;
    if (auto dim = value.getDefiningOp<tensor::DimOp>()) {
      std::optional<int64_t> constant = dim.getConstantIndex();
      return constant ? size(dim.getSource(), *constant) : Value();
    }
    Operation *op = value.getDefiningOp();
    if (!op || op->getNumRegions() != 0 || op->getNumResults() != 1 ||
        !isa<arith::ArithDialect>(op->getDialect()) ||
        !op->getResult(0).getType().isIndex())
      return {};
    IRMapping operands;
    for (Value operand : op->getOperands()) {
      Value before = index(operand);
      if (!before)
        return {};
      operands.map(operand, before);
    }
    return b.clone(*op, operands)->getResult(0);
  }

  /// Whether `value` may be used where the map is (its region encloses the map).
  bool available(Value value) const {
    return value.getParentRegion()->isAncestor(map->getParentRegion());
  }

  static Value yielded(MapOp nested, unsigned result) {
    return nested.getBody().front().getTerminator()->getOperand(result);
  }

  ImplicitLocOpBuilder &b;
  MapOp map;
};

} // namespace

Value sizeBeforeBody(ImplicitLocOpBuilder &b, MapOp map, Value value,
                     int64_t dim) {
  return SizeFinder(b, map).size(value, dim);
}

} // namespace soac::loops
