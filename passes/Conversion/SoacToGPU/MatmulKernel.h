//===- MatmulKernel.h - soac.matmul as a tiled GPU kernel ------*- C++ -*-===//
//
// A product outside SOAC bodies is one kernel of 64 x 64 tiles of the
// result, a block of kBlockSize threads each: the block stages 16-deep
// slices of op(lhs) and op(rhs) in workgroup memory (loads coalesced along
// whichever dimension each operand has contiguous), and each thread
// accumulates a 4 x 4 set of results in registers, 16 multiply-adds per
// value staged per slice.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H

#include "dialect/SoacOps.h"

namespace soac::kernels {

/// Replaces `op` by its kernel (and a host check that the two inner sizes
/// agree where either is dynamic).
void lowerMatmul(MatmulOp op);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_MATMULKERNEL_H
