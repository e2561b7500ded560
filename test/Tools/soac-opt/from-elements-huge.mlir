// A tensor.from_elements in the custom form whose static size is more than
// the text can list operands for is refused before MLIR's parser reads it:
// that parser makes one operand type per element first (2^62 aborted
// soac-opt with "SmallVector unable to grow", found by make fuzz, seed 1,
// mutant 3220; 2^31 took 16 GiB and a minute, mutant 2441). The generic
// form parses and its verifier's check is refused by soac's input check
// (verify-input.mlir).
// RUN: not soac-opt %s 2>&1 | FileCheck %s
// RUN: not soac-opt %s --soac-lower-to-cpu 2>&1 | FileCheck %s

// CHECK: from-elements-huge.mlir:[[@LINE+5]]:10: error: 'tensor.from_elements' has a result of 4611686018427387904 elements, more than its text can list operands for: it needs one operand per element
// CHECK-NOT: Stack dump
func.func @scalar_body_building_tensors(%x: tensor<?xf32>, %v: f32) -> tensor<?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%w: f32):
    %t = tensor.from_elements %v : tensor<4611686018427387904xf32>
    %c = arith.constant 0 : index
    %e = tensor.extract %t[%c] : tensor<4611686018427387904xf32>
    soac.yield %e : f32
  }
  return %r : tensor<?xf32>
}
