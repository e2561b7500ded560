//===- RowKernel.h - maps over rows as one thread block per row -*- C++ -*-===//
//
// A soac.map whose rows are vectors (or whose body reduces, scans or maps
// them) runs one thread block per row: the nested parallelism of the body is
// the block's. Inside the body,
//
//   - scalar code runs in every thread (its values are the same in all);
//   - an inner soac.map over the row's vectors is not materialized: its
//     elements are recomputed where they are read;
//   - an inner soac.reduce is a block reduction (segmented reduce);
//   - an inner soac.scan yielded by the body is a block scan written into
//     the result row (segmented scan);
//   - a yielded vector is written by the block's threads in stride
//     (coalesced), a yielded scalar by thread 0.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_ROWKERNEL_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_ROWKERNEL_H

#include "dialect/SoacOps.h"

namespace soac::kernels {

/// Succeeds when `map` can run as one block per row; otherwise emits an
/// error at the first op of its body that cannot.
mlir::LogicalResult checkRowKernel(MapOp map);

/// True when `map` can run as one block per row (checkRowKernel, silently).
/// The others run one thread per row (ThreadKernel.h).
bool fitsRowKernel(MapOp map);

/// Replaces `map` by its kernel.
void lowerRowKernel(MapOp map);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_ROWKERNEL_H
