//===- Bodies.cpp - inlining SOAC bodies and fusing maps into consumers ---===//
#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace soac {

SmallVector<Value> inlineBody(ImplicitLocOpBuilder &b, Region &body,
                              ValueRange args, bool reassociate) {
  Block &block = body.front();
  IRMapping mapping;
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (!reassociate)
      continue;
    clone->walk([](arith::ArithFastMathInterface fastMath) {
      arith::FastMathFlags flags =
          fastMath.getFastMathFlagsAttr().getValue() |
          arith::FastMathFlags::reassoc;
      fastMath->setAttr(
          fastMath.getFastMathAttrName(),
          arith::FastMathFlagsAttr::get(fastMath->getContext(), flags));
    });
  }
  return llvm::map_to_vector(block.getTerminator()->getOperands(),
                             [&](Value v) { return mapping.lookupOrDefault(v); });
}

bool hasScalarRows(MapOp map) {
  auto isVector = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() == 1;
  };
  return llvm::all_of(map.getInputs().getTypes(), isVector) &&
         llvm::all_of(map.getResultTypes(), isVector);
}

bool readsRowsOf(Operation *consumer, OpOperand &use) {
  if (isa<MapOp>(consumer))
    return true;
  // The inputs of a reduce or scan, not their neutral elements.
  if (auto reduce = dyn_cast<ReduceOp>(consumer))
    return use.getOperandNumber() < reduce.getInputs().size();
  if (auto scan = dyn_cast<ScanOp>(consumer))
    return use.getOperandNumber() < scan.getInputs().size();
  if (auto scatter = dyn_cast<ScatterOp>(consumer))
    return use.get() != scatter.getDest();
  if (auto histogram = dyn_cast<ReduceByIndexOp>(consumer))
    return !llvm::is_contained(histogram.getDests(), use.get()) &&
           !llvm::is_contained(histogram.getInits(), use.get());
  return false;
}

MapOp fusableProducer(Value tensor, Operation *consumer) {
  auto map = tensor.getDefiningOp<MapOp>();
  if (!map || !consumer || map->getBlock() != consumer->getBlock())
    return nullptr;
  for (Value result : map.getResults())
    for (OpOperand &use : result.getUses())
      if (use.getOwner() != consumer || !readsRowsOf(consumer, use))
        return nullptr;
  return map;
}

MapOp stackedProducer(ReduceByIndexOp histogram) {
  MapOp map;
  SmallVector<Operation *> collapses;
  SmallVector<Value> read{histogram.getIndices()};
  llvm::append_range(read, histogram.getValues());
  size_t merged = 0;
  for (Value tensor : read) {
    auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || !collapse->hasOneUse())
      return nullptr;
    size_t outer = collapse.getReassociationIndices().front().size();
    if (outer < 2 || (merged && outer != merged))
      return nullptr;
    merged = outer;
    auto producer = collapse.getSrc().getDefiningOp<MapOp>();
    if (!producer || (map && producer != map) ||
        producer->getBlock() != histogram->getBlock())
      return nullptr;
    map = producer;
    collapses.push_back(collapse);
  }
  for (Operation *user : map->getUsers())
    if (!llvm::is_contained(collapses, user))
      return nullptr;
  return map;
}

bool waitsForFusion(MapOp map) {
  if (map->use_empty())
    return false;
  Operation *consumer = *map->getUsers().begin();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(consumer))
    if (collapse->hasOneUse())
      if (auto histogram =
              dyn_cast<ReduceByIndexOp>(*collapse->getUsers().begin()))
        return stackedProducer(histogram) == map;
  return fusableProducer(map.getResult(0), consumer) == map;
}

} // namespace soac
