//===- SizeProducts.h - sizes as products the IR shows ----------*- C++ -*-===//
//
// What soac-check-indices knows about a size without running the program:
// the product of the factors the IR builds it from (a collapsed dimension is
// the product of the source's dimensions it merges; a map's outer size is
// its input's; a tensor.empty's size is its operand), so that a check of
// sizes that are equal by construction is not emitted.
//
//===----------------------------------------------------------------------===//
#ifndef SOAC_PASSES_TRANSFORMS_SIZEPRODUCTS_H
#define SOAC_PASSES_TRANSFORMS_SIZEPRODUCTS_H

#include "dialect/SoacOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <tuple>

namespace soac {

/// A size as a constant times factors that are unknown here: dimensions of
/// tensors (a function argument's, a loop's), index values, and "is
/// positive" indicators of those (1 or 0: a map without rows has rows of
/// size 0). Two products with the same constant and factors are the same
/// number: each step follows only what an op guarantees about its result's
/// sizes, with exact products (a collapsed dimension multiplies sizes of a
/// tensor that exists), never arithmetic on indices, which may wrap.
class SizeProduct {
public:
  /// The size `size`: a constant, or the factors of a tensor.dim's
  /// dimension, or the value itself.
  static SizeProduct of(mlir::OpFoldResult size);
  /// Dimension `dim` of the ranked tensor `tensor`.
  static SizeProduct ofDim(mlir::Value tensor, int64_t dim);
  /// The empty product.
  static SizeProduct one() { return SizeProduct(1); }

  SizeProduct &operator*=(const SizeProduct &other);
  /// Whether both are known to be the same number.
  bool sameAs(const SizeProduct &other) const;
  /// 1 where this size is positive, 0 where it is 0 (it must not be
  /// negative: a size of a tensor, or `onlyDimensions`).
  SizeProduct positive() const;
  /// Whether it is a product of tensors' dimensions and a constant that is
  /// not negative, so not negative itself (index values may be).
  bool onlyDimensions() const;

private:
  struct Factor {
    mlir::Value value;
    int64_t dim; // of the tensor `value`; -1 for an index value
    bool positive; // the factor is 1 if the size is positive, else 0
    auto key() const {
      return std::make_tuple(value.getAsOpaquePointer(), dim, positive);
    }
    bool operator<(const Factor &other) const { return key() < other.key(); }
    bool operator==(const Factor &other) const { return key() == other.key(); }
  };

  explicit SizeProduct(int64_t constant) : constant(constant) {}
  explicit SizeProduct(Factor factor) : factors{factor} {}

  /// Dimension `dim` >= 1 of result `result` of `map`: its rows' dimension
  /// `dim - 1`, 0 without rows.
  static SizeProduct ofRows(MapOp map, unsigned result, int64_t dim);
  /// This size of a value in `map`'s body as a size outside `map` (its rows'
  /// sizes as its inputs' sizes); none if it depends on the row.
  std::optional<SizeProduct> outside(MapOp map) const;
  /// Sorted, without repeated indicators or indicators of factors present.
  void normalize();

  /// Null when the constant overflowed: then nothing is known.
  std::optional<int64_t> constant = 1;
  llvm::SmallVector<Factor, 4> factors;
};

} // namespace soac

#endif // SOAC_PASSES_TRANSFORMS_SIZEPRODUCTS_H
