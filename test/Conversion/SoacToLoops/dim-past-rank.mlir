// A tensor.dim at a constant index past the rank outside any SOAC: the
// lowerings say so at the op instead of letting bufferization assert.
// RUN: soac-opt %s --convert-soac-to-loops --verify-diagnostics
// RUN: soac-opt %s --convert-soac-to-gpu --verify-diagnostics

func.func @at_function_level(%x: tensor<?xf32>) -> index {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{index 1 is out of range for its source of type 'tensor<?xf32>': expected an index below its rank, 1}}
  %d = tensor.dim %x, %c1 : tensor<?xf32>
  return %d : index
}
