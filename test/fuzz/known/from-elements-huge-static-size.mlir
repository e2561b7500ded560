// Known crash (open, in MLIR's parser): a tensor.from_elements of a static
// size of 2^62 aborts ("SmallVector unable to grow"); of 2^31 it takes 16 GiB
// and half a minute. Its custom syntax infers one operand type per element
// (TypesMatchWith in TensorOps.td: FromElementsOp::parse builds
// SmallVector<Type>(getNumElements(), ...)) before the op exists, so soac
// cannot check it first; in the generic form the verifier's copy of that
// vector is refused by soac's input check (test/Tools/soac-opt/verify-input.mlir).
// Found by make fuzz (seed 1, mutant 3220).
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
    %t = tensor.from_elements %v : tensor<4611686018427387904xf32>
