//===- RowReader.cpp - rows of tensors and of fused maps ------------------===//
#include "passes/Conversion/SoacToLoops/RowReader.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace soac::loops {

Value RowReader::size(ImplicitLocOpBuilder &b) const {
  SmallVector<Value> sizes;
  SmallPtrSet<Operation *, 4> visited;
  collectSizes(b, tensors, consumer, sizes, visited);
  for (Value other : ArrayRef<Value>(sizes).drop_front()) {
    if (getConstantIntValue(other) && getConstantIntValue(sizes.front()))
      continue; // the verifier has compared static sizes
    Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                       sizes.front(), other);
    cf::AssertOp::create(b, same, mismatchMessage());
  }
  for (Value size : sizes)
    if (getConstantIntValue(size))
      return size;
  return sizes.front();
}

SmallVector<Value> RowReader::rowsAt(ImplicitLocOpBuilder &b, Value i,
                                     const DenseMap<Value, Value> &known) const {
  DenseMap<Operation *, SmallVector<Value>> fusedRows;
  return llvm::map_to_vector(tensors, [&](Value t) {
    return rowOf(b, t, consumer, i, known, fusedRows);
  });
}

SmallVector<MapOp> RowReader::fusedMaps() const {
  SmallVector<MapOp> maps;
  collectFused(tensors, consumer, maps);
  return maps;
}

void RowReader::collectSizes(ImplicitLocOpBuilder &b, ValueRange tensors,
                             Operation *consumer, SmallVector<Value> &sizes,
                             SmallPtrSetImpl<Operation *> &visited) {
  for (Value tensor : tensors) {
    if (MapOp map = fusableProducer(tensor, consumer)) {
      if (visited.insert(map).second)
        collectSizes(b, map.getInputs(), map, sizes, visited);
      continue;
    }
    auto type = cast<RankedTensorType>(tensor.getType());
    sizes.push_back(type.isDynamicDim(0)
                        ? Value(tensor::DimOp::create(b, tensor, 0))
                        : indexConstant(b, type.getDimSize(0)));
  }
}

std::string RowReader::mismatchMessage() const {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (consumer) {
    if (auto file = dyn_cast<FileLineColLoc>(consumer->getLoc()))
      os << file.getFilename().getValue() << ":" << file.getLine() << ":"
         << file.getColumn();
    else
      os << consumer->getLoc();
    os << ": '" << consumer->getName() << "': ";
  }
  os << "operands have different outer sizes";
  return message;
}

Value RowReader::rowOf(ImplicitLocOpBuilder &b, Value tensor,
                       Operation *consumer, Value i,
                       const DenseMap<Value, Value> &known,
                       DenseMap<Operation *, SmallVector<Value>> &fusedRows) {
  if (Value row = known.lookup(tensor))
    return row;
  if (MapOp map = fusableProducer(tensor, consumer)) {
    if (!fusedRows.count(map)) {
      SmallVector<Value> inputRows = llvm::map_to_vector(
          map.getInputs(),
          [&](Value in) { return rowOf(b, in, map, i, known, fusedRows); });
      fusedRows[map] = inlineBody(b, map.getBody(), inputRows);
    }
    return fusedRows[map][cast<OpResult>(tensor).getResultNumber()];
  }
  return extractRow(b, tensor, i);
}

void RowReader::collectFused(ValueRange tensors, Operation *consumer,
                             SmallVector<MapOp> &maps) {
  for (Value tensor : tensors)
    if (MapOp map = fusableProducer(tensor, consumer))
      if (!llvm::is_contained(maps, map)) {
        maps.push_back(map);
        collectFused(map.getInputs(), map, maps);
      }
}

void replaceAndEraseFused(PatternRewriter &rewriter, Operation *op,
                          ValueRange replacements, const RowReader &rows) {
  SmallVector<MapOp> fused = rows.fusedMaps();
  for (auto [result, replacement] : llvm::zip(op->getResults(), replacements))
    if (replacement)
      rewriter.replaceAllUsesWith(result, replacement);
  rewriter.eraseOp(op);
  for (MapOp map : fused) // producers before their own producers
    rewriter.eraseOp(map);
}

} // namespace soac::loops
