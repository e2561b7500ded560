//===- MemoryEffects.cpp - memory effects of GPU launches and barriers ----===//
//
// The memory effects of gpu.launch_func and gpu.barrier, which the buffer
// deallocation pipeline needs to see through kernel launches and kernels
// (MLIR 22 declares none: a launch reads and writes the buffers it is given,
// a barrier orders the block's reads and writes; neither allocates or
// frees). omp.barrier gets the barrier's: soac-emulate-gpu-launches turns
// gpu.barrier into it before buffer deallocation runs; llvm.cmpxchg (the
// compare-and-swap loop of a histogram's operator, MLIR 22 declares no
// effects for it either) reads and writes the memory it points to, which
// an emulated kernel leaves in host code.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/MemoryEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

struct CompareExchangeEffects
    : MemoryEffectOpInterface::ExternalModel<CompareExchangeEffects,
                                             LLVM::AtomicCmpXchgOp> {
  void getEffects(Operation *op,
                  SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                      &effects) const {
    OpOperand &pointer = op->getOpOperand(0);
    effects.emplace_back(MemoryEffects::Read::get(), &pointer);
    effects.emplace_back(MemoryEffects::Write::get(), &pointer);
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
  registry.addExtension(+[](MLIRContext *context, LLVM::LLVMDialect *) {
    LLVM::AtomicCmpXchgOp::attachInterface<CompareExchangeEffects>(*context);
  });
}
