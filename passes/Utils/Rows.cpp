//===- Rows.cpp - reading and writing rows of tensors ---------------------===//
#include "passes/Utils/Rows.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac {

Value extractRow(ImplicitLocOpBuilder &b, Value tensor, Value i) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getRank() == 1)
    return tensor::ExtractOp::create(b, tensor, ValueRange{i});
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  offsets[0] = i;
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, b.getLoc(), tensor);
  sizes[0] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(
      b, cast<RankedTensorType>(rowType(type)), tensor, offsets, sizes, strides);
}

Value insertRow(ImplicitLocOpBuilder &b, Value row, Value dest, Value i,
                ArrayRef<OpFoldResult> rowSizes) {
  if (!isa<RankedTensorType>(row.getType()))
    return tensor::InsertOp::create(b, row, dest, ValueRange{i});
  auto destType = cast<RankedTensorType>(dest.getType());
  SmallVector<OpFoldResult> offsets(destType.getRank(), b.getIndexAttr(0));
  offsets[0] = i;
  // The sizes of a row of dest (rows are regular): values known before the
  // row is computed, so that the row can be computed in place in dest's
  // slice (empty-tensor elimination needs them to dominate the row's
  // tensor.empty).
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
  if (rowSizes.empty())
    llvm::append_range(sizes, tensor::getMixedSizes(b, b.getLoc(), row));
  else
    llvm::append_range(sizes, rowSizes);
  SmallVector<OpFoldResult> strides(destType.getRank(), b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, row, dest, offsets, sizes, strides);
}

Value emptyRows(ImplicitLocOpBuilder &b, Value count, Value row) {
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  SmallVector<Value> dynamic{count};
  Type element = row.getType();
  if (auto tensor = dyn_cast<RankedTensorType>(row.getType())) {
    element = tensor.getElementType();
    for (int64_t d = 0; d < tensor.getRank(); ++d) {
      shape.push_back(tensor.getDimSize(d));
      if (tensor.isDynamicDim(d))
        dynamic.push_back(tensor::DimOp::create(b, row, d));
    }
  }
  return tensor::EmptyOp::create(b, shape, element, dynamic);
}

} // namespace soac
