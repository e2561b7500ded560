// RUN: soac-opt %s --soac-copies-to-loops --split-input-file --verify-diagnostics
// soac-copies-to-loops has no failure of its own (copies it does not
// handle stay); a copy between buffers of different element types is
// rejected by the verifier before it runs.

func.func @element_types_differ(%a: memref<?xf32>, %b: memref<?xf64>) {
  // expected-error @+1 {{'memref.copy' op requires the same element type for all operands}}
  memref.copy %a, %b : memref<?xf32> to memref<?xf64>
  return
}
