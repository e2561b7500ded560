//===- Passes.td - soac passes -----------------------------------*- tablegen -*-===//

#ifndef SOAC_PASSES_TD
#define SOAC_PASSES_TD

include "mlir/Pass/PassBase.td"

def SoacAutodiff : Pass<"soac-autodiff", "mlir::ModuleOp"> {
  let summary = "Expand soac.vjp into functions computing reverse-mode derivatives";
  let description = [{
    Replaces each `soac.vjp @f(args..., cotangents...) wrt [...]` by a call to
    a generated private function `@f__vjp_wrt_<positions>` returning `@f`'s
    results and the gradients of the `wrt` arguments. Functions called by `@f`
    are differentiated the same way, on demand. A soac.vjp inside a
    differentiated function is expanded in turn (up to a fixed depth).

    No tape: the generated function re-executes the forward code of each
    scope (function body, SOAC body, branch) when its return sweep enters it,
    then runs the rules of its ops in reverse order. Each op's rule comes from
    its `ReverseModeOpInterface` (attached to arith, math, tensor, func, scf
    and soac ops); an op without a rule is an error at its location.
    canonicalize and cse afterwards remove the re-executed code nothing uses.
    A map's run in that forward code also yields, per row, the values of
    its body's math functions (exp, tanh, log, ...) and of nested SOACs that
    do more than arithmetic, which its adjoint map reads (with the values
    the body yields) instead of computing them again.

    Loops keep one checkpoint of their carried values per iteration,
    recorded by the loop's run in the re-executed forward code (which then
    runs the loop once). With
    `checkpoint-levels=k` (every loop) or `soac.checkpoint_levels = k : i64`
    on an scf.for, the loop is first strip-mined into k nested loops of about
    N^(1/k) iterations each: memory about k·N^(1/k) checkpoints instead of N,
    for re-executing the inner levels once more.

    ```mlir
    // before
    %r:2 = soac.vjp @square(%x, %seed) : (f32, f32) -> (f32, f32)
    // after
    %r:2 = call @square__vjp_wrt_0(%x, %seed) : (f32, f32) -> (f32, f32)
    func.func private @square__vjp_wrt_0(%x: f32, %seed: f32) -> (f32, f32) {
      %y = arith.mulf %x, %x : f32          // re-executed forward code
      %a = arith.mulf %seed, %x : f32       // the rule of mulf, twice
      %b = arith.mulf %seed, %x : f32
      %g = arith.addf %a, %b : f32
      return %y, %g : f32, f32
    }
    ```
  }];
  let options = [
    Option<"checkpointLevels", "checkpoint-levels", "int64_t", /*default=*/"1",
           "Strip-mine every scf.for of a differentiated function into this "
           "many levels of checkpoints (1: one checkpoint per iteration)">,
    Option<"mixedMode", "mixed-mode", "bool", /*default=*/"false",
           "Differentiate every soac.map whose body maps scalars to scalars "
           "in mixed mode: its partials by forward mode, in the adjoint map, "
           "with no reverse sweep of the body (a map's `soac.mixed_mode` "
           "bool attribute overrides this)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "soac::SoacDialect",
  ];
}

def SoacSimplify : Pass<"soac-simplify", "mlir::ModuleOp"> {
  let summary = "Shrink SOACs: drop dead ones, unused results and inputs, identity rows";
  let description = [{
    Applies the canonicalization patterns of the soac ops (and erases SOACs
    whose results are unused): a `soac.map` loses the results nobody reads and
    the inputs its body never reads, a result yielding the same row as an
    earlier one is replaced by it, a result that yields an input's row
    unchanged becomes that input, and an input read only for its size is taken
    from upstream so that its producer may die, and `map (+)` of a
    `reduce_by_index (+)` from zeros and another tensor becomes the
    histogram accumulated into that tensor. Derivatives produce many of
    these; `canonicalize` includes the same patterns among all others.

    ```mlir
    // before: the second result is unused, the second input unread
    %r:2 = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> { ... }
    // after
    %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... }
    ```
  }];
  let dependentDialects = ["soac::SoacDialect"];
}

def SoacFuseMaps : Pass<"soac-fuse-maps", "mlir::ModuleOp"> {
  let summary = "Fuse maps into the one map reading them, merge the maps, or the reduces, that read the same map, and copy cheap maps per reader";
  let description = [{
    A `soac.map` read by several SOACs cannot be fused into one of them
    without being computed once per consumer, so the lowering would
    materialize it. When its results are read, row by row, only by
    `soac.map` ops, or only by `soac.reduce` ops, in its block, and none of
    these depends on another, they become one op whose body (or operator)
    does the work of each, side by side (horizontal fusion). Ops between the
    siblings that read an earlier sibling's result move after the merged op;
    the merge is skipped when such an op has side effects. A `soac.map` read
    only by one `soac.map` becomes part of it (vertical fusion): its inputs
    become the consumer's and its body runs first in the consumer's body.
    A cheap map (at most 8 arithmetic ops per element: no math functions, no
    nested reductions) read by SOACs of different kinds, which cannot merge,
    is copied once per reader, each copy computing only what its reader
    reads, so that every copy fuses: recomputing a few flops costs less than
    storing the rows and reading them back.

    Together these turn the reverse sweep of a map over points (one
    per-point contribution to the adjoint of each array every point reads,
    each summed by its own `soac.reduce`) into one loop that accumulates all
    of them, in place. `convert-soac-to-loops` applies the same patterns
    before it lowers a map or a reduce, including to the SOACs it clones
    into loops.

    ```mlir
    // before
    %c:2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> { ... }
    %s = soac.reduce ins(%c#0 : tensor<?xf32>) init(%zero : f32) -> f32 { ... }
    %t = soac.reduce ins(%c#1 : tensor<?xf32>) init(%one : f32) -> f32 { ... }
    // after: %c fuses into the one reduce when lowered
    %st:2 = soac.reduce ins(%c#0, %c#1 : tensor<?xf32>, tensor<?xf32>)
        init(%zero, %one : f32, f32) -> f32, f32 { ... }
    ```
  }];
  let dependentDialects = ["soac::SoacDialect"];
}

def SoacFlatten : Pass<"soac-flatten", "mlir::ModuleOp"> {
  let summary = "Turn nested parallelism into perfect nests (moderate flattening)";
  let description = [{
    Rewrites SOACs nested in `soac.map` bodies, as Futhark's moderate
    flattening does, so that each map holds one parallel construct over its
    rows. Every rewrite keeps results bit-identical (floating-point operations
    are neither reordered nor reassociated) and applies only when it provably
    does: the body has no side effects, bounds and inner functions do not
    depend on the row where that matters; otherwise the IR is left alone.
    Constants in map bodies are first moved in front of the maps.

    - Distribution (map fission): a map whose body holds several nests (a
      SOAC with the maps only it reads, or an op with SOACs in its regions)
      becomes one map per nest. Values of an earlier part that a later one
      reads become extra results (rows) of the earlier map and extra inputs
      of the later one; every statement runs in exactly one map.
    - map∘map: a map over rows of rank ≥ 2 inputs whose body is only maps over
      those rows (bodies not reading the row's values) becomes one map over
      the inputs with their two outer dimensions merged (`tensor.collapse_shape`)
      and its results reshaped back (`tensor.expand_shape`).
    - map∘reduce, map∘scan: the scalar statements around a nested reduce
      (scan) go into maps of their own, before (what it reads) and after (what
      reads it), leaving `map (λrow. reduce ⊕ (map f row))`. Such a map, whose
      body is exactly one reduce or scan over (maps of) its rows with neutral
      elements from outside the map, yielding the reduce's (scan's) results,
      gets the unit attribute `soac.segmented`: a segmented reduction (scan),
      one per row, as a GPU lowering runs with one thread block per row. The
      attribute is a hint: it is recomputed at the end of the pass (removed
      where the contract no longer holds), nothing requires it and other
      passes may drop it.
    - Loop interchange: a map whose body is one `scf.for` with bounds defined
      outside the map, scalar carried values and a scalar body becomes an
      `scf.for` around a map carrying one tensor per scalar (initial values:
      the input rows, or a `tensor.splat` of a value from outside).

    ```mlir
    // before
    %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %e = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%x: f32):
        %y = math.exp %x : f32
        soac.yield %y : f32
      }
      soac.yield %e : tensor<?xf32>
    }
    // after
    %flat = tensor.collapse_shape %A [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
    %e = soac.map ins(%flat : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %y = math.exp %x : f32
      soac.yield %y : f32
    }
    %r = tensor.expand_shape %e [[0, 1]] output_shape [%n, %m]
        : tensor<?xf32> into tensor<?x?xf32>

    // before
    %s = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %t = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 { ... }
      %u = math.sqrt %t : f32
      soac.yield %u : f32
    }
    // after
    %t = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %t = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 { ... }
      soac.yield %t : f32
    } {soac.segmented}
    %s = soac.map ins(%t : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%v: f32):
      %u = math.sqrt %v : f32
      soac.yield %u : f32
    }
    ```
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "soac::SoacDialect",
  ];
}

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
      a map nested deeper runs one thread per row, which runs the body
      sequentially with the tensors it computes recomputed where read.
    - A reduce or reduce_by_index of vector rows combined elementwise is a
      fold per element (a column reduce, one atomic per element).

    What the kernels cannot run (scans nested deeper than one block, a
    reduce_by_index with several values per index, shapes that depend on
    data) is an error at its location.

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
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::bufferization::BufferizationDialect",
    "mlir::gpu::GPUDialect", "mlir::LLVM::LLVMDialect",
    "mlir::memref::MemRefDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect",
  ];
}

def SoacMarkEntryPoints : Pass<"soac-mark-entry-points", "mlir::ModuleOp"> {
  let summary = "Give public functions the calling convention soac's runtime uses";
  let description = [{
    Every public `func.func` with a body becomes an entry point called from C
    (the JIT, shared libraries):

    - `llvm.emit_c_interface`, so that `convert-func-to-llvm` emits the wrapper
      `_mlir_ciface_<name>`: memref arguments and results as pointers to
      descriptors, results packed in a struct passed first when there are
      several;
    - `bufferization.writable = false` on tensor arguments: callers keep value
      semantics (their arrays are never written), so bufferization copies an
      argument before updating it in place.
  }];
}

def SoacCopiesToLoops : Pass<"soac-copies-to-loops"> {
  let summary = "Turn copies between 1-D buffers into loops";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` to a memcpy only when
    both buffers have the identity layout; any other copy (a row of a 2-D
    buffer, a subview at a dynamic offset) becomes a call of the generic
    `memrefCopy`, which walks the strides element by element. The
    checkpoints of a gradient's loops copy one short row per iteration that
    way. This pass rewrites every copy between 1-D buffers into an `scf.for`
    of loads and stores, which LLVM inlines and vectorizes; other copies are
    left alone. The CPU pipeline runs it after deallocation.

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

def SoacVerifyLowerable : Pass<"soac-verify-lowerable", "mlir::ModuleOp"> {
  let summary = "Refuse programs that the verifiers accept but MLIR's own passes assert on";
  let description = [{
    Reports, as errors at their ops, what the ops' verifiers accept but
    MLIR's passes assume never happens (and abort on): a `tensor.dim` or
    `memref.dim` at a constant index outside the rank (canonicalization
    asserts), a static shape whose byte size exceeds the 2^62 bytes a buffer
    can have (layout computations overflow), a `gpu.launch` of constant sizes
    no GPU launches (the NVVM lowering asserts). Both named pipelines run it
    first, so that no program makes them abort instead of reporting.

    ```mlir
    // error: 'memref.dim' op index -1 is out of range for its source of
    // type 'memref<?xf32>': expected an index below its rank, 1
    %m = memref.dim %x, %c-1 : memref<?xf32>
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def SoacCheckIndices : Pass<"soac-check-indices", "mlir::ModuleOp"> {
  let summary = "Check every tensor access at an index not known to be in range";
  let description = [{
    Puts a `soac.check_index` before each access whose index may be out of
    range, so that compiled code never reads or writes outside a buffer:
    the indices of `tensor.extract` and `tensor.insert` (a gather in a map
    body, `x[i]` in a traced function), the offsets of `tensor.extract_slice`
    and `tensor.insert_slice` against the offsets at which the slice fits,
    and a computed `tensor.dim` index against the rank. The access then reads
    the checked index. Constant indices below static sizes are left alone,
    and so is everything inside an op or function marked
    `soac.assume_in_bounds` (for code that has proven its indices). Both
    pipelines run it after differentiation (so gradients are checked too);
    with `check-indices=false` they run it with `assume-in-bounds`, which
    removes every check instead (the reverse rule of `tensor.extract` checks
    the indices of the adjoint's accumulation too).

    ```mlir
    // before
    %v = tensor.extract %x[%k] : tensor<?xf32>
    // after
    %n = tensor.dim %x, %c0 : tensor<?xf32>
    %i = soac.check_index %k below %n, "'tensor.extract' dimension 0"
    %v = tensor.extract %x[%i] : tensor<?xf32>
    ```
  }];
  let options = [
    Option<"assumeInBounds", "assume-in-bounds", "bool", "false",
           "Remove every soac.check_index instead of adding checks">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::tensor::TensorDialect",
    "soac::SoacDialect",
  ];
}

def SoacLowerChecks : Pass<"soac-lower-checks", "mlir::ModuleOp"> {
  let summary = "Lower run-time checks to calls of soac's runtime, which stop the call instead of the process";
  let description = [{
    Turns the run-time checks of host code into calls of soac's CPU runtime
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
    (`soac_parallel_check`). Checks inside GPU kernels become `cf.assert`s,
    which trap the kernel. The CPU pipeline runs this pass after the
    conversion to OpenMP. With `report-to-runtime=false` (code whose runtime
    has no checked calls: the GPU pipeline's host code) every
    `soac.check_index` becomes a `cf.assert` and nothing else changes.

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
  let options = [
    Option<"reportToRuntime", "report-to-runtime", "bool", "true",
           "Call soac's runtime when a check fails (false: checks of "
           "indices become cf.asserts)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
    "mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
    "mlir::scf::SCFDialect",
  ];
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
    Replaces each `gpu.launch` by loops over its blocks and, inside, over
    its threads, that run the kernel's body one thread after the other. The
    result is a CPU program computing what the kernel computes, so that the
    code `convert-soac-to-gpu` generates can be compared with the
    interpreter on machines without a GPU: pass it to `soac-lower-to-cpu`
    after `convert-soac-to-gpu`.

    Running threads one after the other is one of the orders a GPU may run
    them in, so it is faithful for kernels whose threads do not wait for
    each other: kernels that synchronize (`gpu.barrier`, warp shuffles,
    workgroup memory) are an error at their location. It checks what each
    thread computes, not the absence of races.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect"];
}

#endif // SOAC_PASSES_TD
