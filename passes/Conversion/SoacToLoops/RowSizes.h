//===- RowSizes.h - sizes of a body's rows, known before it runs -*- C++ -*-===//
//
// A map with tensor rows allocates its results before computing any row, so
// it needs the rows' dynamic sizes first. Most follow from the sizes of the
// map's inputs and of values defined above it (a nested map's rows are as
// long as its inputs' rows): those are computed here from the IR's
// structure, without running the body.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWSIZES_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWSIZES_H

#include "dialect/SoacOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac::loops {

/// Size `dim` of `value` (a value of `map`'s body, or one defined above
/// `map`), built at `b`'s insertion point before `map` from sizes available
/// there; null when it depends on what the body computes (a loop's result,
/// a size read from data). Running the body once instead (on row 0) would
/// copy it, and with it every SOAC nested in it, whose own lowering copies
/// their bodies again: code exponential in the depth of nesting.
mlir::Value sizeBeforeBody(mlir::ImplicitLocOpBuilder &b, MapOp map,
                           mlir::Value value, int64_t dim);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_ROWSIZES_H
