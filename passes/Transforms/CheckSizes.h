//===- CheckSizes.h - checks of the sizes ops assert ------------*- C++ -*-===//
//
// Part of soac-check-indices. Some tensor ops take the sizes of their result
// or of an operand on trust: a tensor.expand_shape's output sizes, a
// tensor.cast to a static size, a tensor.reshape's shape, the source of a
// tensor.insert_slice, the inputs of a tensor.concat. MLIR's verifiers
// compare them where they are static; at run time a wrong one makes the
// lowered code read or write past a buffer. (tensor.collapse_shape needs
// none: its sizes are computed from its source's.)
//
//===----------------------------------------------------------------------===//
#ifndef SOAC_PASSES_TRANSFORMS_CHECKSIZES_H
#define SOAC_PASSES_TRANSFORMS_CHECKSIZES_H

namespace mlir {
class Operation;
} // namespace mlir

namespace soac {

/// Puts a soac.check before `op` for each size it asserts that is neither
/// static on both sides (the verifier compared them) nor equal by
/// construction (SizeProduct); nothing for ops that assert none.
void checkAssertedSizes(mlir::Operation *op);

} // namespace soac

#endif // SOAC_PASSES_TRANSFORMS_CHECKSIZES_H
