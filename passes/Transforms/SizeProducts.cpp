//===- SizeProducts.cpp - sizes as products the IR shows ------------------===//
#include "passes/Transforms/SizeProducts.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace soac {

namespace {

/// The size an op that sets its result's sizes gives dimension `dim` of its
/// result `tensor`, from its operands; null for other ops.
OpFoldResult sizeSetBy(Value tensor, int64_t dim) {
  Operation *op = tensor.getDefiningOp();
  auto type = cast<RankedTensorType>(tensor.getType());
  auto given = [&](ValueRange dynamicSizes) -> OpFoldResult {
    return getMixedValues(type.getShape(), dynamicSizes, op->getContext())[dim];
  };
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(op))
    return given(empty.getDynamicSizes());
  if (auto splat = dyn_cast_or_null<tensor::SplatOp>(op))
    return given(splat.getDynamicSizes());
  if (auto generate = dyn_cast_or_null<tensor::GenerateOp>(op))
    return given(generate.getDynamicExtents());
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op))
    return expand.getMixedOutputShape()[dim];
  if (auto iota = dyn_cast_or_null<IotaOp>(op))
    return iota.getSize() ? OpFoldResult(iota.getSize()) : OpFoldResult();
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(op)) {
    // The result's dimensions are the sizes of the dimensions not dropped.
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    for (int64_t d = 0, kept = 0; d < static_cast<int64_t>(sizes.size()); ++d)
      if (!dropped.test(d) && kept++ == dim)
        return sizes[d];
  }
  return {};
}

/// The tensor whose dimension `dim` an op's result `tensor` has as its own
/// (a cast's source, a write's destination, a map's input for the outer
/// size); null for other ops.
Value sameSizedOperand(Value tensor, int64_t dim) {
  Operation *op = tensor.getDefiningOp();
  if (!op)
    return {};
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return isa<RankedTensorType>(cast.getSource().getType()) ? cast.getSource()
                                                             : Value();
  if (auto insert = dyn_cast<tensor::InsertOp>(op))
    return insert.getDest();
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return insert.getDest();
  if (auto scatter = dyn_cast<ScatterOp>(op))
    return scatter.getDest();
  if (auto histogram = dyn_cast<ReduceByIndexOp>(op))
    return histogram.getDests()[cast<OpResult>(tensor).getResultNumber()];
  // Rows of a map or a scan: one per row of their inputs, whose outer sizes
  // agree (or the lowered code stops before the result exists).
  if (dim == 0 && isa<MapOp, ScanOp>(op) && op->getNumOperands() > 0 &&
      isa<RankedTensorType>(op->getOperand(0).getType()))
    return op->getOperand(0);
  return {};
}

} // namespace

SizeProduct SizeProduct::of(OpFoldResult size) {
  if (std::optional<int64_t> constant = getConstantIntValue(size))
    return SizeProduct(*constant);
  auto value = cast<Value>(size);
  if (auto dim = value.getDefiningOp<tensor::DimOp>()) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (index && type && *index >= 0 && *index < type.getRank())
      return ofDim(dim.getSource(), *index);
  }
  return SizeProduct(Factor{value, -1, false});
}

SizeProduct SizeProduct::ofDim(Value tensor, int64_t dim) {
  // Follows ops that keep the size along, without recursion: generated code
  // chains thousands of writes into one tensor.
  while (Value same = sameSizedOperand(tensor, dim))
    tensor = same;
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return SizeProduct(type.getDimSize(dim));
  if (OpFoldResult size = sizeSetBy(tensor, dim))
    return of(size);
  // A collapsed dimension: the product of the source's sizes it merges,
  // which a tensor that exists holds without overflow.
  if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    SizeProduct product(1);
    for (int64_t d : groups[dim])
      product *= ofDim(collapse.getSrc(), d);
    return product;
  }
  if (auto map = tensor.getDefiningOp<MapOp>())
    return ofRows(map, cast<OpResult>(tensor).getResultNumber(), dim);
  return SizeProduct(Factor{tensor, dim, false});
}

SizeProduct SizeProduct::ofRows(MapOp map, unsigned result, int64_t dim) {
  SizeProduct unknown(Factor{map->getResult(result), dim, false});
  Value row = map.getBody().front().getTerminator()->getOperand(result);
  if (map.getInputs().empty() || !isa<RankedTensorType>(row.getType()))
    return unknown;
  std::optional<SizeProduct> size = ofDim(row, dim - 1).outside(map);
  if (!size)
    return unknown;
  // The lowering and the interpreter give a map without rows rows of size 0.
  *size *= ofDim(map.getInputs()[0], 0).positive();
  return *size;
}

std::optional<SizeProduct> SizeProduct::outside(MapOp map) const {
  if (!constant)
    return std::nullopt;
  Block &body = map.getBody().front();
  SizeProduct lifted(*constant);
  for (const Factor &factor : factors) {
    auto arg = dyn_cast<BlockArgument>(factor.value);
    if (arg && arg.getOwner() == &body) {
      if (factor.dim < 0)
        return std::nullopt; // an element of the row
      // Dimension d of a row is dimension d + 1 of the input.
      SizeProduct input = ofDim(map.getInputs()[arg.getArgNumber()],
                                factor.dim + 1);
      lifted *= factor.positive ? input.positive() : input;
    } else if (map.getBody().isAncestor(
                   Value(factor.value).getParentRegion())) {
      return std::nullopt; // computed for each row
    } else {
      lifted *= SizeProduct(factor);
    }
  }
  return lifted;
}

SizeProduct SizeProduct::positive() const {
  if (!constant)
    return *this;
  // Sizes are not negative, so a product is positive when each factor is.
  SizeProduct indicator(*constant > 0 ? 1 : 0);
  for (const Factor &factor : factors)
    indicator.factors.push_back({factor.value, factor.dim, true});
  indicator.normalize();
  return indicator;
}

SizeProduct &SizeProduct::operator*=(const SizeProduct &other) {
  int64_t product;
  if (constant && other.constant &&
      !llvm::MulOverflow(*constant, *other.constant, product))
    constant = product;
  else
    constant = std::nullopt;
  factors.append(other.factors);
  normalize();
  return *this;
}

void SizeProduct::normalize() {
  if (constant == 0) {
    factors.clear(); // 0 times anything
    return;
  }
  llvm::sort(factors);
  // An indicator is idempotent, and 1 wherever its size is a factor too.
  SmallVector<Factor, 4> kept;
  for (const Factor &factor : factors) {
    if (factor.positive &&
        ((!kept.empty() && kept.back() == factor) ||
         llvm::is_contained(factors, Factor{factor.value, factor.dim, false})))
      continue;
    kept.push_back(factor);
  }
  factors = std::move(kept);
}

bool SizeProduct::onlyDimensions() const {
  return constant && *constant >= 0 &&
         llvm::all_of(factors, [](const Factor &f) { return f.dim >= 0; });
}

bool SizeProduct::sameAs(const SizeProduct &other) const {
  return constant && other.constant && *constant == *other.constant &&
         factors == other.factors;
}

} // namespace soac
