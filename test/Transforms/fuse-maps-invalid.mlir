// RUN: soac-opt %s --soac-fuse-maps --split-input-file --verify-diagnostics
// soac-fuse-maps has no failure of its own (it skips what it cannot fuse,
// see fuse-maps.mlir); inconsistent SOACs it would fuse are rejected where
// they are, before it runs.

func.func @sibling_reads_other_size(%x: tensor<4xf32>, %y: tensor<5xf32>, %zero: f32) -> (f32, tensor<4xf32>) {
  %m:2 = soac.map ins(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%v: f32):
    soac.yield %v, %v : f32, f32
  }
  %s = soac.reduce ins(%m#0 : tensor<4xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  // expected-error @+1 {{'soac.map' op input #1 has outer size 5, but input #0 has outer size 4}}
  %t = soac.map ins(%m#1, %y : tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s, %t : f32, tensor<4xf32>
}

// -----

func.func @operator_arity(%x: tensor<4xf32>, %zero: f32) -> f32 {
  %m:2 = soac.map ins(%x : tensor<4xf32>) -> tensor<4xf32>, tensor<4xf32> {
  ^bb0(%v: f32):
    soac.yield %v, %v : f32, f32
  }
  // expected-error @+1 {{'soac.reduce' op}}
  %s = soac.reduce ins(%m#0 : tensor<4xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  %t = soac.reduce ins(%m#1 : tensor<4xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}
