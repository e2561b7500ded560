// Known crash (open): a map over 2^31 rows of a static size, lowered for the
// GPU with one block per row, gives a grid that MLIR's gpu-to-nvvm lowering
// asserts on (ConstantRangeAttr of the block id, beyond the GPU's limit of
// 2^31 - 1 blocks) instead of a diagnostic. Found by make fuzz (seed 7,
// mutant 1912 of test/Dialect/Soac/dim-indices.mlir), soac-lower-to-nvvm.
func.func @in_range(%x: tensor<2147483648x?xf32>) -> tensor<?xindex> {
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%x : tensor<2147483648x?xf32>) -> tensor<?xindex> {
  ^bb0(%row: tensor<?xf32>):
    %d = tensor.dim %row, %c0 : tensor<?xf32>
    soac.yield %d : index
  }
  return %r : tensor<?xindex>
}
