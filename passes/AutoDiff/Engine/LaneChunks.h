//===- LaneChunks.h - wide derivatives as calls of narrow ones --*- C++ -*-===//
//
// A derivative of many lanes (a jvp or vjp of width above kLanesPerBody) is
// a call of the derivative of kLanesPerBody lanes per chunk of lanes: one
// copy of the body for any width, instead of one copy per lane, whose
// straight-line code LLVM compiles in more than linear time (width 100 took
// 13 s). Each chunk runs the primal again.
//
//===----------------------------------------------------------------------===//
#ifndef SOAC_PASSES_AUTODIFF_ENGINE_LANECHUNKS_H
#define SOAC_PASSES_AUTODIFF_ENGINE_LANECHUNKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace soac::autodiff {

/// The most lanes one copy of a derivative's body has (soac.jacfwd and
/// soac.jacrev ask for chunks of this many by default).
constexpr unsigned kLanesPerBody = 8;

/// Builds the body of `wide`, a derivative of `width` lanes whose inputs are
/// `numArgs` arguments then groups of `width` lanes, and whose results are
/// `numResults` values then groups of `width` lanes, as calls of `narrow`,
/// the same derivative of kLanesPerBody lanes: one call per chunk of lanes,
/// the last one padded with copies of its last lane (their results are
/// dropped). The results come from the first call. The calls are not
/// inlined.
void buildFromLaneChunks(mlir::func::FuncOp wide, mlir::func::FuncOp narrow,
                         unsigned numArgs, unsigned numResults, unsigned width);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_LANECHUNKS_H
