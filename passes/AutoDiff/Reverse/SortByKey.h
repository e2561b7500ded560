//===- SortByKey.h - a stable sort of small integer keys --------*- C++ -*-===//
//
// The reverse rule of a histogram with a general operator works on the
// values sorted by bin (each bin's values contiguous, in their original
// order): a binary radix sort built from soac ops.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_REVERSE_SORTBYKEY_H
#define SOAC_PASSES_AUTODIFF_REVERSE_SORTBYKEY_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::autodiff {

/// `keys` sorted, and the permutation that sorts them: sorted position ->
/// original position.
struct SortedKeys {
  mlir::Value keys, permutation;
};

/// A stable sort of `keys` (a 1-D tensor of index values in [0, bound]):
/// one pass per bit of `bound` (O(n log bound) work), each a scan counting
/// the zeros before every key and a scatter to the new positions.
SortedKeys sortByKey(mlir::ImplicitLocOpBuilder &b, mlir::Value keys,
                     mlir::Value bound);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_REVERSE_SORTBYKEY_H
