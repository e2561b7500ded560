// RUN: soac-opt %s --soac-autodiff --split-input-file --verify-diagnostics

func.func @f(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    // expected-error @+1 {{'math.atan2' op has no reverse-mode derivative rule (soac-autodiff)}}
    %t = math.atan2 %a, %a : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}
func.func @g(%x: tensor<?xf64>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @f(%x, %c) : (tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// Rows combined by an operator that is not elementwise (each element is
// scaled by the accumulator's first one).
func.func @row_scaled(%m: tensor<?x3xf64>, %init: tensor<3xf64>) -> tensor<3xf64> {
  // expected-error @+1 {{'soac.reduce' op has a general operator on tensor rows or reading differentiated values from outside: its reverse-mode rule is not implemented yet}}
  %r = soac.reduce ins(%m : tensor<?x3xf64>) init(%init : tensor<3xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %c0 = arith.constant 0 : index
    %s = tensor.extract %a[%c0] : tensor<3xf64>
    %c = soac.map ins(%a, %b : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.mulf %x, %y : f64
      %u = arith.mulf %t, %s : f64
      soac.yield %u : f64
    }
    soac.yield %c : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func @g(%m: tensor<?x3xf64>, %init: tensor<3xf64>, %c: tensor<3xf64>) -> tensor<?x3xf64> {
  %r:2 = soac.vjp @row_scaled(%m, %init, %c) wrt [0] : (tensor<?x3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<?x3xf64>)
  return %r#1 : tensor<?x3xf64>
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated: it is a declaration without a body}}
func.func private @external(f64) -> f64

func.func @g(%x: f64, %s: f64) -> f64 {
  %r:2 = soac.vjp @external(%x, %s) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

func.func @f(%x: f64) -> f64 {
  // expected-error @+1 {{'math.atan2' op has no forward-mode derivative rule (soac-autodiff)}}
  %r = math.atan2 %x, %x : f64
  return %r : f64
}

func.func @g(%x: f64, %t: f64) -> f64 {
  %r:2 = soac.jvp @f(%x, %t) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// expected-error @+1 {{'func.func' op cannot be differentiated: it is a declaration without a body}}
func.func private @external(f64) -> f64

func.func @g(%x: f64, %t: f64) -> f64 {
  %r:2 = soac.jvp @external(%x, %t) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

func.func @row_scaled(%m: tensor<?x2xf64>, %init: tensor<2xf64>) -> tensor<?x2xf64> {
  // expected-error @+1 {{'soac.scan' op has an operator whose reverse-mode rule is not implemented yet: supported are + (any rows, per component), operators applied elementwise to tensor rows, and any associative operator on scalars}}
  %r = soac.scan ins(%m : tensor<?x2xf64>) init(%init : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %c0 = arith.constant 0 : index
    %s = tensor.extract %a[%c0] : tensor<2xf64>
    %c = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.maximumf %x, %y : f64
      %u = arith.mulf %t, %s : f64
      soac.yield %u : f64
    }
    soac.yield %c : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}
func.func @g(%m: tensor<?x2xf64>, %init: tensor<2xf64>, %c: tensor<?x2xf64>) -> tensor<?x2xf64> {
  %r:2 = soac.vjp @row_scaled(%m, %init, %c) wrt [0] : (tensor<?x2xf64>, tensor<2xf64>, tensor<?x2xf64>) -> (tensor<?x2xf64>, tensor<?x2xf64>)
  return %r#1 : tensor<?x2xf64>
}

// -----

func.func @bins_scaled(%d: tensor<?x2xf64>, %idx: tensor<?xindex>, %v: tensor<?x2xf64>, %init: tensor<2xf64>) -> tensor<?x2xf64> {
  // expected-error @+1 {{'soac.reduce_by_index' op has an operator whose reverse-mode rule is not implemented: supported are + (any rows, per component), operators applied elementwise to tensor rows, and any associative operator on scalars that reads no differentiated value from outside}}
  %r = soac.reduce_by_index dest(%d : tensor<?x2xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?x2xf64>) init(%init : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %c0 = arith.constant 0 : index
    %s = tensor.extract %a[%c0] : tensor<2xf64>
    %c = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.mulf %x, %y : f64
      %u = arith.mulf %t, %s : f64
      soac.yield %u : f64
    }
    soac.yield %c : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}
func.func @g(%d: tensor<?x2xf64>, %idx: tensor<?xindex>, %v: tensor<?x2xf64>, %init: tensor<2xf64>, %c: tensor<?x2xf64>) -> tensor<?x2xf64> {
  %r:2 = soac.vjp @bins_scaled(%d, %idx, %v, %init, %c) wrt [2] : (tensor<?x2xf64>, tensor<?xindex>, tensor<?x2xf64>, tensor<2xf64>, tensor<?x2xf64>) -> (tensor<?x2xf64>, tensor<?x2xf64>)
  return %r#1 : tensor<?x2xf64>
}

// -----

// A scalar operator reading a differentiated value from outside.
func.func @bins_weighted(%d: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %w: f64) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  // expected-error @+1 {{'soac.reduce_by_index' op has an operator whose reverse-mode rule is not implemented}}
  %r = soac.reduce_by_index dest(%d : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.mulf %b, %w : f64
    %s = arith.addf %a, %t : f64
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
func.func @g(%d: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %w: f64, %c: tensor<?xf64>) -> f64 {
  %r:2 = soac.vjp @bins_weighted(%d, %idx, %v, %w, %c) wrt [3] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, f64, tensor<?xf64>) -> (tensor<?xf64>, f64)
  return %r#1 : f64
}

// -----

func.func @rows(%m: tensor<?x3xf64>) -> tensor<?x3xf64> {
  // expected-error @+1 {{'soac.map' op cannot be differentiated in mixed mode: its body must map scalars to scalars and read no active tensor from outside}}
  %r = soac.map ins(%m : tensor<?x3xf64>) -> tensor<?x3xf64> {
  ^bb0(%row: tensor<3xf64>):
    soac.yield %row : tensor<3xf64>
  } {soac.mixed_mode = true}
  return %r : tensor<?x3xf64>
}

func.func @rows_gradient(%m: tensor<?x3xf64>, %bar: tensor<?x3xf64>) -> tensor<?x3xf64> {
  %r:2 = soac.vjp @rows(%m, %bar) : (tensor<?x3xf64>, tensor<?x3xf64>) -> (tensor<?x3xf64>, tensor<?x3xf64>)
  return %r#1 : tensor<?x3xf64>
}

// -----

// expected-error @+1 {{'func.func' op names @square_vjp as its soac.custom_vjp, of type '(f64) -> f64', but it must be '(f64, f64) -> (f64, f64)' (its arguments and one cotangent per result, to its results and one gradient per float argument)}}
func.func @square(%x: f64) -> f64 attributes {soac.custom_vjp = @square_vjp} {
  %y = arith.mulf %x, %x : f64
  return %y : f64
}

func.func @square_vjp(%x: f64) -> f64 {
  return %x : f64
}

func.func @g(%x: f64, %s: f64) -> f64 {
  %r:2 = soac.vjp @square(%x, %s) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// expected-error @+1 {{'func.func' op names @missing as its soac.custom_jvp, which is not a func.func}}
func.func @square(%x: f64) -> f64 attributes {soac.custom_jvp = @missing} {
  %y = arith.mulf %x, %x : f64
  return %y : f64
}

func.func @g(%x: f64, %t: f64) -> f64 {
  %r:2 = soac.jvp @square(%x, %t) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}
