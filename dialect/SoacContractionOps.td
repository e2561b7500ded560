//===- SoacContractionOps.td - contractions ----------------------*- tablegen -*-===//
//
// Matrix products kept as one op from the frontend through autodiff, so that
// the CPU lowering can hand them to a tuned kernel (and the adjoint of a
// product is two products, not a map of scatter-adds). Included by
// SoacOps.td; the verifier lives in SoacContraction.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_CONTRACTION_OPS_TD
#define SOAC_CONTRACTION_OPS_TD

def Soac_MatmulOp : Soac_Op<"matmul", [Pure]> {
  let summary = "Matrix product of two matrices, either read transposed";
  let description = [{
    `result = op(lhs) · op(rhs)` where `op(x)` is `x`, or `xᵀ` when the
    operand's `transpose_*` flag is set: with `op(lhs)` of `m × k` and
    `op(rhs)` of `k × n`, the result is `m × n`. Element types are one
    integer or float type. The result's sizes are those of the operands
    (static where theirs are); the two `k` must agree (checked by the
    verifier when static, by the lowered code otherwise).

    ```mlir
    %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>)
           -> tensor<?x?xf64>
    // aᵀ · b, what the adjoint of a product reads
    %g = soac.matmul ins(%a, %cbar : tensor<?x?xf64>, tensor<?x?xf64>)
           transpose_lhs -> tensor<?x?xf64>
    ```

    Batched products and matrix-vector products are this op in a `soac.map`
    body and on reshaped views.
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `ins` `(` $lhs `,` $rhs `:` type($lhs) `,` type($rhs) `)`
    (`transpose_lhs` $transpose_lhs^)? (`transpose_rhs` $transpose_rhs^)?
    `->` type($result) attr-dict
  }];
  let builders = [
    // The result type follows from the operands.
    OpBuilder<(ins "mlir::Value":$lhs, "mlir::Value":$rhs,
                   "bool":$transposeLhs, "bool":$transposeRhs)>,
  ];
  let extraClassDeclaration = [{
    /// The type of `op(lhs) · op(rhs)`.
    static mlir::RankedTensorType inferResultType(mlir::Type lhs,
        mlir::Type rhs, bool transposeLhs, bool transposeRhs);
    /// The sizes its lowerings read, as tensor.dim ops built at `b`: m, the
    /// inner size of op(lhs) and of op(rhs) (the verifier compares them
    /// only where both are static), and n.
    struct Sizes { mlir::Value m, kLhs, kRhs, n; };
    Sizes buildSizes(mlir::OpBuilder &b);
  }];
  let hasVerifier = 1;
}

#endif // SOAC_CONTRACTION_OPS_TD
