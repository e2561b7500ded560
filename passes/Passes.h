//===- Passes.h - registering soac's passes and models ----------*- C++ -*-===//
//
// The entry points soac-opt and the Python extension call. The passes
// themselves are declared per group: Transforms/Passes.h,
// Conversion/Passes.h, AutoDiff/Passes.h; the pipelines in Pipelines.h.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_PASSES_H
#define SOAC_PASSES_PASSES_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace soac {

/// Registers the external models the passes rely on: the derivative rules of
/// upstream ops, memory effects of gpu.launch_func and gpu.barrier.
void registerSoacExtensions(mlir::DialectRegistry &registry);

/// Registers the soac passes and the named pipelines (soac-lower-to-cpu,
/// soac-lower-to-nvvm).
void registerSoacPasses();

} // namespace soac

#endif // SOAC_PASSES_PASSES_H
