// RUN: soac-opt %s --convert-soac-to-gpu=fold-blocks=0 -verify-diagnostics

// Reduces and scans need at least one block to fold their rows.
func.func @sum(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'soac.reduce' op needs blocks to fold its rows: convert-soac-to-gpu's fold-blocks must be at least 1, not 0}}
  %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}
