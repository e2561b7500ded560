//===- MemoryEffects.h - memory effects of launches, barriers ---*- C++ -*-===//
//
// soac-lower-to-nvvm runs the buffer deallocation pipeline after kernel
// outlining; it needs to know what gpu.launch_func and gpu.barrier do to
// memory, which MLIR 22 does not declare. Kernels emulated on the CPU
// (soac-emulate-gpu-launches) leave omp.barrier and llvm.cmpxchg in host
// code before deallocation: they need theirs too.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_MEMORYEFFECTS_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_MEMORYEFFECTS_H

#include "mlir/IR/DialectRegistry.h"

namespace soac {

/// Attaches memory effects to gpu.launch_func (reads and writes the buffers
/// it is given), gpu.barrier and omp.barrier (order the threads' reads and
/// writes) and llvm.cmpxchg (reads and writes what it points to).
void registerGpuMemoryEffects(mlir::DialectRegistry &registry);

} // namespace soac

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_MEMORYEFFECTS_H
