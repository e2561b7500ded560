// A SOAC body that does not parse is reported, even when values defined in
// it are already used by forward references (found by the IR fuzzer: the
// parser used to abort while discarding the body).
// RUN: soac-opt %s --split-input-file --verify-diagnostics

func.func @redefined_block(%x: tensor<?xf32>) -> tensor<?xf32> {
  %sq = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
    %m = arith.mulf %v, %v : f32
  }
  %r = soac.map ins(%sq : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
  // expected-error @+1 {{redefinition of block '^bb0'}}
  ^bb0(%v: f32):
    soac.yield %v : f32
  }
  return %r : tensor<?xf32>
}

// -----

func.func @truncated_body(%x: tensor<?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %p = soac.map ins(%x, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    %m = arith.mulf %a, %b : f64
    soac.yield %m : f64
  ^bb0(%row: tensor<?xf64>):
  // expected-error @+1 {{redefinition of block '^bb0'}}
  ^bb0(%row: tensor<?xf64>):
  }
  return %p : tensor<?xf64>
}
