// RUN: soac-opt %s --soac-fuse-gathers --split-input-file --verify-diagnostics
// soac-fuse-gathers has no failure of its own (it leaves what it cannot
// fuse, see fuse-gathers.mlir); a gathered map whose inputs' sizes differ,
// whose elements it would read from its inputs, is rejected before it runs.

func.func @inputs_of_other_sizes(%a: tensor<4xf64>, %b: tensor<5xf64>, %j: index) -> f64 {
  // expected-error @+1 {{'soac.map' op input #1 has outer size 5, but input #0 has outer size 4}}
  %x = soac.map ins(%a, %b : tensor<4xf64>, tensor<5xf64>) -> tensor<4xf64> {
  ^bb0(%u: f64, %v: f64):
    %p = arith.mulf %u, %v : f64
    soac.yield %p : f64
  }
  %e = tensor.extract %x[%j] : tensor<4xf64>
  return %e : f64
}
