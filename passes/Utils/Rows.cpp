//===- Rows.cpp - reading and writing rows of tensors ---------------------===//
#include "passes/Utils/Rows.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac {

Value extractRow(ImplicitLocOpBuilder &b, Value tensor, Value i) {
  return extractAt(b, tensor, ValueRange{i});
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

namespace {
/// Offsets, sizes and strides of the slice of `tensor` at the leading `indices`.
void leadingSlice(ImplicitLocOpBuilder &b, Value tensor, ValueRange indices,
                  SmallVectorImpl<OpFoldResult> &offsets,
                  SmallVectorImpl<OpFoldResult> &sizes,
                  SmallVectorImpl<OpFoldResult> &strides) {
  int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
  offsets.assign(rank, b.getIndexAttr(0));
  sizes.assign(tensor::getMixedSizes(b, b.getLoc(), tensor));
  strides.assign(rank, b.getIndexAttr(1));
  for (auto [d, index] : llvm::enumerate(indices)) {
    offsets[d] = index;
    sizes[d] = b.getIndexAttr(1);
  }
}
} // namespace

Value extractAt(ImplicitLocOpBuilder &b, Value tensor, ValueRange indices) {
  auto type = cast<RankedTensorType>(tensor.getType());
  int64_t count = indices.size();
  if (count == type.getRank())
    return tensor::ExtractOp::create(b, tensor, indices);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  leadingSlice(b, tensor, indices, offsets, sizes, strides);
  auto result = RankedTensorType::get(type.getShape().drop_front(count),
                                      type.getElementType());
  return tensor::ExtractSliceOp::create(b, result, tensor, offsets, sizes,
                                        strides);
}

Value insertAt(ImplicitLocOpBuilder &b, Value sub, Value dest,
               ValueRange indices) {
  if (!isa<RankedTensorType>(sub.getType()))
    return tensor::InsertOp::create(b, sub, dest, indices);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  leadingSlice(b, dest, indices, offsets, sizes, strides);
  return tensor::InsertSliceOp::create(b, sub, dest, offsets, sizes, strides);
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
