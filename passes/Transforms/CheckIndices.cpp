//===- CheckIndices.cpp - soac-check-indices ------------------------------===//
//
// Every access of a tensor at an index that is not known to be in range gets
// a soac.check_index in front of it, so that compiled code never reads or
// writes outside a buffer, whatever the data. The checks are ops on indices
// only: SOAC bodies holding them stay free of side effects, and every later
// pass (fusion, lowering, bufferization) carries them along; soac-lower-checks
// turns them into calls of the runtime on the CPU. The sizes that ops assert
// without checking (a tensor.expand_shape's output sizes, a tensor.cast to a
// static size, ...) get soac.checks (CheckSizes.h).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "dialect/SoacOps.h"
#include "passes/Transforms/CheckSizes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"

namespace soac {
#define GEN_PASS_DEF_SOACCHECKINDICES
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Whether `index` < dim `dim` of `tensor` holds whatever the data: a
/// constant index below a static size, or an index checked against that
/// size already.
bool knownInRange(OpFoldResult index, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  std::optional<int64_t> constant = getConstantIntValue(index);
  if (constant && !type.isDynamicDim(dim))
    return *constant >= 0 && *constant < type.getDimSize(dim);
  auto value = dyn_cast<Value>(index);
  auto check = value ? value.getDefiningOp<soac::CheckIndexOp>() : nullptr;
  if (!check)
    return false;
  auto size = check.getSize().getDefiningOp<tensor::DimOp>();
  return size && size.getSource() == tensor &&
         size.getConstantIndex() == std::optional<int64_t>(dim);
}

/// `index`, checked against dim `dim` of `tensor` unless known in range.
Value checked(ImplicitLocOpBuilder &b, Value index, Value tensor, int64_t dim,
              StringRef access) {
  if (knownInRange(index, tensor, dim))
    return index;
  Value size = tensor::DimOp::create(b, tensor, dim);
  return soac::CheckIndexOp::create(
      b, index, size, llvm::formatv("'{0}' dimension {1}", access, dim).str());
}

/// Checks the indices of an element access (tensor.extract, tensor.insert).
void checkElementAccess(Operation *op, Value tensor, MutableOperandRange indices) {
  ImplicitLocOpBuilder b(op->getLoc(), op);
  StringRef access = op->getName().getStringRef();
  for (auto [dim, operand] : llvm::enumerate(indices))
    operand.set(checked(b, operand.get(), tensor, dim, access));
}

/// The number of offsets at which `count` elements `stride` apart fit in a
/// dimension of `size`: `size - (count - 1) * stride`, 0 when the span does
/// not fit (or overflows), and `size + 1` for an empty slice (any offset up
/// to the end is fine).
Value fittingOffsets(ImplicitLocOpBuilder &b, Value size, Value count,
                     Value stride, bool unitStride) {
  using Predicate = arith::CmpIPredicate;
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value span = b.createOrFold<arith::SubIOp>(count, one);
  Value fits = b.createOrFold<arith::CmpIOp>(Predicate::ult, span, size);
  if (!unitStride) {
    auto product = arith::MulUIExtendedOp::create(b, span, stride);
    span = product.getLow();
    Value exact =
        b.createOrFold<arith::CmpIOp>(Predicate::eq, product.getHigh(), zero);
    fits = b.createOrFold<arith::AndIOp>(
        exact, b.createOrFold<arith::CmpIOp>(Predicate::ult, span, size));
  }
  Value bound = b.createOrFold<arith::SelectOp>(
      fits, b.createOrFold<arith::SubIOp>(size, span), zero);
  Value empty = b.createOrFold<arith::CmpIOp>(Predicate::eq, count, zero);
  return b.createOrFold<arith::SelectOp>(
      empty, b.createOrFold<arith::AddIOp>(size, one), bound);
}

/// The earliest point of `op`'s block at which every one of `values` is
/// defined: just after the last of them defined in that block, or its start.
Block::iterator earliestPointFor(Operation *op, ValueRange values) {
  Block *block = op->getBlock();
  Operation *last = nullptr;
  for (Value value : values) {
    Operation *def = value.getDefiningOp();
    Operation *inBlock = def ? block->findAncestorOpInBlock(*def) : nullptr;
    if (inBlock && (!last || last->isBeforeInBlock(inBlock)))
      last = inBlock;
  }
  return last ? std::next(Block::iterator(last)) : block->begin();
}

/// Checks a slice of `tensor` (the source of an extract_slice, the
/// destination of an insert_slice): in each dimension whose offset, size or
/// stride is not static, or whose size is dynamic, the offset is checked
/// against the offsets at which the slice fits, and the slice reads the
/// checked offset. An insert_slice's checks come as early as their operands
/// allow (they have no side effects to keep in order): a map whose result
/// the slice receives is then computed in the slice (sliceComputedIn, in
/// convert-soac-to-loops), which needs the checked offsets before the map.
template <typename SliceOp> void checkSlice(SliceOp slice, Value tensor) {
  Operation *op = slice.getOperation();
  ImplicitLocOpBuilder b(op->getLoc(), op);
  if (isa<tensor::InsertSliceOp>(op))
    b.setInsertionPoint(op->getBlock(),
                        earliestPointFor(op, op->getOperands().drop_front()));
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  SmallVector<OpFoldResult> strides = slice.getMixedStrides();
  SmallVector<int64_t> staticOffsets(slice.getStaticOffsets());
  SmallVector<Value> dynamicOffsets;
  bool changed = false;
  // Rank-reducing slices still list every dimension of the tensor.
  for (int64_t dim = 0; dim < type.getRank(); ++dim) {
    auto value = [&](OpFoldResult v) {
      return getValueOrCreateConstantIndexOp(b, b.getLoc(), v);
    };
    bool allStatic = getConstantIntValue(offsets[dim]) &&
                     getConstantIntValue(sizes[dim]) &&
                     getConstantIntValue(strides[dim]);
    if (allStatic && !type.isDynamicDim(dim)) { // the verifier checked it
      if (!getConstantIntValue(offsets[dim]))
        dynamicOffsets.push_back(cast<Value>(offsets[dim]));
      continue;
    }
    Value bound = fittingOffsets(
        b, tensor::DimOp::create(b, tensor, dim), value(sizes[dim]),
        value(strides[dim]), getConstantIntValue(strides[dim]) == 1);
    Value offset = soac::CheckIndexOp::create(
        b, value(offsets[dim]), bound,
        llvm::formatv("'{0}' dimension {1} (the offsets at which the slice "
                      "fits)",
                      op->getName().getStringRef(), dim)
            .str());
    staticOffsets[dim] = ShapedType::kDynamic;
    dynamicOffsets.push_back(offset);
    changed = true;
  }
  if (!changed)
    return;
  slice.getOffsetsMutable().assign(dynamicOffsets);
  slice.setStaticOffsetsAttr(b.getDenseI64ArrayAttr(staticOffsets));
}

struct SoacCheckIndicesPass
    : soac::impl::SoacCheckIndicesBase<SoacCheckIndicesPass> {
  using SoacCheckIndicesBase::SoacCheckIndicesBase;

  void runOnOperation() override {
    if (assumeInBounds) {
      // Checks made earlier (by the reverse rule of tensor.extract, or by
      // an earlier run) go too.
      getOperation().walk([](Operation *op) {
        if (auto check = dyn_cast<soac::CheckIndexOp>(op)) {
          check.replaceAllUsesWith(check.getIndex());
          check.erase();
        } else if (isa<soac::CheckOp>(op)) {
          op->erase();
        }
      });
      return;
    }
    getOperation().walk([&](Operation *op) {
      if (assumedInBounds(op))
        return;
      if (auto extract = dyn_cast<tensor::ExtractOp>(op))
        checkElementAccess(op, extract.getTensor(),
                           extract.getIndicesMutable());
      else if (auto insert = dyn_cast<tensor::InsertOp>(op))
        checkElementAccess(op, insert.getDest(), insert.getIndicesMutable());
      else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
        checkSlice(slice, slice.getSource());
      else if (auto slice = dyn_cast<tensor::InsertSliceOp>(op))
        checkSlice(slice, slice.getDest());
      else if (auto dim = dyn_cast<tensor::DimOp>(op))
        checkDim(dim);
      soac::checkAssertedSizes(op);
    });
  }

  /// An op, or a function around it, marked `soac.assume_in_bounds`.
  static bool assumedInBounds(Operation *op) {
    for (; op; op = op->getParentOp())
      if (op->hasAttr(kAssumeInBounds))
        return true;
    return false;
  }

  /// A tensor.dim at a computed dimension: below the rank.
  static void checkDim(tensor::DimOp dim) {
    if (dim.getConstantIndex())
      return;
    ImplicitLocOpBuilder b(dim.getLoc(), dim);
    auto rank = arith::ConstantIndexOp::create(
        b, cast<ShapedType>(dim.getSource().getType()).getRank());
    Value index = soac::CheckIndexOp::create(
        b, dim.getIndex(), rank, "'tensor.dim' dimension");
    dim.getIndexMutable().set(index);
  }

  static constexpr llvm::StringLiteral kAssumeInBounds =
      "soac.assume_in_bounds";
};

} // namespace
