//===- Pipelines.h - named soac pipelines -----------------------*- C++ -*-===//
//
// soac-lower-to-cpu: soac on tensors -> LLVM dialect (+ OpenMP);
// soac-lower-to-nvvm: soac on tensors -> GPU kernels in NVVM, embedded in a
// host module in the LLVM dialect (Pipelines.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_PIPELINES_H
#define SOAC_PASSES_PIPELINES_H

namespace soac {

/// Registers soac-lower-to-cpu and soac-lower-to-nvvm.
void registerSoacPipelines();

} // namespace soac

#endif // SOAC_PASSES_PIPELINES_H
