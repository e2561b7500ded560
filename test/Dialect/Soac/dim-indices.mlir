// A tensor.dim at a constant index past the rank of its source: upstream
// leaves it valid (undefined when it runs), but bufferization asserts on it
// and the GPU lowering would read past the source's shape; soac rejects it
// in SOAC bodies (their verifiers) and before lowering.
// RUN: soac-opt %s --split-input-file --verify-diagnostics
// RUN: soac-opt %s --split-input-file --verify-diagnostics --convert-soac-to-loops | FileCheck %s

func.func @in_a_map(%x: tensor<?x?xf32>) -> tensor<?xindex> {
  %c2 = arith.constant 2 : index
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?xindex> {
  ^bb0(%row: tensor<?xf32>):
    // expected-error @+1 {{index 2 is out of range for its source of type 'tensor<?xf32>': expected an index below its rank, 1}}
    %d = tensor.dim %row, %c2 : tensor<?xf32>
    soac.yield %d : index
  }
  return %r : tensor<?xindex>
}

// -----

// CHECK-LABEL: func.func @in_range
// CHECK: tensor.dim
func.func @in_range(%x: tensor<?x?xf32>) -> tensor<?xindex> {
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?xindex> {
  ^bb0(%row: tensor<?xf32>):
    %d = tensor.dim %row, %c0 : tensor<?xf32>
    soac.yield %d : index
  }
  return %r : tensor<?xindex>
}
