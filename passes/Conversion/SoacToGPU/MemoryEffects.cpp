//===- MemoryEffects.cpp - memory effects of GPU launches and barriers ----===//
//
// The memory effects of gpu.launch_func and gpu.barrier, which the buffer
// deallocation pipeline needs to see through kernel launches and kernels
// (MLIR 22 declares none: a launch reads and writes the buffers it is given,
// a barrier orders the block's reads and writes; neither allocates or
// frees). omp.barrier gets the barrier's: soac-emulate-gpu-launches turns
// gpu.barrier into it before buffer deallocation runs.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/MemoryEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {

struct LaunchFuncEffects
    : MemoryEffectOpInterface::ExternalModel<LaunchFuncEffects,
                                             gpu::LaunchFuncOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
    }
  }
};

template <typename BarrierOp>
struct BarrierEffects
    : MemoryEffectOpInterface::ExternalModel<BarrierEffects<BarrierOp>,
                                             BarrierOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    effects.emplace_back(MemoryEffects::Read::get());
    effects.emplace_back(MemoryEffects::Write::get());
  }
};

} // namespace

void soac::registerGpuMemoryEffects(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, gpu::GPUDialect *) {
    gpu::LaunchFuncOp::attachInterface<LaunchFuncEffects>(*context);
    gpu::BarrierOp::attachInterface<BarrierEffects<gpu::BarrierOp>>(*context);
  });
  registry.addExtension(+[](MLIRContext *context, omp::OpenMPDialect *) {
    omp::BarrierOp::attachInterface<BarrierEffects<omp::BarrierOp>>(*context);
  });
}
