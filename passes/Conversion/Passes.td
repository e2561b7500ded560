//===- Passes.td - soac conversions ------------------------*- tablegen -*-===//
//
// soac ops to loops (convert-soac-to-loops) or GPU kernels
// (convert-soac-to-gpu), and the passes the pipelines run on the way to the
// LLVM dialect. One file, or one folder, per pass, named after it.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_PASSES_TD
#define SOAC_PASSES_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertSoacToLoops : Pass<"convert-soac-to-loops", "mlir::ModuleOp"> {
  let summary = "Lower soac ops on tensors to linalg.generic, scf loops and tensor ops";
  let description = [{
    Replaces every soac op by loops on tensors that one-shot bufferization
    turns into loops on buffers:

    - `soac.map` with scalar rows and `soac.iota` become a parallel
      `linalg.generic` over the outer dimension whose body reads the rows
      with `tensor.extract` / `tensor.extract_slice` at `linalg.index 0`; a map
      yielding tensor rows becomes an `scf.forall` writing each row with
      `tensor.parallel_insert_slice`.
    - `soac.reduce` with scalar operands splits the input into `num-chunks`
      contiguous chunks folded in parallel (a `linalg.generic` over chunks
      around an `scf.for`), then folds the chunk results in order. With
      tensor accumulators, every chunk starts from a copy of the neutral
      elements, so there are at most as many chunks as threads.
    - Each parallel form is chosen at run time, when there is enough work
      (16384 elements) and more than one thread (`omp_get_max_threads`, which
      the pass declares); otherwise a sequential loop runs. With
      `openmp=false`, only sequential loops are emitted.
    - `tensor.splat` in a loop becomes a fill of one tensor, chosen the
      same way (`linalg.fill` or a sequential loop); per row of a SOAC, a
      sequential loop. Other splats are left to bufferization.
    - `soac.scan` with scalar operands: chunk totals in parallel, an exclusive
      scan of the totals, then each chunk rescanned from its offset in
      parallel (an `scf.forall`).
    - `soac.scatter` and `soac.reduce_by_index` are sequential `scf.for` loops
      with bounds checks (out-of-range indices are skipped).
    - A SOAC nested in another SOAC's body is lowered to sequential loops: the
      outer op already provides the parallelism.
    - Operands whose outer sizes may differ at run time are compared with
      `cf.assert`: a mismatch stops the program with a message naming the op.

    Fusion: a `soac.map` whose results are only read, row by row, by one
    SOAC in the same block is not materialized; its body is recomputed where
    the consumer reads a row. So `reduce (+) (map f xs)` is one pass over
    `xs`, and chains of maps become one loop. The patterns of
    `soac-fuse-maps` run first, so that a map read by several maps (or
    reduces) fuses into their merged op instead of being materialized. A map
    that becomes a sequential loop (per row of an enclosing SOAC) also folds
    a `soac.reduce` that alone reads some of its results (a redomap with map
    outputs): those rows are not stored.

    SOACs are lowered from the outside in: a nested SOAC is lowered once its
    enclosing SOAC's body has been cloned into loops, where it may update a
    loop-carried tensor in place. A map computes a result in the tensor of
    a loop-carried input of the same shape that only it reads: the operator `map (+) acc row` of a reduce over tensor
    rows adds into the accumulator instead of allocating a new one per row.

    ```mlir
    // before
    %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 { ... }
    // after (sketch)
    %partials = linalg.generic ... outs(%empty : tensor<64xf32>) {
      %c = linalg.index 0 : index
      %acc = scf.for %i = %lo to %hi step %c1 iter_args(%a = %zero) -> (f32) { ... }
      linalg.yield %acc : f32
    } -> tensor<64xf32>
    %s = scf.for %c = %c0 to %c64 step %c1 iter_args(%a = %zero) -> (f32) { ... }
    ```
  }];
  let options = [
    Option<"numChunks", "num-chunks", "int64_t", /*default=*/"64",
           "Number of chunks a top-level reduce or scan is split into for parallel execution (a reduce with tensor accumulators: at most one per thread)">,
    Option<"openmp", "openmp", "bool", /*default=*/"true",
           "Parallel loops run on OpenMP threads: each is chosen at run time only when omp_get_max_threads() is above 1. false: sequential loops only, for code that runs without an OpenMP runtime">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
    "mlir::func::FuncDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
  ];
}

def ConvertSoacToGPU : Pass<"convert-soac-to-gpu", "mlir::ModuleOp"> {
  let summary = "Lower soac ops on tensors to GPU kernels (gpu.launch on buffers)";
  let description = [{
    Every SOAC that is not nested in another SOAC becomes one or more
    `gpu.launch` kernels of 256 threads per block. The function around them
    stays on tensors: a kernel reads the tensors it needs through
    `bufferization.to_buffer` and writes new buffers that
    `bufferization.to_tensor` hands back, so one-shot bufferization lowers
    the rest as usual.

    - `soac.map` and `soac.iota`: one thread per row.
    - `soac.reduce`: up to 1024 blocks each fold a share of the rows
      (interleaved, so that a warp reads contiguous memory, when the operator
      is one commutative op; otherwise contiguous ranges, which keeps any
      associative operator correct), combine their threads' values by warp
      shuffles and workgroup memory, and one block combines the blocks'
      results.
    - `soac.scan`: each thread folds a contiguous range of rows (kept) and
      each block totals them, one block scans the block totals, then each
      thread rescans its rows from its offset.
    - `soac.scatter`: a copy of `dest`, then one thread per index and row
      element (out-of-range indices skipped).
    - `soac.reduce_by_index`: a copy of `dest`, then one atomic per value:
      `atomicrmw` when the operator is one op the hardware has (addf, addi,
      min/max of integers, and, or), else a compare-and-swap loop around the
      operator (32- and 64-bit values).
    - A map whose rows only one SOAC reads is recomputed in that SOAC's
      kernel: `reduce (+) (map f xs)` is one pass over `xs`.

    - A map over rows, or whose body holds SOACs, runs one block per row;
      a map nested deeper runs one thread per row (blocks of 64), which runs
      the body sequentially with the tensors it computes recomputed where
      read, except costly maps of scalars that only SOACs read, and
      histograms, computed once into per-thread scratch memory. A result
      that only a reduce (+) of it alone reads is summed per warp by
      shuffles and written as a row per warp, which the reduce folds.
    - `soac.matmul` (outside SOAC bodies): one block per 64 x 64 tile of the
      result, slices of both operands staged in workgroup memory, 4 x 4
      results per thread, or, for float64 with `tensor-cores`, each warp's
      16 x 32 part of the tile as `nvvm.mma.sync` m8n8k4 products. With
      fewer than 128 tiles the slices of k are split among blocks of the
      same tile, and a second kernel sums their results in split order. A
      dynamic inner size is checked on the host.
    - A reduce or reduce_by_index of vector rows combined elementwise is a
      fold per element (a column reduce, one atomic per element).

    - A reduce_by_index of several destinations whose operator combines
      each by itself is one per destination; one whose operator mixes them
      (an argmin) updates all destinations of a bin under a lock per bin.

    What the kernels cannot run (scans nested deeper than one block, shapes
    that depend on data) is an error at its location.

    ```mlir
    // before
    %y = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... }
    // after (sketch)
    %xb = bufferization.to_buffer %x read_only : ...
    %yb = memref.alloc(%n) : memref<?xf32>
    gpu.launch blocks(%b, %1, %2) in (%gx = %blocks, ...) threads(%t, ...) in (%bx = %c256, ...) {
      ... %v = memref.load %xb[%i] ... memref.store %r, %yb[%i] ...
    }
    %y = bufferization.to_tensor %yb restrict writable : memref<?xf32> to tensor<?xf32>
    ```
  }];
  let options = [
    Option<"foldBlocks", "fold-blocks", "int64_t", /*default=*/"1024",
           "The most blocks of the kernels that fold rows (reduce, scan): "
           "each block folds a contiguous range of rows a tile of 256 at a "
           "time (tests set few, so that small inputs span several tiles)">,
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"false",
           "float64 products (soac.matmul) on the tensor cores: mma.sync "
           "m8n8k4, which needs sm_80 or later">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::gpu::GPUDialect", "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect", "mlir::NVVM::NVVMDialect",
    "mlir::scf::SCFDialect", "mlir::tensor::TensorDialect",
  ];
}

def SoacContractionsToCalls
    : Pass<"soac-contractions-to-calls", "mlir::ModuleOp"> {
  let summary = "Call the runtime's tuned matrix product for f32/f64 linalg.matmul on buffers";
  let description = [{
    `soac.matmul` lowers to a `linalg.matmul` (convert-soac-to-loops), whose
    indexing maps say which operand is read transposed. After bufferization
    and deallocation this pass replaces each one on `f32`/`f64` buffers with
    a call of `soac_matmul_f32`/`soac_matmul_f64` (runtime/soac_matmul.c),
    which passes the product to the BLAS registered at load time (numpy's
    OpenBLAS) or runs its own loops. Each operand goes as its aligned
    pointer, offset and two strides, so slices and transposed views need no
    copy. A zero `linalg.fill` of the result right before the product
    becomes the call's "overwrite" flag. Other element types are left to
    the loops `convert-linalg-to-parallel-loops` makes.

    ```mlir
    // before
    linalg.fill ins(%zero : f64) outs(%c : memref<?x?xf64>)
    linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>)
                  outs(%c : memref<?x?xf64>)
    // after
    func.call @soac_matmul_f64(%tl, %tr, %m, %n, %k, %pa, %oa, %sa0, %sa1,
        %pb, ..., %pc, %oc, %sc0, %sc1, %overwrite) : (index, ...) -> ()
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::memref::MemRefDialect",
  ];
}

def SoacResolveDims : Pass<"soac-resolve-dims"> {
  let summary = "Read tensor sizes from where they are set, not through loops and branches";
  let description = [{
    The lowered SOACs read the sizes of tensors that loops, parallel loops
    and the `scf.if` choosing between them produce. One-Shot Bufferize's
    in-place analysis proves that a row read and the row written back are
    the same slice with the value-bounds analysis, which goes back through
    every such loop and branch (a comparison of both branches, of each
    loop's yielded size with its carried one) in every query: the
    bufferization of HAND's gradient took most of its compile time there.
    This pass replaces each `tensor.dim` whose tensor comes out of
    `scf.for`, `scf.forall` or `scf.if` (or from ops that keep their
    destination's size: insert_slice, insert, destination-style ops) by the
    size it is set from: a `tensor.empty` size, or the size of the tensor
    the loop started from, when every path keeps it (a loop whose size
    changes, or branches that yield different sizes, are left alone).

    ```mlir
    // before
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?xf64>) {
      %u = tensor.insert %v into %t[%i] : tensor<?xf64>
      scf.yield %u : tensor<?xf64>
    }
    %d = tensor.dim %r, %c0 : tensor<?xf64>
    // after
    %d = tensor.dim %init, %c0 : tensor<?xf64>
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def SoacCopiesToLoops : Pass<"soac-copies-to-loops"> {
  let summary = "Turn copies that would call memrefCopy, and 1-D ones, into loops";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` to a memcpy only when
    both buffers have the identity layout; any other copy (a row of a 2-D
    buffer, a subview at a dynamic offset) becomes a call of the generic
    `memrefCopy`, which walks the strides element by element. The
    checkpoints of a gradient's loops copy one short row per iteration that
    way. This pass rewrites every copy between 1-D buffers, and every copy
    of higher rank that memrefCopy would make, into a nest of `scf.for` of
    loads and stores, which LLVM inlines and vectorizes; copies between
    buffers of the identity layout (one memcpy) and of scalars are left
    alone. memrefCopy's call also took the buffers' descriptors through
    memory, which made LLVM count the buffers as captured: a thread's
    accumulator, copied out at the end of each chunk of a parallel loop,
    could then alias any pointer the next chunk loaded, and its unrolled
    accumulation stayed scalar. The CPU pipeline runs it after
    deallocation.

    ```mlir
    // before
    memref.copy %row, %slot : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
    // after
    %n = memref.dim %row, %c0 : memref<?xf64>
    scf.for %i = %c0 to %n step %c1 {
      %v = memref.load %row[%i] : memref<?xf64>
      memref.store %v, %slot[%i] : memref<?xf64, strided<[1], offset: ?>>
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
  ];
}

def SoacParallelLoopsByWork
    : Pass<"soac-parallel-loops-by-work", "mlir::ModuleOp"> {
  let summary = "Run the parallel loops bufferization made in parallel only when they pay";
  let description = [{
    convert-soac-to-loops chooses between a parallel and a sequential form
    of each SOAC at run time, by its work and the thread count. The
    parallel loops made later, from the `linalg.fill` of a tensor filled
    once or an iota, had no such choice: each started an OpenMP region
    however few its iterations (seven per call of HAND's gradient, on
    buffers of 22 to 544 rows). An `scf.parallel` directly in a function's
    body, without reductions and whose body has no regions, becomes a nest
    of `scf.for` when its iteration count is a constant below 2^14
    (kMinParallelWork), and an `scf.if` choosing between it and that nest
    at run time (enough iterations and more than one thread) when the count
    is dynamic. The CPU pipeline runs it with OpenMP, before the conversion
    to OpenMP.

    ```mlir
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %zero, %buffer[%i] : memref<?xf64>
      scf.reduce
    }
    // becomes
    %enough = arith.andi %work_reaches_2^14, %more_than_one_thread : i1
    scf.if %enough {
      scf.parallel (%i) = (%c0) to (%n) step (%c1) { ... }
    } else {
      scf.for %i = %c0 to %n step %c1 {
        memref.store %zero, %buffer[%i] : memref<?xf64>
      }
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::scf::SCFDialect",
  ];
}

def SoacStackTemporaries : Pass<"soac-stack-temporaries"> {
  let summary = "Put the small temporaries of a parallel loop's iterations on the stack";
  let description = [{
    Buffer hoisting cannot move a temporary out of a parallel loop (each
    thread needs its own), so a buffer that each iteration allocates and
    frees costs a malloc, a free and, in a checked call, two updates of the
    call's record of live buffers, per iteration: BA's gradient on two
    threads ran slower than on one. A `memref.alloc` of static shape and at
    most 4 KiB (64 KiB in all per loop body), directly in the body of an
    `scf.parallel` and freed by one `memref.dealloc` in that body, becomes a
    `memref.alloca`, and the body goes into a `memref.alloca_scope`, so that
    every iteration gives its stack back. Loops with reductions are left
    alone. The CPU pipeline runs it with OpenMP, after deallocation, once
    every parallel loop is an `scf.parallel`, and before the conversion to
    OpenMP (which keeps the scope inside each iteration).

    ```mlir
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %t = memref.alloc() : memref<11xf64>
      ...
      memref.dealloc %t : memref<11xf64>
      scf.reduce
    }
    // becomes
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.alloca_scope {
        %t = memref.alloca() : memref<11xf64>
        ...
      }
      scf.reduce
    }
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def SoacLowerKernelChecks : Pass<"soac-lower-kernel-checks", "mlir::ModuleOp"> {
  let summary = "Checks inside GPU kernels record the first failure and skip what they guard; the runtime stops the call once the kernel is done";
  let description = [{
    A GPU kernel cannot stop the call that launched it, and a trap (a failed
    `cf.assert` in a kernel) leaves the CUDA context unusable for the rest
    of the process. So each `soac.check_index`, `soac.check` and `cf.assert`
    inside a `gpu.launch` becomes, in the kernel:

    - on failure, a compare-and-swap that records the first failed check
      (its kind, the address of its message, a host string made before the
      launch, then its two values: an index and its size, or the sizes a
      `soac.check` shows) in the failure record the runtime gives the
      calling thread (`soac_failure_record()`: managed memory on the GPU,
      so that the runtime reads it without a copy);
    - the rest of the check's block under `scf.if %ok`, so that nothing out
      of bounds runs (up to the first op that synchronizes the block's
      threads: a barrier or a shuffle that some threads skipped would hang
      the others).

    After the launch, host code calls `soac_check_kernel_failures()`. The
    runtime reports a recorded failure through `soac_report_error` (the
    message starts with the check's source location), which stops the call
    made through `soac_call_checked` as a failed host check does: at once
    on the CPU's emulation and in managed memory, and in device memory at
    its next wait for the stream (a host read of a buffer, or the call's
    end), so that the launch stays in flight. A check whose
    guarded ops yield a buffer, or whose index is used past a barrier,
    stays for `soac-lower-checks` (a trap).

    Runs on kernels before outlining, so that the emulation of launches on
    the CPU (`soac-emulate-gpu-launches`) runs the same checks.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::LLVM::LLVMDialect",
    "mlir::scf::SCFDialect",
  ];
}

def SoacLowerChecks : Pass<"soac-lower-checks", "mlir::ModuleOp"> {
  let summary = "Lower run-time checks to calls of soac's runtime, which stop the call instead of the process";
  let description = [{
    Turns the run-time checks of host code into calls of soac's runtime
    when they fail, instead of aborting (`convert-cf-to-llvm` lowers a
    failed `cf.assert` to an abort, which takes a Python interpreter down
    with it):

    - `cf.assert` (the outer sizes of a SOAC's operands);
    - `soac.check_index` (an index against a size; the message gives both);
    - every `memref.alloc`: its size in bytes must not overflow (nor exceed
      2^62), and the allocation must succeed (the runtime's allocation
      function returns null when malloc fails).

    On the calling thread, `soac_report_error(kind, format, a, b)` stops the
    call made through `soac_call_checked` (Python raises a
    `soac.runtime.abi.ExecutionError`), and the runtime frees every buffer
    the call had allocated. Inside a parallel loop (`omp.parallel`,
    `scf.parallel`), or in a private function that one may call, the other
    threads cannot be stopped: `soac_record_error` records the first
    failure, and the rest of the check's block is skipped (the values it
    yields are zeros), so that nothing out of bounds runs. Each
    `omp.parallel` tells the runtime which call its threads work for
    (`soac_parallel_enter`/`exit`), and the call stops after the region
    (`soac_parallel_check`). GPU programs' host code is checked the same way
    (soac's GPU runtime has checked calls too); checks inside kernels are
    `soac-lower-kernel-checks`' work, and those it left become `cf.assert`s,
    which trap the kernel. The CPU pipeline runs this pass after the
    conversion to OpenMP, the GPU pipeline after kernel outlining.

    A check of values that no sequential loop around it changes (a constant
    index into a row of a loop-invariant size) runs once before those loops,
    when they run, rather than in every iteration.

    ```mlir
    // before
    %i = soac.check_index %k below %n, "'tensor.extract' dimension 0"
    // after (host code)
    %ok = arith.cmpi ult, %k, %n : index
    %failed = arith.xori %ok, %true : i1
    scf.if %failed {
      %format = llvm.mlir.addressof @soac_check_0 : !llvm.ptr
      llvm.call @soac_report_error(%kind, %format, %k64, %n64) : (i32, !llvm.ptr, i64, i64) -> ()
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
    "mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
  ];
}

def SoacHoistBranchBuffers
    : Pass<"soac-hoist-branch-buffers", "mlir::func::FuncOp"> {
  let summary = "Move allocations out of scf.if branches inside loops, so that buffer-loop-hoisting can take them out of the loops";
  let description = [{
    `buffer-loop-hoisting` moves an allocation out of a loop only from the
    loop's body, not from an `scf.if` inside it, and `buffer-hoisting` does
    not move one above the block of its uses. The SOAC lowering puts many
    temporaries in branches inside loops: the sequential half of the
    `scf.if` choosing between a parallel and a sequential loop, the bin of a
    histogram that is in range. Each was allocated and freed once per
    iteration (D-LSTM's gradient: 229,000 allocations per call).

    An allocation in `scf.if`s inside a loop moves before the outermost of
    those `scf.if`s when its sizes are defined before it and are sizes that
    a buffer may always take (constants, dimensions of buffers, and
    selections, minima and maxima of those: it is now allocated even where
    the branch is not taken), and when no view of it leaves the branch (a
    yield, a call, a return). `buffer-loop-hoisting` then takes it out of
    the loop where it can.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def SoacExpandShapeToReinterpretCast
    : Pass<"soac-expand-shape-to-reinterpret-cast"> {
  let summary = "Rewrite memref.expand_shape with several dynamic sizes in a group into memref.reinterpret_cast";
  let description = [{
    `expand-strided-metadata` in MLIR 22.1 asserts on a `memref.expand_shape`
    whose reassociation group has more than one dynamic size (it recomputes
    the dynamic size from the source instead of reading `output_shape`). This
    pass, run before it, rewrites such an op into the view it describes: a
    `memref.reinterpret_cast` of the source's base buffer with the sizes
    `output_shape` names and the strides they imply.

    ```mlir
    %e = memref.expand_shape %m [[0, 1]] output_shape [%a, %b]
        : memref<?xf32> into memref<?x?xf32>
    // becomes
    %base, %offset, %size, %stride = memref.extract_strided_metadata %m
        : memref<?xf32> -> memref<f32>, index, index, index
    %s0 = arith.muli %stride, %b : index
    %e = memref.reinterpret_cast %base to offset: [0], sizes: [%a, %b],
        strides: [%s0, 1] : memref<f32> to memref<?x?xf32>
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect",
  ];
}

def SoacScopeLaunchStack : Pass<"soac-scope-launch-stack", "mlir::ModuleOp"> {
  let summary = "Free the stack a kernel launch takes once the launch returns";
  let description = [{
    The LLVM translation of a host `gpu.launch_func` (gpu-to-llvm leaves it
    for the offloading handler) allocates the launch's argument array with
    `alloca` where the launch is. A launch inside a loop (D-LSTM's time
    steps, a checkpointed gradient's reverse sweep) thus grows the stack by
    that array on every iteration, and enough iterations overflow it: the
    host process dies with a segfault. This pass, run on the LLVM dialect
    after gpu-to-llvm, brackets every host launch with `llvm.intr.stacksave`
    and `llvm.intr.stackrestore`, so each launch's arrays are released when
    it returns.

    ```mlir
    gpu.launch_func @kernels::@k blocks in (%g, %c1, %c1) threads in (...) args(...)
    // becomes
    %s = llvm.intr.stacksave : !llvm.ptr
    gpu.launch_func @kernels::@k blocks in (%g, %c1, %c1) threads in (...) args(...)
    llvm.intr.stackrestore %s : !llvm.ptr
    ```

    A launch that is not in an `llvm.func` (the host is not yet LLVM) is
    an error: the pass belongs after gpu-to-llvm.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def SoacRenameReservedSymbols : Pass<"soac-rename-reserved-symbols", "mlir::ModuleOp"> {
  let summary = "Move functions named like a C library function out of the C namespace";
  let description = [{
    Compiled code calls the C library by name: `math.powf` on `f64` becomes
    a call of `pow` (through `math-to-libm`, or LLVM's libcall for
    `llvm.pow`), allocations call `malloc`, and the runtimes' functions are
    `soac_*`, `_mlir_*`, `mgpu*`. A function of the program with one of these
    names would take those calls: a user's `@pow` that calls `math.powf`
    called itself until the stack overflowed. This pass, run before the math
    lowerings, renames every such function definition to
    `soac.reserved.<name>` (a name no C symbol can have) and its uses with
    it; `soac-restore-interface-names` gives its C interface
    (`_mlir_ciface_<name>`) back its original name after `func` is lowered,
    so callers see no difference.

    ```mlir
    func.func @pow(%x: f64, %y: f64) -> f64 attributes {llvm.emit_c_interface}
    // becomes
    func.func @soac.reserved.pow(%x: f64, %y: f64) -> f64 attributes {llvm.emit_c_interface}
    ```
  }];
}

def SoacMarkAllocationFunctions
    : Pass<"soac-mark-allocation-functions", "mlir::ModuleOp"> {
  let summary = "Tell LLVM that allocations are new memory and frees keep no pointer";
  let description = [{
    After memrefs are lowered to `llvm`, the declarations of
    `_mlir_memref_to_llvm_alloc` and `_mlir_memref_to_llvm_aligned_alloc`
    get a `noalias` result, which the runtimes' implementations honour (each
    returns memory no live buffer uses, as malloc does). LLVM then knows that
    the buffers of a function's temporaries overlap neither each other nor
    its arguments: a loop that accumulates into one buffer while it reads
    another keeps what it read in registers instead of reloading it after
    every store, and the vectorizers need no run-time overlap checks.
    `_mlir_memref_to_llvm_free`'s argument gets `nocapture`, as C's free
    has: a buffer freed inside a loop (a thread's temporaries, per chunk of
    a parallel loop) would otherwise count as captured before the loop's
    next iteration, where it could alias any pointer loaded from memory.

    ```mlir
    llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
    // becomes
    llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
    llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr {llvm.nocapture})
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def SoacRestoreInterfaceNames : Pass<"soac-restore-interface-names", "mlir::ModuleOp"> {
  let summary = "Give the C interfaces of renamed functions their original names";
  let description = [{
    The second half of `soac-rename-reserved-symbols`: after `func` is
    lowered to `llvm`, the wrapper `_mlir_ciface_soac.reserved.<name>`
    becomes `_mlir_ciface_<name>` again, the symbol the runtimes look up.
  }];
}

def SoacInlineIntoInterfaces : Pass<"soac-inline-into-interfaces", "mlir::ModuleOp"> {
  let summary = "Compile each function with a C interface inside its wrapper";
  let description = [{
    After `func` is lowered to `llvm`, a function `@f` of 64 arguments or
    more (a memref descriptor counts its fields) with a C interface wrapper
    `@_mlir_ciface_f` that nothing else references gets internal linkage
    and `always_inline`: LLVM inlines it into the wrapper and compiles it
    once, there. The wrapper loads each memref descriptor and
    passes its fields to `@f`, which returns its results as one aggregate:
    for a function of many tensors (a jvp of 100 lanes: 101 arguments and
    101 results) that call took most of LLVM's time (1.3 of 1.7 s, in the
    post-RA scheduler on its straight-line code). `_mlir_ciface_f` stays
    the symbol callers look up; functions of fewer arguments keep their
    own symbol (mlir-runner calls `@main` through a wrapper of its own).

    ```mlir
    llvm.func @f(...) -> ... attributes {llvm.emit_c_interface}
    llvm.func @_mlir_ciface_f(...) { ... llvm.call @f(...) ... }
    // becomes
    llvm.func internal @f(...) -> ... attributes {always_inline, llvm.emit_c_interface}
    ```
  }];
}

def SoacExpandF64Math : Pass<"soac-expand-f64-math"> {
  let summary = "Write math.exp, math.log and math.tanh as f64 arithmetic that vectorizes";
  let description = [{
    LLVM lowers these functions to libm calls, one element at a time, and a
    loop containing a call is not vectorized. This pass replaces each (on
    f64 or f32 scalars or vectors) by a range reduction, a polynomial and a
    scaling by a power of two built from its bits, in f64: plain
    arithmetic, which LLVM's loop vectorizer vectorizes with the rest of the
    loop. f32 arguments are widened to f64 and the results rounded back.
    f64 results are within 2 ulp of libm's (4 for tanh); special values
    (zeros, infinities, NaN, subnormals, overflow and underflow) are libm's.
    Other types and functions are left to the usual lowering. The CPU
    pipeline runs it before the math functions are lowered to LLVM
    (`vector-math=false` leaves it out).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def ConvertI1MemRefToLLVM : Pass<"convert-i1-memref-to-llvm"> {
  let summary = "Lower memref.load/store of i1 to llvm.load/store (one byte per element)";
  let description = [{
    `finalize-memref-to-llvm` in MLIR 22.1 asserts on loads and stores of
    element types narrower than a byte. soac keeps booleans one per byte (as
    numpy does), so this pass lowers `memref.load` and `memref.store` of `i1`
    itself, before `finalize-memref-to-llvm`: the address comes from the memref
    descriptor, and `llvm.load`/`llvm.store` of `i1` access one byte. The
    memref operand is bridged with `unrealized_conversion_cast`, which
    `reconcile-unrealized-casts` removes at the end of the pipeline. It runs
    on host modules and on GPU kernel modules (before convert-gpu-to-nvvm,
    which asserts the same way).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def SoacEmulateGpuLaunches : Pass<"soac-emulate-gpu-launches", "mlir::ModuleOp"> {
  let summary = "Run gpu.launch kernels as sequential loops on the CPU (to check kernels without a GPU)";
  let description = [{
    Replaces each `gpu.launch` by a CPU program computing what the kernel
    computes, so that the code `convert-soac-to-gpu` generates can be
    compared with the interpreter on machines without a GPU: pass it to
    `soac-lower-to-cpu` after `convert-soac-to-gpu`.

    - A kernel whose threads do not wait for each other becomes loops over
      its blocks and, inside, over its threads, running the body one thread
      after the other (one of the orders a GPU may run them in).
    - A kernel whose threads synchronize (`gpu.barrier`, `gpu.shuffle`,
      workgroup memory: reductions, scans, one block per row) becomes loops
      over its blocks around an OpenMP team (`omp.parallel`) of as many
      threads as a block has, which run the body concurrently: barriers
      become `omp.barrier`, a shuffle a store of each thread's value into a
      slot of a buffer, a barrier, a load of the source lane's slot (the
      thread's own value where the source is outside the width, as on a
      GPU) and a barrier; workgroup memory is one stack buffer that the
      blocks, run one after the other, reuse. Warps are emulated as the
      whole block, so a shuffle must be reached by every thread of the
      block, as the kernels of `convert-soac-to-gpu` do. The program needs
      the OpenMP runtime.
    - A product on the tensor cores (`nvvm.mma.sync` m8n8k4 of float64,
      A row-major, B column-major) is computed in PTX's fragment layout
      from the operands of the 32 lanes of the thread's warp: each thread
      stores its A and B into its slots, a barrier, each adds the four
      products of its row (lane / 4) and of its two columns (2 (lane % 4)
      and the next) to its C by fused multiply-adds, a barrier. The block
      must have whole warps (checked when it runs).

    It checks what each thread computes, not the absence of races.
    Other shapes and types of `nvvm.mma.sync` and its results read other
    than by `llvm.extractvalue`, subgroup and block reductions of the gpu
    dialect, private memory, and asynchronous launches are errors at their
    location.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::memref::MemRefDialect", "mlir::omp::OpenMPDialect",
                           "mlir::func::FuncDialect", "mlir::cf::ControlFlowDialect"];
}

def SoacSinkScalarReads
    : Pass<"soac-sink-scalar-reads", "mlir::func::FuncOp"> {
  let summary = "Kernels read the scalars earlier kernels wrote (a reduce's total) instead of the host";
  let description = [{
    A reduce's total is a scalar that a kernel writes into a buffer and the
    host then loads: in device memory that load is a copy that waits for
    every kernel launched before it (`soac-host-buffer-copies`). Inside a
    loop, each such wait leaves the GPU idle while the host launches the
    next kernels (D-LSTM's softmax normaliser, each time step).

    When every use of such a load is inside kernels launched after it,
    directly or through host arithmetic on scalars (`arith`, `math`), each
    of those kernels loads the scalar from the buffer and redoes the
    arithmetic, and the host load and arithmetic are removed. The buffer
    must be an allocation that the host only loads from and that kernels
    write only in launches before the load (in its block), so that every
    later kernel reads what the host would have read.

    ```mlir
    gpu.launch ... { ... memref.store %total, %totals[%c0] ... }
    %s = memref.load %totals[%c0] : memref<?xf32>
    %l = math.log %s : f32
    gpu.launch ... { ... arith.subf %y, %l ... }
    // becomes
    gpu.launch ... { ... memref.store %total, %totals[%c0] ... }
    gpu.launch ... {
      %s = memref.load %totals[%c0] : memref<?xf32>
      %l = math.log %s : f32
      ... arith.subf %y, %l ...
    }
    ```

    A scalar that an `scf.for` carries, when the body uses it only to
    compute its next value from such loads and host arithmetic (a running
    loss: `total + sum`), is carried in a buffer instead: a one-thread
    kernel stores the initial value before the loop, another computes the
    next value from the buffer at the end of each iteration, and the host
    reads the buffer once, after the loop.

    A scalar the host itself needs (returned from inside the loop, a
    loop's bound, stored into a tensor) is still read by the host.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def SoacHostBufferCopies : Pass<"soac-host-buffer-copies", "mlir::ModuleOp"> {
  let summary = "Host reads and writes of GPU buffers as copies through the runtime (for device memory)";
  let description = [{
    Host code of GPU programs may read a buffer (a reduce's scalar result, a
    loop's state) or write one; with managed memory it does so directly.
    Device memory is not addressable by the host, so this rewrites each such
    access, in the functions outside `gpu.module`s after kernel outlining:

    - `memref.load %buf[%i]` becomes a copy of the element into a stack
      buffer by the runtime's `soac_gpu_copy(dst, src, bytes)` (cuMemcpy),
      then a load of the stack buffer;
    - `memref.store %v, %buf[%i]`: a store into a stack buffer, then a copy
      of it to the element;
    - `memref.copy` between contiguous buffers: one copy of the whole, by
      `soac_gpu_copy` where one side is host memory (the stack, a global),
      else by `soac_gpu_copy_buffers`, which queues it on the stream after
      the kernels before it and does not wait.

    `soac_gpu_copy` waits for the copy: the host reads or writes one side.

    ```mlir
    %v = memref.load %r[%c0] : memref<1xf32>
    // becomes
    %stage = memref.alloca() : memref<f32>
    ... memref.extract_aligned_pointer_as_index, the element's address ...
    func.call @soac_gpu_copy(%to, %from, %c4) : (i64, i64, i64) -> ()
    %v = memref.load %stage[] : memref<f32>
    ```

    Host-only scratch, a static buffer used within its block by loads,
    stores, its dealloc and private helpers that only load, store and
    measure it (the arrays the deallocation pipeline hands to its helper),
    moves to the stack at the function's entry instead. Stack buffers,
    globals, workgroup memory and arguments every call passes a stack
    buffer are left alone, and so are buffers of i1 and copies between
    strided buffers (`memrefCopy`, which the runtime runs on the host).
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

#endif // SOAC_PASSES_CONVERSION_PASSES_TD
