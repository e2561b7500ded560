// Known crash (open): a tensor.from_elements of a static size of 2^62 aborts
// the verifier ("SmallVector unable to grow"). Found by make fuzz (seed 1,
// mutant 3220), plain verification.
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
    %t = tensor.from_elements %v : tensor<4611686018427387904xf32>
