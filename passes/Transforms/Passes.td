//===- Passes.td - soac transforms -------------------------*- tablegen -*-===//
//
// soac IR to soac IR: simplification, fusion, flattening, and the checks and
// marks the pipelines put on programs before lowering them. One file per
// pass, named after it (soac-fuse-maps: FuseMaps.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_TRANSFORMS_PASSES_TD
#define SOAC_PASSES_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def SoacVerifyLowerable : Pass<"soac-verify-lowerable", "mlir::ModuleOp"> {
  let summary = "Refuse programs that the verifiers accept but MLIR's own passes assert on";
  let description = [{
    Reports, as errors at their ops, what the ops' verifiers accept but
    MLIR's passes assume never happens (and abort on): a `tensor.dim` or
    `memref.dim` at a constant index outside the rank (canonicalization
    asserts), a static shape whose byte size exceeds the 2^62 bytes a buffer
    can have (layout computations overflow), a `gpu.launch` of constant sizes
    no GPU launches (the NVVM lowering asserts), a slice that drops
    dimensions and has a stride of 0 (which dimensions a subview drops is
    then unknown, and `memref.subview`'s users assert). Both named pipelines run it
    first, so that no program makes them abort instead of reporting.

    ```mlir
    // error: 'memref.dim' op index -1 is out of range for its source of
    // type 'memref<?xf32>': expected an index below its rank, 1
    %m = memref.dim %x, %c-1 : memref<?xf32>
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
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
    Besides those, an `scf.for` carries unchanged (and canonicalization then
    drops) a value that nothing after the loop reads and that the body uses
    only to compute its own next value with pure ops: the stack a loop's
    forward sweep keeps of a carried value the reverse sweep never reads.

    ```mlir
    // before: the second result is unused, the second input unread
    %r:2 = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> { ... }
    // after
    %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... }
    ```
  }];
  let dependentDialects = ["soac::SoacDialect"];
}

def SoacExpandContractions
    : Pass<"soac-expand-contractions", "mlir::ModuleOp"> {
  let summary = "Rewrite soac.matmul as maps over its result's positions with a reduce of products";
  let description = [{
    For products a lowering has no kernel for (the GPU's, inside SOAC
    bodies: `nested-only`): `C = op(A)·op(B)` becomes a map over the rows
    of C of a map over its columns of the sum of the products of a row of
    op(A) and a column of op(B), read with `tensor.extract` (transposes are the order of the
    indices). Run it before `soac-check-indices`, which then checks the
    reads of operands whose inner sizes are known only at run time.

    ```mlir
    // before
    %c = soac.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    // after
    %c = soac.map ins(%rows : tensor<?xindex>) -> tensor<?x?xf32> {
    ^bb0(%i: index):
      %row = soac.map ins(%columns : tensor<?xindex>) -> tensor<?xf32> {
      ^bb0(%j: index):
        %p = soac.map ins(%inner : tensor<?xindex>) -> tensor<?xf32> { a[i, k] * b[k, j] }
        %s = soac.reduce ins(%p : tensor<?xf32>) init(%zero : f32) -> f32 { addf }
        soac.yield %s : f32
      }
      soac.yield %row : tensor<?xf32>
    }
    ```
  }];
  let options = [
    Option<"nestedOnly", "nested-only", "bool", /*default=*/"false",
           "Only the products inside SOAC bodies (the GPU lowering has a "
           "kernel of its own for the others)">,
  ];
  let dependentDialects = ["soac::SoacDialect", "mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def SoacCopyCheapMaps : Pass<"soac-copy-cheap-maps", "mlir::ModuleOp"> {
  let summary = "Give a cheap map of scalars read by several SOACs a copy per reader";
  let description = [{
    A `soac.map` of vectors to vectors whose body is cheap (at most 16
    arithmetic ops per element, reads of elements and splats) and which
    several SOACs read row by row is copied once per reader, each copy
    computing the results its reader reads. `soac-fuse-maps` does the same
    only where it cannot merge the readers; the GPU lowering merges
    nothing, and fuses a map into the one SOAC reading it, so each copy is
    computed inside its reader's kernel and the map is no kernel of its
    own (D-LSTM's output layer `h * w + b`, read by the softmax's sum and
    by the loss, each time step). It runs right before
    `convert-soac-to-gpu`: CSE would make the copies one again.

    ```mlir
    %y = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... cheap ... }
    %a = soac.reduce ins(%y : tensor<?xf32>) ...
    %b = soac.map ins(%y : tensor<?xf32>) ...
    // becomes one copy of %y per reader
    %y0 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... }
    %a = soac.reduce ins(%y0 : tensor<?xf32>) ...
    %y1 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> { ... }
    %b = soac.map ins(%y1 : tensor<?xf32>) ...
    ```
  }];
  let dependentDialects = ["soac::SoacDialect"];
}

def SoacFuseGathers : Pass<"soac-fuse-gathers", "mlir::ModuleOp"> {
  let summary = "Compute a cheap map where its elements are gathered, instead of storing it";
  let description = [{
    A `soac.map` of vectors to vectors whose body is cheap (at most 16
    arithmetic ops per element, reads of elements and splats: what
    `soac-fuse-maps` recomputes per reader) and whose results are only read
    by `tensor.extract` is removed: each extract reads the map's inputs at
    its index and runs the map's body there. The GPU pipeline runs it, so
    that such a map is no kernel of its own (D-LSTM's `sequence[t] *
    extra[0]`, read lane by lane by the first layer's kernel, each time
    step). It runs before `soac-check-indices`, which then checks the new
    reads of the inputs.

    ```mlir
    %x = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %p = arith.mulf %u, %v : f64
      soac.yield %p : f64
    }
    ... %e = tensor.extract %x[%j] : tensor<?xf64> ...
    // becomes
    ... %u = tensor.extract %a[%j] : tensor<?xf64>
        %v = tensor.extract %b[%j] : tensor<?xf64>
        %e = arith.mulf %u, %v : f64 ...
    ```
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
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
    A cheap map (at most 16 arithmetic ops per element: no math functions,
    no nested reductions) read by SOACs that cannot merge (of different
    kinds, or one reading another's result) is copied once per reader, each
    copy computing only what its reader reads, so that every copy fuses:
    recomputing a few flops costs less than storing the rows and reading
    them back.

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

    A standalone transform: soac-lower-to-cpu does not run it,
    soac-lower-to-nvvm only with `flatten=true`, and no lowering needs it.
    convert-soac-to-loops runs a SOAC nested in another as sequential loops
    inside the outer one's parallel loop; convert-soac-to-gpu maps nesting onto the GPU itself (one block
    per row, or one thread per row for deeper nests). What it produces
    lowers like any soac program (test_flatten.py compiles it for the CPU
    and compares with the interpreter); run it where flat nests are wanted,
    e.g. `soac-opt --soac-flatten` before a lowering of one's own.

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

def SoacCheckIndices : Pass<"soac-check-indices", "mlir::ModuleOp"> {
  let summary = "Check every tensor access at an index not known to be in range, and every size an op takes on trust";
  let description = [{
    Puts a `soac.check_index` before each access whose index may be out of
    range, so that compiled code never reads or writes outside a buffer:
    the indices of `tensor.extract` and `tensor.insert` (a gather in a map
    body, `x[i]` in a traced function), the offsets of `tensor.extract_slice`
    and `tensor.insert_slice` against the offsets at which the slice fits,
    and a computed `tensor.dim` index against the rank. The access then reads
    the checked index. An insert_slice's checks come as early as their
    operands allow, so that the map computing what it inserts can write into
    the slice (convert-soac-to-loops). Constant indices below static sizes
    are left alone,
    and so is everything inside an op or function marked
    `soac.assume_in_bounds` (for code that has proven its indices).

    Sizes that ops assert without checking get a `soac.check` each: the
    output sizes of a `tensor.expand_shape` group multiply to the source's
    dimension; a `tensor.cast` to a static size has it; a `tensor.reshape`'s
    shape has the result type's static sizes and multiplies to the source's
    number of elements; a `tensor.insert_slice`'s source has the slice's
    sizes; a `tensor.concat`'s inputs agree outside the concatenated
    dimension and add up to a static result size along it. Sizes static on
    both sides (the verifiers compared them) and sizes equal by construction
    (a dimension of the source, an expansion of a collapse, a map's outer
    size: what soac's own reshapes build) get none. Both
    pipelines run it after differentiation (so gradients are checked too);
    with `check-indices=false` they run it with `assume-in-bounds`, which
    removes every check instead (the reverse rule of `tensor.extract` checks
    the indices of the adjoint's accumulation too).

    ```mlir
    // before
    %v = tensor.extract %x[%k] : tensor<?xf32>
    %y = tensor.cast %x : tensor<?xf32> to tensor<4xf32>
    // after
    %n = tensor.dim %x, %c0 : tensor<?xf32>
    %i = soac.check_index %k below %n, "'tensor.extract' dimension 0"
    %v = tensor.extract %x[%i] : tensor<?xf32>
    %same = arith.cmpi eq, %n, %c4 : index
    soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index
    %y = tensor.cast %x : tensor<?xf32> to tensor<4xf32>
    ```
  }];
  let options = [
    Option<"assumeInBounds", "assume-in-bounds", "bool", "false",
           "Remove every soac.check_index and soac.check instead of adding "
           "checks">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::tensor::TensorDialect",
    "soac::SoacDialect",
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

#endif // SOAC_PASSES_TRANSFORMS_PASSES_TD
