// soac-opt parses with verification off and verifies the input itself
// (passes/Utils/VerifyInput.h): what MLIR 22's verifiers would abort on is
// an error at the op. Each case aborted soac-opt before (the first was found
// by test/fuzz/ir_fuzz.py: seed 1, mutant 301 of test/AutoDiff/vjp.mlir#8).
// RUN: soac-opt %s --split-input-file --verify-diagnostics
// RUN: soac-opt %s --split-input-file --verify-diagnostics --soac-lower-to-cpu

func.func @collapse_negative_index(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op has index -1 in reassociation group 0, outside the 2 dimensions of its expanded type 'tensor<?x?xf32>'}}
  %f = tensor.collapse_shape %x [[-1, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

func.func @collapse_index_wrapping(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op has index 4294967295 in reassociation group 0, outside the 2 dimensions}}
  %f = tensor.collapse_shape %x [[0, 4294967295]] : tensor<?x?xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

func.func @expand_negative_index(%x: tensor<?xf32>, %a: index) -> tensor<?x?xf32> {
  // expected-error @+1 {{'tensor.expand_shape' op has index -1 in reassociation group 0, outside the 2 dimensions of its expanded type 'tensor<?x?xf32>'}}
  %e = tensor.expand_shape %x [[-1, 1]] output_shape [%a, %a] : tensor<?xf32> into tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}

// -----

// In the generic form (the custom one aborts in MLIR's parser, before any
// op exists, so soac refuses that text before parsing: from-elements-huge.mlir).
func.func @from_elements_huge(%v: f32) -> tensor<4611686018427387904xf32> {
  // expected-error @+1 {{'tensor.from_elements' op has 1 elements, but its type 'tensor<4611686018427387904xf32>' holds 4611686018427387904}}
  %t = "tensor.from_elements"(%v) : (f32) -> tensor<4611686018427387904xf32>
  return %t : tensor<4611686018427387904xf32>
}

// -----

// Valid input is verified as before: the verifier's own errors stay.
func.func @collapse_out_of_order(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op expected reassociation map #0 to be valid and contiguous}}
  %f = tensor.collapse_shape %x [[1, 0]] : tensor<?x?xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

// Found by the IR fuzzer in test_fuzz.py (mutant 433 of
// test/Transforms/check-sizes.mlir): the concat verifier indexed the sizes
// of its result by the dimension.
func.func @concat_dimension_outside(%x: tensor<?x?xf32>, %y: tensor<?x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{'tensor.concat' op concatenates along dimension -9223372036854775807, outside the 2 dimensions of its result type 'tensor<6x3xf32>'}}
  %r = tensor.concat dim(-9223372036854775807) %x, %y : (tensor<?x?xf32>, tensor<?x3xf32>) -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}
