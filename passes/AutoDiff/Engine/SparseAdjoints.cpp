//===- SparseAdjoints.cpp - sparse adjoints of free tensors ---------------===//
#include "passes/AutoDiff/Engine/SparseAdjoints.h"

#include "dialect/SoacOps.h"
#include "passes/AutoDiff/Engine/Loops.h"
#include "passes/AutoDiff/Engine/ReverseEngine.h"
#include "passes/AutoDiff/Interfaces/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

bool isInside(Value value, Block &body) {
  return body.getParent()->isAncestor(value.getParentRegion());
}

/// `extent` as an extent outside `body`, or none when it may differ between
/// runs of `body`.
std::optional<Extent> liftExtent(const Extent &extent, Operation *owner,
                                 Block &body) {
  switch (extent.kind) {
  case Extent::Kind::Static:
    return extent;
  case Extent::Kind::Value: {
    Value value = extent.value;
    if (!isInside(value, body))
      return extent;
    Operation *def = value.getDefiningOp();
    // Constants are cloned where the size is needed.
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      return extent;
    if (auto dim = dyn_cast_or_null<tensor::DimOp>(def))
      if (std::optional<int64_t> d = dim.getConstantIndex())
        return liftExtent(Extent::ofDim(dim.getSource(), *d), owner, body);
    // A size converted between integer types (the frontend's sizes are
    // int64 values, iota's an index): the size it converts, cast where the
    // batch is materialized.
    if (auto cast = dyn_cast_or_null<arith::IndexCastOp>(def))
      return liftExtent(Extent::ofValue(cast.getIn()), owner, body);
    if (auto cast = dyn_cast_or_null<arith::IndexCastUIOp>(def))
      return liftExtent(Extent::ofValue(cast.getIn()), owner, body);
    return std::nullopt;
  }
  case Extent::Kind::Dim: {
    Value tensor = extent.value;
    auto type = cast<ShapedType>(tensor.getType());
    if (!type.isDynamicDim(extent.dim))
      return Extent::ofStatic(type.getDimSize(extent.dim));
    if (!isInside(tensor, body))
      return extent;
    // A map's row: the next dimension of its input.
    if (auto arg = dyn_cast<BlockArgument>(tensor)) {
      auto map = dyn_cast<MapOp>(owner);
      if (!map || arg.getOwner() != &body)
        return std::nullopt;
      return liftExtent(
          Extent::ofDim(map.getInputs()[arg.getArgNumber()], extent.dim + 1),
          owner, body);
    }
    Operation *def = tensor.getDefiningOp();
    if (def->getBlock() != &body || extent.dim != 0)
      return std::nullopt;
    if (auto iota = dyn_cast<IotaOp>(def))
      return iota.getSize()
                 ? liftExtent(Extent::ofValue(iota.getSize()), owner, body)
                 : std::nullopt;
    ValueRange inputs;
    if (auto map = dyn_cast<MapOp>(def))
      inputs = map.getInputs();
    else if (auto scan = dyn_cast<ScanOp>(def))
      inputs = scan.getInputs();
    for (Value input : inputs)
      if (std::optional<Extent> lifted =
              liftExtent(Extent::ofDim(input, 0), owner, body))
        return lifted;
    return std::nullopt;
  }
  }
  llvm_unreachable("unknown extent kind");
}

Value materializeExtent(AdjointBuilder &a, const Extent &extent) {
  ImplicitLocOpBuilder &b = a.builder();
  switch (extent.kind) {
  case Extent::Kind::Static:
    return arith::ConstantIndexOp::create(b, extent.size);
  case Extent::Kind::Value: {
    Operation *def = extent.value.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      return b.clone(*def)->getResult(0);
    return a.primal(extent.value);
  }
  case Extent::Kind::Dim:
    return tensor::DimOp::create(b, a.primal(extent.value), extent.dim);
  }
  llvm_unreachable("unknown extent kind");
}

} // namespace

std::optional<SmallVector<BatchFactor>>
liftBatch(ArrayRef<BatchFactor> batch, Operation *owner, Block &body) {
  SmallVector<BatchFactor> lifted;
  for (const BatchFactor &factor : batch) {
    BatchFactor outside;
    for (const Extent &part : factor.parts) {
      std::optional<Extent> extent = liftExtent(part, owner, body);
      if (!extent)
        return std::nullopt;
      outside.parts.push_back(*extent);
    }
    lifted.push_back(std::move(outside));
  }
  return lifted;
}

SmallVector<Value> materializeBatchSizes(AdjointBuilder &a,
                                         ArrayRef<BatchFactor> batch) {
  ImplicitLocOpBuilder &b = a.builder();
  return llvm::map_to_vector(batch, [&](const BatchFactor &factor) {
    SmallVector<Value, 3> parts = llvm::map_to_vector<3>(
        factor.parts, [&](const Extent &e) { return materializeExtent(a, e); });
    return parts.size() == 3 ? tripCount(b, parts[0], parts[1], parts[2])
                             : castInteger(b, parts[0], b.getIndexType());
  });
}

Value buildRecord(AdjointBuilder &a, ArrayRef<Value> leading,
                  const SparseAdjoint &read, Value part, bool zeros) {
  ImplicitLocOpBuilder &b = a.builder();
  int64_t batchRank = read.batch.size();
  SmallVector<int64_t> shape(leading.size(), ShapedType::kDynamic);
  SmallVector<Value> dynamic(leading);
  Type element = part.getType();
  if (auto tensor = dyn_cast<RankedTensorType>(part.getType())) {
    element = tensor.getElementType();
    Value source = a.primal(read.tensor);
    // The part's dimensions past its batch are the source's last ones.
    int64_t skipped = cast<RankedTensorType>(source.getType()).getRank() -
                      (tensor.getRank() - batchRank);
    for (int64_t d = batchRank; d < tensor.getRank(); ++d) {
      shape.push_back(tensor.getDimSize(d));
      if (tensor.isDynamicDim(d))
        dynamic.push_back(
            tensor::DimOp::create(b, source, skipped + d - batchRank));
    }
  }
  if (!zeros)
    return tensor::EmptyOp::create(b, shape, element, dynamic);
  Value zero = arith::ConstantOp::create(b, element, b.getZeroAttr(element));
  if (shape.empty())
    return zero;
  return tensor::SplatOp::create(b, zero,
                                 RankedTensorType::get(shape, element), dynamic);
}

SmallVector<SparseAdjoint> mergeScalarReads(ImplicitLocOpBuilder &b,
                                            ArrayRef<SparseAdjoint> reads) {
  SmallVector<SparseAdjoint> merged;
  // Positions in `reads` of the scalar reads of each tensor.
  llvm::MapVector<Value, SmallVector<unsigned>> groups;
  for (auto [position, read] : llvm::enumerate(reads)) {
    if (!read.batch.empty() || isa<ShapedType>(read.value.getType())) {
      merged.push_back(read);
      continue;
    }
    groups[read.tensor].push_back(position);
  }
  for (const auto &[tensor, group] : groups) {
    if (group.size() == 1) {
      merged.push_back(reads[group.front()]);
      continue;
    }
    auto stack = [&](auto component) {
      SmallVector<Value> elements = llvm::map_to_vector(
          group, [&](unsigned position) { return component(reads[position]); });
      auto type = RankedTensorType::get(
          {static_cast<int64_t>(elements.size())}, elements.front().getType());
      return Value(tensor::FromElementsOp::create(b, type, elements));
    };
    SparseAdjoint batch{tensor, {}, {}, {}};
    batch.index = stack([](const SparseAdjoint &read) { return read.index; });
    batch.value = stack([](const SparseAdjoint &read) { return read.value; });
    batch.batch.push_back(
        {{Extent::ofStatic(static_cast<int64_t>(group.size()))}});
    merged.push_back(std::move(batch));
  }
  return merged;
}

void scatterIntoAdjoint(AdjointBuilder &a, Value original, Value indices,
                        Value values) {
  ImplicitLocOpBuilder &b = a.builder();
  // Into the adjoint accumulated so far (several read sites of one tensor
  // chain their scatters), else into zeros.
  Value existing = a.adjoint(original);
  Value dest = existing ? existing : a.zerosLike(a.primal(original));
  auto update = [&](Value updated) {
    if (existing)
      a.replaceAdjoint(original, updated);
    else
      a.accumulate(original, updated);
  };
  // The batch as one dimension.
  int64_t batchRank = cast<RankedTensorType>(indices.getType()).getRank();
  if (batchRank > 1) {
    SmallVector<ReassociationIndices> batch{
        llvm::to_vector(llvm::seq<int64_t>(0, batchRank))};
    indices = tensor::CollapseShapeOp::create(b, indices, batch);
    int64_t valueRank = cast<RankedTensorType>(values.getType()).getRank();
    for (int64_t d = batchRank; d < valueRank; ++d)
      batch.push_back({d});
    values = tensor::CollapseShapeOp::create(b, values, batch);
  }
  // Each value is the sub-tensor at a row-major position over the leading
  // dimensions it leaves out: rows of dest, or of dest with those merged.
  auto type = cast<RankedTensorType>(dest.getType());
  int64_t indexed = type.getRank() -
                    (cast<RankedTensorType>(values.getType()).getRank() - 1);
  if (indexed == 1) {
    update(buildScatterAdd(b, dest, indices, values));
    return;
  }
  SmallVector<ReassociationIndices> merged{
      llvm::to_vector(llvm::seq<int64_t>(0, indexed))};
  for (int64_t d = indexed; d < type.getRank(); ++d)
    merged.push_back({d});
  Value flat = tensor::CollapseShapeOp::create(b, dest, merged);
  Value scattered = buildScatterAdd(b, flat, indices, values);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, b.getLoc(), dest);
  update(tensor::ExpandShapeOp::create(b, type, scattered, merged, shape));
}

} // namespace soac::autodiff
