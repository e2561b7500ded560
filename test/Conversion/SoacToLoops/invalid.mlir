// RUN: soac-opt %s --convert-soac-to-loops --split-input-file --verify-diagnostics

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @unexpanded_vjp(%x: f32, %s: f32) -> f32 {
  // expected-error @+1 {{'soac.vjp' op must be expanded by the soac-autodiff pass before lowering to loops}}
  %r:2 = soac.vjp @f(%x, %s) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @unexpanded_jvp(%x: f32, %t: f32) -> f32 {
  // expected-error @+1 {{'soac.jvp' op must be expanded by the soac-autodiff pass before lowering to loops}}
  %r:2 = soac.jvp @f(%x, %t) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}

// -----

func.func @narrow_integers(%x: tensor<?xi4>) -> tensor<?xi4> {
  // expected-error @+1 {{'soac.map' op uses 'tensor<?xi4>': tensors of integers narrower than 8 bits (other than i1) are not supported by the CPU lowering}}
  %r = soac.map ins(%x : tensor<?xi4>) -> tensor<?xi4> {
  ^bb0(%a: i4):
    soac.yield %a : i4
  }
  return %r : tensor<?xi4>
}
