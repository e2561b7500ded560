//===- CheckSizes.cpp - checks of the sizes ops assert --------------------===//
//
// Each check is a soac.check whose message names the op and shows the two
// sizes that differ; a failed one raises an ExecutionError, as the checks of
// a SOAC's operand sizes do. A product of sizes is checked in two steps: that
// no factor is negative and the product does not overflow, then that it is
// the size it must be (a wrapped product could match it).
//
// Tensors without elements: a map without rows gives its rows size 0 (the
// lowering and the interpreter agree), so soac's own code can expand an
// empty tensor of sizes [0, 0] into [0, 4, 5], or cast it to [0, 4]. Where
// the source and the result of an expand_shape, a cast or an insert_slice
// both have no elements nothing is read or written, and their sizes may
// differ (numpy reshapes an empty array into any empty shape too).
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/CheckSizes.h"

#include "dialect/SoacOps.h"
#include "passes/Transforms/SizeProducts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace soac {

namespace {

using Predicate = arith::CmpIPredicate;

/// The product of `sizes`, as far as the IR shows it.
SizeProduct productOf(ArrayRef<OpFoldResult> sizes) {
  SizeProduct product = SizeProduct::one();
  for (OpFoldResult size : sizes)
    product *= SizeProduct::of(size);
  return product;
}

/// Builds the checks of one op, before it. The sizes it reads that no check
/// needed in the end (SizeProduct knew them equal) are erased with it.
class SizeChecker {
public:
  explicit SizeChecker(Operation *op) : op(op), b(op->getLoc(), op) {
    b.setListener(&created);
  }
  ~SizeChecker() {
    for (Operation *unused : llvm::reverse(created.ops))
      if (isOpTriviallyDead(unused))
        unused->erase();
  }
  SizeChecker(const SizeChecker &) = delete;
  SizeChecker &operator=(const SizeChecker &) = delete;

  /// Sizes that differ pass when the op's source (of sizes `sourceSizes`)
  /// and its result (`resultSizes`) both have no elements. Unless
  /// `resultChecked` (an earlier check stops the program on a negative one),
  /// result sizes that are index values may be negative.
  void allowEmpty(ArrayRef<OpFoldResult> sourceSizes,
                  ArrayRef<OpFoldResult> resultSizes,
                  bool resultChecked = false) {
    empty = Empty{llvm::to_vector(sourceSizes), llvm::to_vector(resultSizes),
                  productOf(sourceSizes), productOf(resultSizes),
                  resultChecked, {}};
  }

  /// A check that `size` is `expected`: `message` shows both (`%lld`).
  void equal(OpFoldResult size, OpFoldResult expected, const Twine &message) {
    if (knownEqual(SizeProduct::of(size), SizeProduct::of(expected)))
      return;
    Value actual = value(size), wanted = value(expected);
    check(sameOrEmpty(actual, wanted), message, {actual, wanted});
  }

  /// A check that `factors` multiply to `expected` (`known` is what the IR
  /// says `expected` is): `what` names the factors, `expectedText` says what
  /// `expected` is, with a `%lld` for it.
  void product(ArrayRef<OpFoldResult> factors, OpFoldResult expected,
               const SizeProduct &known, StringRef what,
               StringRef expectedText) {
    if (knownEqual(productOf(factors), known))
      return;
    Value zero = value(b.getIndexAttr(0));
    Value total = value(b.getIndexAttr(1));
    Value wrong = arith::ConstantIntOp::create(b, 0, 1);
    bool multiplied = false;
    for (OpFoldResult factor : factors) {
      if (getConstantIntValue(factor) == 1)
        continue;
      Value size = value(factor);
      if (!getConstantIntValue(factor))
        wrong = b.createOrFold<arith::OrIOp>(
            wrong, b.createOrFold<arith::CmpIOp>(Predicate::slt, size, zero));
      if (!multiplied) {
        total = size;
        multiplied = true;
        continue;
      }
      SmallVector<Value, 2> times; // the low and the high word
      b.createOrFold<arith::MulUIExtendedOp>(times, total, size);
      total = times[0];
      wrong = b.createOrFold<arith::OrIOp>(
          wrong, b.createOrFold<arith::CmpIOp>(Predicate::ne, times[1], zero));
    }
    check(b.createOrFold<arith::XOrIOp>(wrong,
                                        arith::ConstantIntOp::create(b, 1, 1)),
          "one of " + what + " is negative, or their product overflows");
    Value wanted = value(expected);
    check(sameOrEmpty(total, wanted),
          what + " multiply to %lld, but " + expectedText, {total, wanted});
  }

  /// `size` as an index value.
  Value value(OpFoldResult size) {
    return getValueOrCreateConstantIndexOp(b, b.getLoc(), size);
  }

  ImplicitLocOpBuilder &builder() { return b; }

private:
  struct Empty {
    SmallVector<OpFoldResult> sourceSizes, resultSizes;
    SizeProduct source, result;
    bool resultChecked;
    Value both; // built on first use
  };

  /// Whether `a` is `b` wherever the check would run: everywhere, or, with
  /// `allowEmpty`, wherever the source or the result has elements.
  bool knownEqual(const SizeProduct &a, const SizeProduct &b) const {
    if (a.sameAs(b))
      return true;
    // A negative result size would make `positive` wrong.
    if (!empty ||
        (!empty->resultChecked && !empty->result.onlyDimensions()))
      return false;
    for (const SizeProduct *total : {&empty->source, &empty->result}) {
      SizeProduct nonEmpty = total->positive(), left = a, right = b;
      left *= nonEmpty;
      right *= nonEmpty;
      if (!left.sameAs(right))
        return false;
    }
    return true;
  }

  /// `actual == wanted`, or both the source and the result are empty.
  Value sameOrEmpty(Value actual, Value wanted) {
    Value same = b.createOrFold<arith::CmpIOp>(Predicate::eq, actual, wanted);
    if (!empty || matchPattern(same, m_One()))
      return same;
    if (!empty->both) {
      Value zero = value(b.getIndexAttr(0));
      auto hasZero = [&](ArrayRef<OpFoldResult> sizes) {
        Value found = arith::ConstantIntOp::create(b, 0, 1);
        for (OpFoldResult size : sizes)
          found = b.createOrFold<arith::OrIOp>(
              found,
              b.createOrFold<arith::CmpIOp>(Predicate::eq, value(size), zero));
        return found;
      };
      empty->both = b.createOrFold<arith::AndIOp>(
          hasZero(empty->sourceSizes), hasZero(empty->resultSizes));
    }
    return b.createOrFold<arith::OrIOp>(same, empty->both);
  }

  /// soac.check %ok, "'<op>': <message>", unless `ok` is known to hold.
  void check(Value ok, const Twine &message, ValueRange values = {}) {
    if (matchPattern(ok, m_One()))
      return;
    CheckOp::create(
        b, ok, ("'" + op->getName().getStringRef() + "': " + message).str(),
        values);
  }

  struct Created : OpBuilder::Listener {
    void notifyOperationInserted(Operation *op,
                                 OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
    SmallVector<Operation *> ops;
  };

  Operation *op;
  ImplicitLocOpBuilder b;
  Created created;
  std::optional<Empty> empty;
};

/// Group `g`'s output sizes multiply to the source's dimension `g`.
void checkExpandShape(tensor::ExpandShapeOp expand) {
  SizeChecker checker(expand);
  ImplicitLocOpBuilder &b = checker.builder();
  SmallVector<OpFoldResult> sizes = expand.getMixedOutputShape();
  SmallVector<OpFoldResult> sourceSizes =
      tensor::getMixedSizes(b, expand.getLoc(), expand.getSrc());
  checker.allowEmpty(sourceSizes, sizes);
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  for (auto [g, group] : llvm::enumerate(groups)) {
    // The verifier compared static groups; one with a dynamic size has a
    // dynamic source size.
    if (getConstantIntValue(sourceSizes[g]))
      continue;
    SmallVector<OpFoldResult> factors;
    for (int64_t d : group)
      factors.push_back(sizes[d]);
    checker.product(factors, sourceSizes[g],
                    SizeProduct::ofDim(expand.getSrc(), g),
                    llvm::formatv("the sizes of group {0}", g).str(),
                    "the source has %lld");
  }
}

/// Each dynamic dimension of the source that the result makes static has
/// that size.
void checkCast(tensor::CastOp castOp) {
  auto source = dyn_cast<RankedTensorType>(castOp.getSource().getType());
  auto result = dyn_cast<RankedTensorType>(castOp.getType());
  if (!source || !result)
    return; // soac's lowerings take ranked tensors only
  SizeChecker checker(castOp);
  ImplicitLocOpBuilder &b = checker.builder();
  SmallVector<OpFoldResult> sourceSizes =
      tensor::getMixedSizes(b, castOp.getLoc(), castOp.getSource());
  SmallVector<OpFoldResult> resultSizes = sourceSizes;
  for (int64_t d = 0; d < result.getRank(); ++d)
    if (!result.isDynamicDim(d))
      resultSizes[d] = b.getIndexAttr(result.getDimSize(d));
  checker.allowEmpty(sourceSizes, resultSizes);
  for (int64_t d = 0; d < result.getRank(); ++d) {
    if (result.isDynamicDim(d) || !source.isDynamicDim(d))
      continue;
    checker.equal(sourceSizes[d], resultSizes[d],
                  llvm::formatv("dimension {0} of the source has size %lld, "
                                "but the result type has %lld",
                                d));
  }
}

/// The shape's sizes are the result type's static ones and multiply to the
/// source's number of elements.
void checkReshape(tensor::ReshapeOp reshape) {
  auto source = dyn_cast<RankedTensorType>(reshape.getSource().getType());
  auto result = dyn_cast<RankedTensorType>(reshape.getType());
  if (!source || !result)
    return; // soac's lowerings take ranked tensors only
  SizeChecker checker(reshape);
  ImplicitLocOpBuilder &b = checker.builder();
  SmallVector<OpFoldResult> factors;
  for (int64_t d = 0; d < result.getRank(); ++d) {
    Value size = b.createOrFold<tensor::ExtractOp>(
        reshape.getShape(), checker.value(b.getIndexAttr(d)));
    if (!size.getType().isIndex())
      size = b.createOrFold<arith::IndexCastOp>(b.getIndexType(), size);
    if (result.isDynamicDim(d)) {
      factors.push_back(getAsOpFoldResult(size));
      continue;
    }
    OpFoldResult dim = b.getIndexAttr(result.getDimSize(d));
    checker.equal(getAsOpFoldResult(size), dim,
                  llvm::formatv("dimension {0} of the shape is %lld, but the "
                                "result type has %lld",
                                d));
    factors.push_back(dim);
  }
  // The elements of a tensor that exists: their number does not overflow.
  SizeProduct known = SizeProduct::one();
  Value elements = checker.value(b.getIndexAttr(1));
  for (int64_t d = 0; d < source.getRank(); ++d) {
    known *= SizeProduct::ofDim(reshape.getSource(), d);
    elements = b.createOrFold<arith::MulIOp>(
        elements, checker.value(tensor::getMixedSize(
                      b, reshape.getLoc(), reshape.getSource(), d)));
  }
  checker.product(factors, elements, known, "the shape's sizes",
                  "the source has %lld elements");
}

/// The source's sizes are the slice's (its dimensions that are not
/// dropped).
void checkInsertSlice(tensor::InsertSliceOp insert) {
  SizeChecker checker(insert);
  ImplicitLocOpBuilder &b = checker.builder();
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  SmallVector<OpFoldResult> sliceSizes = insert.getMixedSizes();
  SmallVector<OpFoldResult> sourceSizes =
      tensor::getMixedSizes(b, insert.getLoc(), insert.getSource());
  // checkSlice stopped the program on a negative slice size.
  checker.allowEmpty(sourceSizes, sliceSizes, /*resultChecked=*/true);
  RankedTensorType source = insert.getSourceType();
  for (int64_t d = 0, j = 0; d < static_cast<int64_t>(sliceSizes.size()); ++d) {
    if (dropped.test(d))
      continue;
    int64_t sourceDim = j++;
    if (!source.isDynamicDim(sourceDim) && getConstantIntValue(sliceSizes[d]))
      continue; // the verifier compared them
    checker.equal(sourceSizes[sourceDim], sliceSizes[d],
                  llvm::formatv("dimension {0} of the source has size %lld, "
                                "but the slice has %lld",
                                sourceDim));
  }
}

/// The inputs agree with the result's sizes outside the concatenated
/// dimension, and add up to its static size along it.
void checkConcat(tensor::ConcatOp concat) {
  SizeChecker checker(concat);
  ImplicitLocOpBuilder &b = checker.builder();
  // The sizes the lowering gives the result.
  ReifiedRankedShapedTypeDims reified;
  if (failed(reifyResultShapes(b, concat, reified)))
    return;
  RankedTensorType result = concat.getResultType();
  int64_t axis = concat.getDim();
  for (int64_t d = 0; d < result.getRank(); ++d) {
    if (d == axis)
      continue;
    for (auto [k, input] : llvm::enumerate(concat.getInputs())) {
      OpFoldResult size = tensor::getMixedSize(b, concat.getLoc(), input, d);
      if (getConstantIntValue(size) && getConstantIntValue(reified[0][d]))
        continue; // the verifier compared them
      checker.equal(size, reified[0][d],
                    llvm::formatv("input {0} has size %lld in dimension {1}, "
                                  "but the result has %lld",
                                  k, d));
    }
  }
  if (result.isDynamicDim(axis))
    return; // the sum of the inputs' sizes
  Value total = checker.value(b.getIndexAttr(0));
  bool allStatic = true;
  for (Value input : concat.getInputs()) {
    OpFoldResult size = tensor::getMixedSize(b, concat.getLoc(), input, axis);
    allStatic &= getConstantIntValue(size).has_value();
    // Sizes of tensors that exist: their sum does not overflow.
    total = b.createOrFold<arith::AddIOp>(total, checker.value(size));
  }
  if (allStatic)
    return; // the verifier compared them
  checker.equal(total, b.getIndexAttr(result.getDimSize(axis)),
                llvm::formatv("the inputs' sizes in dimension {0} add up to "
                              "%lld, but the result has %lld",
                              axis));
}

} // namespace

void checkAssertedSizes(Operation *op) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    checkExpandShape(expand);
  else if (auto castOp = dyn_cast<tensor::CastOp>(op))
    checkCast(castOp);
  else if (auto reshape = dyn_cast<tensor::ReshapeOp>(op))
    checkReshape(reshape);
  else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    checkInsertSlice(insert);
  else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    checkConcat(concat);
}

} // namespace soac
