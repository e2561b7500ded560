//===- MatmulKernel.h - soac.matmul as a tiled GPU kernel ------*- C++ -*-===//
//
// A product outside SOAC bodies is one kernel of 64 x 64 tiles of the
// result, a block of kBlockSize threads each: the block stages 16-deep
// slices of op(lhs) and op(rhs) in workgroup memory (loads coalesced along
// whichever dimension each operand has contiguous), and each thread
// accumulates 16 results in registers: a 4 x 4 set by multiply-adds, or,
// for float64 on the tensor cores, its fragments of 8 warp-wide 8 x 8
// products (mma.sync). A product of fewer than 128 tiles splits its inner
// size among blocks of the same tile, and a second kernel sums their
// results.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H

#include "dialect/SoacOps.h"

namespace soac::kernels {

/// Replaces `op` by its kernel (and a host check that the two inner sizes
/// agree where either is dynamic). With `tensorCores`, a float64 product
/// runs on the tensor cores (mma.sync m8n8k4: sm_80 and later).
void lowerMatmul(MatmulOp op, bool tensorCores);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H
