// Known crash (open, in MLIR's own verifier of tensor.collapse_shape): a
// negative index in the reassociation aborts on an assertion building its
// affine maps (willBeValidAffineMap) instead of a diagnostic. Found by
// test/fuzz/ir_fuzz.py (seed 1, mutant 301 of test/AutoDiff/vjp.mlir#8).
func.func @flatten(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %x [[-1, 1]] : tensor<?x?xf32> into tensor<?xf32>
}
