//===- Pipelines.cpp - named soac pipelines and pass registration ---------===//
//
// soac-lower-to-cpu: soac on tensors -> LLVM dialect (+ OpenMP), the pipeline
// soac.compile runs; `soac-opt --soac-lower-to-cpu` reproduces it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<int64_t> numChunks{
      *this, "num-chunks",
      llvm::cl::desc("Parallel chunks of a top-level reduce or scan"),
      llvm::cl::init(64)};
  PassOptions::Option<bool> openmp{
      *this, "openmp",
      llvm::cl::desc("Run parallel loops on all cores through OpenMP (needs "
                     "an OpenMP runtime such as libiomp5 at run time); "
                     "false gives sequential code"),
      llvm::cl::init(true)};
};

void buildLowerToCpuPipeline(OpPassManager &pm,
                             const CpuPipelineOptions &options) {
  // Derivatives first: they produce SOACs the rest of the pipeline lowers.
  // Inlining the generated functions lets DCE drop the primal results a
  // caller does not use, and fusion cross the call boundaries.
  pm.addPass(soac::createSoacAutodiff());
  pm.addPass(createInlinerPass());
  pm.addPass(soac::createSoacSimplify());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // soac -> loops on tensors.
  soac::ConvertSoacToLoopsOptions loops;
  loops.numChunks = options.numChunks;
  pm.addPass(soac::createConvertSoacToLoops(loops));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(soac::createSoacMarkEntryPoints());

  // A row computed into a new tensor and then inserted into its result is
  // computed in the result's slice instead (no allocation, no copy per row).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // Tensors -> buffers; function results become buffers the caller owns.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Loops whose carried tensor is rebuilt each iteration (a reduce over rows,
  // an scf.for around a map) yield new buffers; the deallocation pipeline
  // frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Values whose layout bufferization cannot infer (the results of the
  // scf.if choosing between a parallel and a sequential loop) get identity
  // layouts too, so that returning them copies nothing.
  bufferize.unknownTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A row computed in place is then "copied" onto itself (the same subview
  // built twice): CSE makes the two one, canonicalization drops the copy.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  // The clones deallocation inserts become allocations and copies.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Parallel loops, then threads.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createCanonicalizerPass());
  if (options.openmp)
    pm.addPass(createConvertSCFToOpenMPPass());

  // Everything -> LLVM dialect. Math functions LLVM has no intrinsic for
  // (erf, atan, ...) become libm calls; integer powers become functions.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // expand-strided-metadata emits affine.apply: lower-affine comes after it.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(soac::createConvertI1MemRefToLLVM());
  // Allocations call _mlir_memref_to_llvm_alloc/free, which soac's runtime
  // library (runtime/soac_runtime.c) implements on malloc with huge pages.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

} // namespace

void soac::registerSoacPasses() {
  registerSoacGeneratedPasses(); // each pass of Passes.td
  PassPipelineRegistration<CpuPipelineOptions>(
      "soac-lower-to-cpu",
      "Lower soac programs on tensors to the LLVM dialect for the CPU: "
      "soac-autodiff, convert-soac-to-loops, one-shot bufferization with "
      "deallocation, "
      "parallel loops on OpenMP threads, then LLVM",
      buildLowerToCpuPipeline);
}
