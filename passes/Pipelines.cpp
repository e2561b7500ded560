//===- Pipelines.cpp - named soac pipelines -------------------------------===//
//
// soac-lower-to-cpu: soac on tensors -> LLVM dialect (+ OpenMP);
// soac-lower-to-nvvm: soac on tensors -> GPU kernels in NVVM, embedded in a
// host module in the LLVM dialect. soac.compile runs them; soac-opt
// reproduces each.
//
//===----------------------------------------------------------------------===//

#include "passes/Pipelines.h"

#include "passes/AutoDiff/Passes.h"
#include "passes/Conversion/Passes.h"
#include "passes/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"

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
  PassOptions::Option<bool> checkIndices{
      *this, "check-indices",
      llvm::cl::desc("Check every tensor access at an index not known to be "
                     "in range, and every size an op takes on trust "
                     "(soac-check-indices); false for code that has proven "
                     "its indices and sizes"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorMath{
      *this, "vector-math",
      llvm::cl::desc("Compute exp, log and tanh of f64 and f32 with soac's "
                     "own f64 arithmetic, which vectorizes (f64 within 2 ulp "
                     "of libm, 4 for tanh; soac-expand-f64-math); false "
                     "calls libm"),
      llvm::cl::init(true)};
};

/// soac.vjp / soac.jvp expanded, then the generated functions inlined (so
/// that DCE drops the primal results a caller does not use, and fusion
/// crosses the call boundaries) and the re-executed code nobody reads
/// removed.
void addDerivativeExpansion(OpPassManager &pm) {
  // First: what MLIR's own passes would abort on becomes an error.
  pm.addPass(soac::createSoacVerifyLowerable());
  pm.addPass(soac::createSoacAutodiff());
  pm.addPass(createInlinerPass());
  pm.addPass(soac::createSoacSimplify());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // CSE makes rows a map yields several times the same value: one result
  // then serves every reader (one tensor, not one per adjoint reading it).
  pm.addPass(createCanonicalizerPass());
}

/// Run-time checks of the indices of every tensor access, gradients'
/// included, before the SOACs are lowered (they carry the checks along).
void addIndexChecks(OpPassManager &pm, bool enabled) {
  soac::SoacCheckIndicesOptions options;
  options.assumeInBounds = !enabled;
  pm.addPass(soac::createSoacCheckIndices(options));
  // Each op's accesses are checked apart: one size computed once, so that
  // the checks of one offset against it are seen to be one (an
  // extract_slice and the insert_slice that puts it back: sliceReplaced).
  pm.addPass(createCSEPass());
}

/// The alignment of the buffers bufferization allocates: malloc's, which
/// the runtimes' aligned allocation gets from malloc itself. A larger one
/// (bufferization's default is 64) goes through glibc's memalign, which
/// took 48 ns per allocation and free instead of 12, and BA's gradient on
/// two threads ran 3-5x slower with it. Vector loads need no alignment on
/// x86-64; the GPU runtime's allocations are aligned to 256 bytes anyway.
constexpr unsigned kBufferAlignment = 16;

/// Tensors -> buffers for functions whose SOACs are lowered; function
/// results become buffers the caller owns (see addDeallocation for the
/// others).
void addBufferization(OpPassManager &pm) {
  // Sizes read from where they are set, not through the loops and branches
  // the SOACs became: the value-bounds queries of the in-place analysis
  // below otherwise go back through all of them, in each query.
  pm.addPass(soac::createSoacResolveDims());
  pm.addPass(createCanonicalizerPass());
  // A row computed into a new tensor and then inserted into its result is
  // computed in the result's slice instead (no allocation, no copy per row).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
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
  bufferize.bufferAlignment = kBufferAlignment;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A row computed in place is then "copied" onto itself (the same subview
  // built twice, once sizes are folded): CSE makes the two one,
  // canonicalization drops the copy.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Temporaries of a row (computed per row of a sequential loop, with sizes
  // fixed before it) are allocated once before the loop, not once per row.
  // They are first hoisted out of the scf.ifs around them inside the loop
  // (soac-hoist-branch-buffers: the sequential half of the scf.if choosing
  // between a parallel and a sequential loop, a histogram's bin in range),
  // then out of the loop. Allocations are not moved out of parallel loops (each
  // thread needs its own) nor out of loops that yield them.
  // Sizes computed in a loop from values that do not change in it are
  // computed before it first, so that the allocations they size can follow
  // (HAND's gradient: 10 of its 95 allocations in loops, 6 % of its time).
  pm.addNestedPass<func::FuncOp>(createLoopInvariantCodeMotionPass());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
  // Hoisted out of an inner loop, a temporary may land in a branch inside
  // an outer one: out of the branch, then out of the outer loop.
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferLoopHoistingPass());
  pm.addNestedPass<func::FuncOp>(soac::createSoacHoistBranchBuffers());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferLoopHoistingPass());
}

/// Frees every buffer that is not a function result.
void addDeallocation(OpPassManager &pm) {
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  // The clones deallocation inserts become allocations and copies.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Host code on buffers -> LLVM dialect. Math functions LLVM has no
/// intrinsic for (erf, atan, ...) become libm calls; integer powers become
/// functions. `finalConversion` converts what is left (convert-to-llvm on
/// the CPU, gpu-to-llvm with kernel launches).
void addHostToLLVM(OpPassManager &pm, std::unique_ptr<Pass> finalConversion) {
  // Before anything calls the C library by name (math, allocations).
  pm.addPass(soac::createSoacRenameReservedSymbols());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // expand-strided-metadata emits affine.apply: lower-affine comes after it.
  pm.addPass(soac::createSoacExpandShapeToReinterpretCast());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(soac::createConvertI1MemRefToLLVM());
  // Allocations call _mlir_memref_to_llvm_aligned_alloc/free, which soac's
  // runtime libraries implement (runtime/): malloc with huge pages on the
  // CPU, device memory for GPU code. The aligned allocation returns the
  // pointer the code uses; with the plain one, the code aligned it through
  // integers, and LLVM lost track of which buffer a pointer points into.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(soac::createSoacMarkAllocationFunctions());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(std::move(finalConversion));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(soac::createSoacRestoreInterfaceNames());
  pm.addPass(soac::createSoacInlineIntoInterfaces());
}

void buildLowerToCpuPipeline(OpPassManager &pm,
                             const CpuPipelineOptions &options) {
  addDerivativeExpansion(pm);
  addIndexChecks(pm, options.checkIndices);

  // soac -> loops on tensors.
  soac::ConvertSoacToLoopsOptions loops;
  loops.numChunks = options.numChunks;
  loops.openmp = options.openmp;
  pm.addPass(soac::createConvertSoacToLoops(loops));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(soac::createSoacMarkEntryPoints());
  addBufferization(pm);
  addDeallocation(pm);
  // Matrix products call the runtime's tuned kernel (after deallocation,
  // which must see the buffers the products read).
  pm.addPass(soac::createSoacContractionsToCalls());
  pm.addPass(soac::createSoacCopiesToLoops());
  // Parallel loops, then threads.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createForallToParallelLoopPass());
  pm.addPass(createCanonicalizerPass());
  if (options.openmp) {
    // Temporaries that bufferization left in parallel loops, per iteration.
    pm.addPass(soac::createSoacStackTemporaries());
    pm.addPass(soac::createSoacParallelLoopsByWork());
    pm.addPass(createConvertSCFToOpenMPPass());
  }
  // After the conversion to OpenMP, which decides what runs in parallel.
  pm.addPass(soac::createSoacLowerChecks());
  // exp, log and tanh as f64 arithmetic, so that loops calling them
  // vectorize (libm's calls do not).
  if (options.vectorMath)
    pm.addPass(soac::createSoacExpandF64Math());

  addHostToLLVM(pm, createConvertToLLVMPass());
}

struct NvvmPipelineOptions : public PassPipelineOptions<NvvmPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture of the kernels"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels are embedded as: isa (PTX, compiled "
                     "by the CUDA driver when loaded), bin (cubin, needs "
                     "ptxas), fatbin"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the NVVM compilation"),
      llvm::cl::init(3)};
  PassOptions::Option<bool> checkIndices{
      *this, "check-indices",
      llvm::cl::desc("Check every tensor access at an index not known to be "
                     "in range, and every size an op takes on trust "
                     "(soac-check-indices); false for code that has proven "
                     "its indices and sizes"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> deviceMemory{
      *this, "device-memory",
      llvm::cl::desc("Host code reads and writes buffers by copies through "
                     "the runtime (soac-host-buffer-copies), so that they may "
                     "be device memory (soac_gpu_set_memory)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> flatten{
      *this, "flatten",
      llvm::cl::desc("Flatten nested parallelism first (soac-flatten): a "
                     "map's nested SOACs become maps of their own over the "
                     "merged rows, so that kernels get the parallelism of "
                     "the whole nest rather than one thread per outer row"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("float64 matrix products on the tensor cores (mma.sync) "
                     "where the chip has them (sm_80 and later)"),
      llvm::cl::init(true)};
};

/// Whether `chip` ("sm_90", "sm_90a", ...) has mma.sync on float64: compute
/// capability 8.0 and later (at full float64 speed on the data-center chips,
/// 8.0 and 9.0; the others have the instruction).
bool hasFloat64TensorCores(StringRef chip) {
  unsigned capability = 0;
  if (!chip.consume_front("sm_"))
    return false;
  chip = chip.take_while(llvm::isDigit);
  return !chip.getAsInteger(10, capability) && capability >= 80;
}

void buildLowerToNvvmPipeline(OpPassManager &pm,
                              const NvvmPipelineOptions &options) {
  addDerivativeExpansion(pm);
  // Products inside SOAC bodies as SOACs (the kernels that run those bodies
  // have no contraction of their own), before their reads are checked;
  // the others get a tiled kernel.
  soac::SoacExpandContractionsOptions contractions;
  contractions.nestedOnly = true;
  pm.addPass(soac::createSoacExpandContractions(contractions));
  if (options.flatten)
    pm.addPass(soac::createSoacFlatten());
  // A cheap map only gathered from is computed in its readers' kernels.
  pm.addPass(soac::createSoacFuseGathers());
  addIndexChecks(pm, options.checkIndices);
  // A cheap map several SOACs read is computed in each reader's kernel
  // (after the CSE of the index checks, which would merge the copies).
  pm.addPass(soac::createSoacCopyCheapMaps());

  // soac -> kernels on buffers inside functions on tensors; a failed check
  // in a kernel is recorded, and stops the call after its launch.
  soac::ConvertSoacToGPUOptions kernelOptions;
  kernelOptions.tensorCores =
      options.tensorCores && hasFloat64TensorCores(options.chip);
  pm.addPass(soac::createConvertSoacToGPU(kernelOptions));
  pm.addPass(soac::createSoacLowerKernelChecks());
  // Scalars kernels wrote and only later kernels read stay on the GPU.
  pm.addNestedPass<func::FuncOp>(soac::createSoacSinkScalarReads());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(soac::createSoacMarkEntryPoints());
  addBufferization(pm);

  // Kernels -> gpu.module of NVVM. Constants and index computations used
  // by a kernel are recomputed in it rather than passed as arguments.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // After outlining: deallocation cannot see through gpu.launch regions.
  addDeallocation(pm);
  if (options.deviceMemory)
    pm.addPass(soac::createSoacHostBufferCopies());
  // Host checks stop the call (the GPU runtime's checked calls), as on the
  // CPU; the kernel checks soac-lower-kernel-checks could not guard trap.
  // After the copies: host-only scratch is on the stack by then, and the
  // allocation checks' reads of a buffer's address would otherwise keep it
  // in device memory.
  pm.addPass(soac::createSoacLowerChecks());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(soac::createConvertI1MemRefToLLVM());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // Host -> LLVM, launches -> calls of the runtime, kernels -> binaries.
  addHostToLLVM(pm, createGpuToLLVMConversionPass());
  // Launches in loops would otherwise grow the stack on every iteration.
  pm.addPass(soac::createSoacScopeLaunchStack());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

} // namespace

void soac::registerSoacPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "soac-lower-to-cpu",
      "Lower soac programs on tensors to the LLVM dialect for the CPU: "
      "soac-autodiff, convert-soac-to-loops, one-shot bufferization with "
      "deallocation, "
      "parallel loops on OpenMP threads, then LLVM",
      buildLowerToCpuPipeline);
  PassPipelineRegistration<NvvmPipelineOptions>(
      "soac-lower-to-nvvm",
      "Lower soac programs on tensors for NVIDIA GPUs: soac-autodiff, "
      "convert-soac-to-gpu, one-shot bufferization with deallocation, kernels "
      "outlined and lowered to NVVM and embedded as PTX or cubin, host code "
      "and kernel launches to the LLVM dialect",
      buildLowerToNvvmPipeline);
}
