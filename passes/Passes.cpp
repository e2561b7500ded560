//===- Passes.cpp - registering soac's passes and models ------------------===//
#include "passes/Passes.h"

#include "passes/AutoDiff/Passes.h"
#include "passes/Conversion/Passes.h"
#include "passes/Conversion/SoacToGPU/MemoryEffects.h"
#include "passes/Pipelines.h"
#include "passes/Transforms/Passes.h"

void soac::registerSoacExtensions(mlir::DialectRegistry &registry) {
  autodiff::registerDerivativeRules(registry);
  registerGpuMemoryEffects(registry);
}

void soac::registerSoacPasses() {
  // Each pass of the three Passes.td, then the named pipelines.
  registerSoacTransformsPasses();
  registerSoacConversionPasses();
  registerSoacAutoDiffPasses();
  registerSoacPipelines();
}
