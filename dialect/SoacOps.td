//===- SoacOps.td - soac operations ------------------------------*- tablegen -*-===//
//
// The verifiers live in SoacOps.cpp; each rule there has a case in
// test/Dialect/Soac/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_OPS_TD
#define SOAC_OPS_TD

include "SoacDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Soac_Op<string mnemonic, list<Trait> traits = []>
    : Op<Soac_Dialect, mnemonic, traits>;

// Ops whose body is an operator region: side effects are those of the body
// (none for ops on tensors), so CSE and DCE treat an unused SOAC as dead.
class Soac_RegionOp<string mnemonic, list<Trait> traits = []>
    : Soac_Op<mnemonic, !listconcat(traits, [RecursiveMemoryEffects,
        SingleBlockImplicitTerminator<"YieldOp">])> {
  let regions = (region SizedRegion<1>:$body);
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// soac.map
//===----------------------------------------------------------------------===//

def Soac_MapOp : Soac_RegionOp<"map"> {
  let summary = "Apply a function to the rows of one or more tensors";
  let description = [{
    All inputs have the same outer size `n`. The body receives one row of each
    input and yields one value per result; result `i` is the tensor of the `n`
    values yielded at position `i` (outer size `n`, rows of the yielded type).

    ```mlir
    %p = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      soac.yield %m : f32
    }
    ```

    A map over the rows of a matrix gets a `tensor<?xf32>` per row, so a nested
    `soac.reduce` in the body expresses a matrix-vector product. Rows yielded by
    the body must all have the same shape (arrays are regular).
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)` (`->` type($results)^)? custom<Body>($body) attr-dict
  }];
  // Drops unused results and inputs, forwards results that yield an input's
  // row unchanged (SoacCanonicalize.cpp).
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// soac.reduce
//===----------------------------------------------------------------------===//

def Soac_ReduceOp : Soac_RegionOp<"reduce", [AttrSizedOperandSegments]> {
  let summary = "Combine the rows of k tensors with an associative operator";
  let description = [{
    `k` inputs with the same outer size, and `k` neutral elements whose types are
    the inputs' row types. The operator takes `2k` arguments (the `k` accumulated
    values, then the `k` values to combine) and yields `k` values. It must be
    associative and the `init` values neutral for it; the order of combination is
    unspecified. An empty input reduces to the neutral elements.

    ```mlir
    %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%acc: f32, %v: f32):
      %r = arith.addf %acc, %v : f32
      soac.yield %r : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)`
    `init` `(` $inits `:` type($inits) `)`
    `->` type($results) custom<Body>($body) attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// soac.scan
//===----------------------------------------------------------------------===//

def Soac_ScanOp : Soac_RegionOp<"scan", [AttrSizedOperandSegments]> {
  let summary = "Inclusive prefix combination of the rows of k tensors";
  let description = [{
    Operands and operator as for `soac.reduce`. Result `i` has the shape of input
    `i`: its row `j` is the combination of rows `0..j`.

    ```mlir
    %c = soac.scan ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
    ^bb0(%acc: f32, %v: f32):
      %r = arith.addf %acc, %v : f32
      soac.yield %r : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    `ins` `(` $inputs `:` type($inputs) `)`
    `init` `(` $inits `:` type($inits) `)`
    `->` type($results) custom<Body>($body) attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// soac.scatter
//===----------------------------------------------------------------------===//

def Soac_ScatterOp : Soac_Op<"scatter", [Pure]> {
  let summary = "Write rows of values into a copy of dest at the given indices";
  let description = [{
    Returns `dest` with row `indices[i]` replaced by row `i` of `values`.
    Indices outside `[0, dim(dest, 0))` are ignored. When an index appears more
    than once, which of its values is written is unspecified.

    ```mlir
    %w = soac.scatter dest(%d : tensor<8xf32>) indices(%idx : tensor<?xindex>)
           ins(%v : tensor<?xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$dest, AnyRankedTensor:$indices,
                       AnyRankedTensor:$values);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `dest` `(` $dest `:` type($dest) `)`
    `indices` `(` $indices `:` type($indices) `)`
    `ins` `(` $values `:` type($values) `)`
    `->` type($result) attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// soac.reduce_by_index
//===----------------------------------------------------------------------===//

def Soac_ReduceByIndexOp
    : Soac_RegionOp<"reduce_by_index", [AttrSizedOperandSegments]> {
  let summary = "Generalized histogram: combine rows of values into dest bins";
  let description = [{
    `k` destinations (same outer size), one 1-D index tensor, `k` value tensors
    (outer size = number of indices), `k` neutral elements and an associative
    and commutative operator as for `soac.reduce`. For each `i` with
    `indices[i]` in range, `dest[indices[i]] = op(dest[indices[i]], values[i])`;
    out-of-range indices are ignored.

    ```mlir
    %h = soac.reduce_by_index dest(%hist : tensor<1000xf32>)
           indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf32>)
           init(%zero : f32) -> tensor<1000xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      soac.yield %s : f32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$dests, AnyRankedTensor:$indices,
                       Variadic<AnyRankedTensor>:$values, Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    `dest` `(` $dests `:` type($dests) `)`
    `indices` `(` $indices `:` type($indices) `)`
    `ins` `(` $values `:` type($values) `)`
    `init` `(` $inits `:` type($inits) `)`
    `->` type($results) custom<Body>($body) attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// soac.iota
//===----------------------------------------------------------------------===//

def Soac_IotaOp : Soac_Op<"iota", [Pure]> {
  let summary = "The 1-D tensor 0, 1, ..., n-1";
  let description = [{
    The size comes from the result type when it is static, and from the `index`
    operand when it is dynamic (as for `tensor.empty`). The element type is
    `index` or a signless integer.

    ```mlir
    %i = soac.iota %n : tensor<?xindex>
    %j = soac.iota : tensor<8xi32>
    ```
  }];
  let arguments = (ins Optional<Index>:$size);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "($size^)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// soac.check_index
//===----------------------------------------------------------------------===//

// Not speculatable, so that no transformation moves a check out of the code
// that guards it (out of an scf.if branch or a loop that may run zero times),
// where it could fail for an access that never happens. Without memory
// effects, so that SOACs whose bodies check their gathers stay free of side
// effects (fusion, CSE and DCE treat them as before): an unused check is
// dead, as the access it guarded is.
def Soac_CheckIndexOp : Soac_Op<"check_index", [NoMemoryEffect,
    DeclareOpInterfaceMethods<ConditionallySpeculatable>]> {
  let summary = "An index checked against a size: the program stops if it is out of range";
  let description = [{
    Returns `index` when `0 <= index < size` (compared as unsigned numbers, so
    that a negative index is out of range too). Otherwise the program stops
    with an error that names the op's location, the index and the size:
    `what` says what was accessed, e.g. `'tensor.extract' dimension 1`.

    `soac-check-indices` puts one before each access at an index that is not
    known to be in range (`tensor.extract`, `tensor.insert`, the offsets and
    sizes of slices), so that no compiled program reads or writes outside its
    buffers. The CPU pipeline lowers it with `soac-lower-checks`: on the
    calling thread, a failed check stops the call (Python raises
    `soac.runtime.abi.IndexOutOfRangeError`); inside a parallel loop the
    failure is recorded, the rest of the iteration is skipped, and the call
    stops after the loop. In GPU kernels (`soac-lower-kernel-checks`) the
    failing thread records the failure and skips the access, and the call
    stops after the launch.

    A check that always runs after one of the same index against the same
    size (earlier in its block, or in a block around it) folds into that
    one: its result is the earlier check's.

    ```mlir
    %i = soac.check_index %k below %n, "'tensor.extract' dimension 0"
    %v = tensor.extract %x[%i] : tensor<?xf32>
    ```
  }];
  let arguments = (ins Index:$index, Index:$size, StrAttr:$what);
  let results = (outs Index:$result);
  let assemblyFormat = "$index `below` $size `,` $what attr-dict";
  let builders = [
    OpBuilder<(ins "mlir::Value":$index, "mlir::Value":$size, "llvm::StringRef":$what), [{
      build($_builder, $_state, $_builder.getIndexType(), index, size, what);
    }]>,
  ];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// soac.check
//===----------------------------------------------------------------------===//

// cf.assert with the values its message needs: a message of sizes that do
// not fit says what they were. The values are operands rather than read back
// from the condition's comparison, which canonicalization rewrites (it moves
// a constant operand of arith.cmpi to the right). A memory effect, as
// cf.assert has, keeps it alive with no results and in the code that guards
// it.
def Soac_CheckOp : Soac_Op<"check", [MemoryEffects<[MemWrite]>]> {
  let summary = "A condition checked at run time: the program stops if it is false";
  let description = [{
    Does nothing when `condition` holds. Otherwise the program stops with an
    error that names the op's location and `message`, in which each `%lld`
    (at most two, and no other `%` but `%%`) shows the next of `values`.

    `soac-check-indices` puts them before ops that assert sizes they do not
    check (a `tensor.expand_shape`'s output sizes, a `tensor.cast` to a
    static size, ...). The CPU pipeline lowers them with `soac-lower-checks`:
    a failed check stops the call (Python raises
    `soac.runtime.abi.ExecutionError`), as a failed `cf.assert` does; in GPU
    kernels it is recorded and reported after the launch
    (`soac-lower-kernel-checks`). A check of a condition known to hold is
    erased.

    ```mlir
    %same = arith.cmpi eq, %n, %c4 : index
    soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index
    ```
  }];
  let arguments = (ins I1:$condition, StrAttr:$message,
                       Variadic<Index>:$values);
  let assemblyFormat = [{
    $condition `,` $message (`with` $values^ `:` type($values))? attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
}

//===----------------------------------------------------------------------===//
// soac.vjp / soac.jvp
//===----------------------------------------------------------------------===//

// Both ops name a function and are expanded by the autodiff pass. The function
// is assumed free of side effects (soac programs have value semantics), hence
// Pure: an unused derivative is dead code.
class Soac_DerivativeOp<string mnemonic> : Soac_Op<mnemonic,
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<AnyType>:$operands,
                       OptionalAttr<DenseI64ArrayAttr>:$wrt,
                       ConfinedAttr<OptionalAttr<I64Attr>, [IntPositive]>:$width);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` (`wrt` $wrt^)? (`width` $width^)? attr-dict
    `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
}

def Soac_VjpOp : Soac_DerivativeOp<"vjp"> {
  let summary = "Reverse-mode derivative (vector-Jacobian product) of a function";
  let description = [{
    `soac.vjp @f(args..., cotangents...)` with one cotangent per result of `@f`
    (of the result's type) returns `@f`'s results followed by one gradient per
    differentiated argument (of that argument's type). `wrt` lists the
    differentiated argument positions, strictly increasing; without it every
    argument is differentiated. Differentiated arguments must have a float
    type or be tensors of floats. Nestable with `soac.jvp`.

    Vector mode: with `width k`, k vector-Jacobian products share the
    function's forward sweep. Each result takes k cotangents (consecutive
    operands) and each differentiated argument gets k gradients (consecutive
    results).

    ```mlir
    %r:3 = soac.vjp @dot(%x, %y, %seed) wrt [0, 1]
        : (tensor<?xf32>, tensor<?xf32>, f32) -> (f32, tensor<?xf32>, tensor<?xf32>)
    ```
  }];
}

def Soac_JvpOp : Soac_DerivativeOp<"jvp"> {
  let summary = "Forward-mode derivative (Jacobian-vector product) of a function";
  let description = [{
    `soac.jvp @f(args..., tangents...)` with one tangent per differentiated
    argument (of that argument's type) returns `@f`'s results followed by one
    tangent per result (of the result's type). `wrt` as for `soac.vjp`.

    Vector mode: with `width k`, k directional derivatives come out of one
    pass over the primal. Each differentiated argument takes k tangents
    (consecutive operands) and each result gets k tangents (consecutive
    results).

    ```mlir
    %r:2 = soac.jvp @dot(%x, %y, %tx) wrt [0]
        : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (f32, f32)
    %s:3 = soac.jvp @dot(%x, %y, %t0, %t1) wrt [0] width 2
        : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (f32, f32, f32)
    ```
  }];
}

include "SoacContractionOps.td"

//===----------------------------------------------------------------------===//
// soac.yield
//===----------------------------------------------------------------------===//

def Soac_YieldOp : Soac_Op<"yield", [Pure, Terminator,
    HasParent<"MapOp, ReduceOp, ScanOp, ReduceByIndexOp">]> {
  let summary = "Terminates a SOAC body, yielding its values";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  // The implicit-terminator trait needs an empty builder.
  let builders = [OpBuilder<(ins), [{ /* no values */ }]>];
}

#endif // SOAC_OPS_TD
