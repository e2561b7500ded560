//===- Builders.cpp - building soac ops from C++ callbacks ----------------===//
#include "passes/AutoDiff/Interfaces/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {

Value floatConstant(ImplicitLocOpBuilder &b, Type type, double value) {
  return arith::ConstantOp::create(b, type, b.getFloatAttr(type, value));
}

Value castToType(ImplicitLocOpBuilder &b, Value value, Type type) {
  if (value.getType() == type || !isa<RankedTensorType>(type))
    return value;
  return tensor::CastOp::create(b, type, value);
}

Value buildZerosLike(ImplicitLocOpBuilder &b, Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  Type element = tensor ? tensor.getElementType() : value.getType();
  Value zero = arith::ConstantOp::create(b, element, b.getZeroAttr(element));
  if (!tensor)
    return zero;
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < tensor.getRank(); ++d)
    if (tensor.isDynamicDim(d))
      dynamic.push_back(tensor::DimOp::create(b, value, d));
  return tensor::SplatOp::create(b, zero, tensor, dynamic);
}

Value outerSize(ImplicitLocOpBuilder &b, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(0))
    return arith::ConstantIndexOp::create(b, type.getDimSize(0));
  return tensor::DimOp::create(b, tensor, 0);
}

Block *buildBody(ImplicitLocOpBuilder &b, TypeRange argTypes,
                 BodyBuilder body) {
  auto *block = new Block();
  for (Type type : argTypes)
    block->addArgument(type, b.getLoc());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  SmallVector<Value> yielded = body(b, block->getArguments());
  YieldOp::create(b, yielded);
  return block;
}

namespace {

int64_t staticOuterSize(ValueRange tensors) {
  for (Value t : tensors) {
    auto type = cast<RankedTensorType>(t.getType());
    if (!type.isDynamicDim(0))
      return type.getDimSize(0);
  }
  return ShapedType::kDynamic;
}

} // namespace

SmallVector<Value> buildMap(ImplicitLocOpBuilder &b, ValueRange inputs,
                            BodyBuilder body) {
  SmallVector<Type> rows =
      llvm::map_to_vector(inputs, [](Value v) { return rowType(v.getType()); });
  Block *block = buildBody(b, rows, body);
  int64_t outer = staticOuterSize(inputs);
  SmallVector<Type> resultTypes = llvm::map_to_vector(
      block->getTerminator()->getOperandTypes(), [&](Type row) -> Type {
        if (auto tensor = dyn_cast<RankedTensorType>(row)) {
          SmallVector<int64_t> shape{outer};
          llvm::append_range(shape, tensor.getShape());
          return RankedTensorType::get(shape, tensor.getElementType());
        }
        return RankedTensorType::get({outer}, row);
      });
  auto map = MapOp::create(b, resultTypes, inputs);
  map.getBody().push_back(block);
  return llvm::to_vector_of<Value>(map.getResults());
}

SmallVector<Value> buildReduce(ImplicitLocOpBuilder &b, ValueRange inputs,
                               ValueRange inits, BodyBuilder op) {
  SmallVector<Type> argTypes(inits.getTypes());
  llvm::append_range(argTypes, inits.getTypes());
  Block *block = buildBody(b, argTypes, op);
  auto reduce = ReduceOp::create(b, inits.getTypes(), inputs, inits);
  reduce.getBody().push_back(block);
  return llvm::to_vector_of<Value>(reduce.getResults());
}

SmallVector<Value> buildScan(ImplicitLocOpBuilder &b, ValueRange inputs,
                             ValueRange inits, BodyBuilder op) {
  SmallVector<Type> argTypes(inits.getTypes());
  llvm::append_range(argTypes, inits.getTypes());
  Block *block = buildBody(b, argTypes, op);
  SmallVector<Type> resultTypes;
  for (auto [input, init] : llvm::zip(inputs, inits)) {
    SmallVector<int64_t> shape{
        cast<RankedTensorType>(input.getType()).getDimSize(0)};
    Type element = init.getType();
    if (auto row = dyn_cast<RankedTensorType>(element)) {
      llvm::append_range(shape, row.getShape());
      element = row.getElementType();
    }
    resultTypes.push_back(RankedTensorType::get(shape, element));
  }
  auto scan = ScanOp::create(b, resultTypes, inputs, inits);
  scan.getBody().push_back(block);
  return llvm::to_vector_of<Value>(scan.getResults());
}

SmallVector<Value> buildHistogram(ImplicitLocOpBuilder &b, ValueRange dests,
                                  Value indices, ValueRange values,
                                  ValueRange inits, BodyBuilder op) {
  SmallVector<Type> argTypes(inits.getTypes());
  llvm::append_range(argTypes, inits.getTypes());
  Block *block = buildBody(b, argTypes, op);
  auto histogram = ReduceByIndexOp::create(b, dests.getTypes(), dests, indices,
                                           values, inits);
  histogram.getBody().push_back(block);
  return llvm::to_vector_of<Value>(histogram.getResults());
}

Value buildScatterAdd(ImplicitLocOpBuilder &b, Value dest, Value indices,
                      Value values) {
  Type row = rowType(dest.getType());
  Value zero;
  if (auto rowTensor = dyn_cast<RankedTensorType>(row)) {
    // A neutral row: zeros shaped like dest's rows.
    SmallVector<Value> dynamic;
    for (int64_t d = 0; d < rowTensor.getRank(); ++d)
      if (rowTensor.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(b, dest, d + 1));
    zero = tensor::SplatOp::create(
        b, floatConstant(b, rowTensor.getElementType(), 0.0), rowTensor, dynamic);
  } else {
    zero = floatConstant(b, row, 0.0);
  }
  Block *block = buildBody(b, {row, row},
                           [](ImplicitLocOpBuilder &ib, ValueRange args)
                               -> SmallVector<Value> {
                             return {buildAdd(ib, args[0], args[1])};
                           });
  auto histogram = ReduceByIndexOp::create(b, TypeRange{dest.getType()},
                                           ValueRange{dest}, indices,
                                           ValueRange{values}, ValueRange{zero});
  histogram.getBody().push_back(block);
  return histogram.getResult(0);
}

Value buildAdd(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (!isa<RankedTensorType>(x.getType()))
    return arith::AddFOp::create(b, x, y);
  return buildMap(b, {x, y},
                  [](ImplicitLocOpBuilder &ib, ValueRange rows)
                      -> SmallVector<Value> {
                    return {buildAdd(ib, rows[0], rows[1])};
                  })[0];
}

Value buildSumAll(ImplicitLocOpBuilder &b, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Type element = type.getElementType();
  Value rows = tensor;
  if (type.getRank() > 1)
    rows = buildMap(b, tensor,
                    [](ImplicitLocOpBuilder &ib, ValueRange row)
                        -> SmallVector<Value> {
                      return {buildSumAll(ib, row[0])};
                    })[0];
  Value zero = floatConstant(b, element, 0.0);
  return buildReduce(b, rows, zero,
                     [](ImplicitLocOpBuilder &ib, ValueRange args)
                         -> SmallVector<Value> {
                       return {arith::AddFOp::create(ib, args[0], args[1])};
                     })[0];
}

} // namespace soac::autodiff
