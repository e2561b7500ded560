//===- VerifyInput.h - verification that never aborts ----------*- C++ -*-===//
//
// Some of MLIR 22's verifiers assert on input they should report: they build
// affine maps or vectors from an op's attributes before checking them. soac
// parses with verification off (soac-opt, soac.parse) and checks those ops
// first, so that such input is an error at the op, not an abort.
//
//===----------------------------------------------------------------------===//
#ifndef SOAC_PASSES_UTILS_VERIFYINPUT_H
#define SOAC_PASSES_UTILS_VERIFYINPUT_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"

namespace soac {

/// mlir::verify(root), after refusing, with an error at the op, what the
/// upstream verifiers would assert on:
/// - a tensor.collapse_shape or tensor.expand_shape whose reassociation has
///   an index outside the expanded rank (getSymbolLessAffineMaps builds
///   maps of `max index + 1` dimensions, an unsigned that wraps to 0 for an
///   index of 2^32 - 1 modulo 2^32, e.g. -1);
/// - a tensor.from_elements whose operands are not one per element of its
///   result type (the verifier builds a vector of one type per element:
///   2^62 elements abort, 2^31 take 16 GiB).
/// The ops are read through their generic form only: they are not verified.
mlir::LogicalResult verifyInput(mlir::Operation *root);

/// Before parsing `text`: a tensor.from_elements in the custom form whose
/// static result type has more elements than `text` has characters (it
/// cannot list one operand per element) is an error at the op, located in
/// `sourceName`. MLIR's parser of that form makes one type per element
/// before comparing the counts: 2^31 elements take 16 GiB and a minute,
/// 2^62 abort. (The generic form parses; verifyInput refuses it.)
mlir::LogicalResult checkTextBeforeParsing(mlir::MLIRContext *context,
                                           llvm::StringRef text,
                                           llvm::StringRef sourceName);

} // namespace soac

#endif // SOAC_PASSES_UTILS_VERIFYINPUT_H
