// One case per verifier rule of the soac ops.
// RUN: soac-opt %s --split-input-file --verify-diagnostics

//===--- soac.map ---===//

func.func @map_no_inputs() {
  // expected-error @+1 {{'soac.map' op needs at least one input (the outer size comes from the inputs)}}
  "soac.map"() ({
    soac.yield
  }) : () -> ()
  return
}

// -----

func.func @map_rank0_input(%x: tensor<f32>) {
  // expected-error @+1 {{'soac.map' op input #0 must have rank >= 1 to have rows, got 'tensor<f32>'}}
  %r = soac.map ins(%x : tensor<f32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_outer_sizes(%x: tensor<4xf32>, %y: tensor<?xf32>, %z: tensor<5xf32>) {
  // expected-error @+1 {{'soac.map' op input #2 has outer size 5, but input #0 has outer size 4}}
  %r = soac.map ins(%x, %y, %z : tensor<4xf32>, tensor<?xf32>, tensor<5xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_body_arity(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'soac.map' op body must take 2 arguments (one row per input), got 1}}
  %r = soac.map ins(%x, %y : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_body_arg_type(%m: tensor<4x3xf32>) {
  // expected-error @+1 {{'soac.map' op body argument #0 has type 'f32', expected 'tensor<3xf32>'}}
  %r = soac.map ins(%m : tensor<4x3xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_yield_count(%x: tensor<4xf32>) {
  %r = soac.map ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: f32):
    // expected-error @+1 {{'soac.yield' op yields 2 values, but the 'soac.map' has 1 results}}
    soac.yield %a, %a : f32, f32
  }
  return
}

// -----

func.func @map_rank0_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{'soac.map' op result #0 must have rank >= 1, got 'tensor<f32>'}}
  %r = soac.map ins(%x : tensor<4xf32>) -> tensor<f32> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_result_outer(%x: tensor<4xf32>) {
  // expected-error @+1 {{'soac.map' op result #0 has outer size 3, but the inputs have outer size 4}}
  %r = soac.map ins(%x : tensor<4xf32>) -> tensor<3xf32> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @map_result_rows(%x: tensor<4xf32>) {
  // expected-error @+1 {{'soac.map' op result #0 has rows of type 'f64', but yielded value #0 has type 'f32'}}
  %r = soac.map ins(%x : tensor<4xf32>) -> tensor<4xf64> {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @yield_outside_soac() {
  // expected-error @+1 {{'soac.yield' op expects parent op to be one of 'soac.map, soac.reduce, soac.scan, soac.reduce_by_index'}}
  soac.yield
}

//===--- soac.reduce ---===//

// -----

func.func @reduce_init_count(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce' op has 1 input tensors but 2 neutral elements; expected one per input}}
  %r:2 = soac.reduce ins(%x : tensor<?xf32>) init(%z, %z : f32, f32) -> f32, f32 {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
    soac.yield %a, %b : f32, f32
  }
  return
}

// -----

func.func @reduce_init_type(%x: tensor<?xf32>, %z: f64) {
  // expected-error @+1 {{'soac.reduce' op neutral element #0 has type 'f64', but the rows of input #0 have type 'f32'}}
  %r = soac.reduce ins(%x : tensor<?xf32>) init(%z : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    soac.yield %a : f64
  }
  return
}

// -----

func.func @reduce_operator_arity(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce' op operator must take 2 arguments (1 accumulated values, then 1 new values), got 1}}
  %r = soac.reduce ins(%x : tensor<?xf32>) init(%z : f32) -> f32 {
  ^bb0(%a: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @reduce_operator_arg_type(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce' op operator argument #1 has type 'f64', expected 'f32'}}
  %r = soac.reduce ins(%x : tensor<?xf32>) init(%z : f32) -> f32 {
  ^bb0(%a: f32, %b: f64):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @reduce_yield_count(%x: tensor<?xf32>, %z: f32) {
  %r = soac.reduce ins(%x : tensor<?xf32>) init(%z : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    // expected-error @+1 {{'soac.yield' op yields 0 values, but the soac.reduce expects 1 (one per neutral element)}}
    soac.yield
  }
  return
}

// -----

func.func @reduce_yield_type(%x: tensor<?xi32>, %z: i32) {
  %r = soac.reduce ins(%x : tensor<?xi32>) init(%z : i32) -> i32 {
  ^bb0(%a: i32, %b: i32):
    %c = arith.cmpi slt, %a, %b : i32
    // expected-error @+1 {{'soac.yield' op value #0 has type 'i1', expected 'i32'}}
    soac.yield %c : i1
  }
  return
}

// -----

func.func @reduce_result_type(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce' op result #0 has type 'tensor<f32>', but neutral element #0 has type 'f32'}}
  %r = soac.reduce ins(%x : tensor<?xf32>) init(%z : f32) -> tensor<f32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @reduce_result_count(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce' op has 2 results, expected 1 (one per neutral element)}}
  %r:2 = soac.reduce ins(%x : tensor<?xf32>) init(%z : f32) -> f32, f32 {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

//===--- soac.scan ---===//

// -----

func.func @scan_result_count(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.scan' op has 2 results, expected 1 (one per input)}}
  %r:2 = soac.scan ins(%x : tensor<?xf32>) init(%z : f32) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @scan_result_rows(%x: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.scan' op result #0 has rows of type 'tensor<2xf32>', but neutral element #0 has type 'f32'}}
  %r = soac.scan ins(%x : tensor<?xf32>) init(%z : f32) -> tensor<?x2xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @scan_result_outer(%x: tensor<6xf32>, %z: f32) {
  // expected-error @+1 {{'soac.scan' op result #0 has outer size 5, but the inputs have outer size 6}}
  %r = soac.scan ins(%x : tensor<6xf32>) init(%z : f32) -> tensor<5xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

//===--- soac.scatter ---===//

// -----

func.func @scatter_rank0_dest(%d: tensor<f32>, %i: tensor<?xindex>, %v: tensor<?xf32>) {
  // expected-error @+1 {{'soac.scatter' op dest #0 must have rank >= 1 to have rows, got 'tensor<f32>'}}
  %r = soac.scatter dest(%d : tensor<f32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) -> tensor<f32>
  return
}

// -----

func.func @scatter_float_indices(%d: tensor<8xf32>, %i: tensor<?xf32>, %v: tensor<?xf32>) {
  // expected-error @+1 {{'soac.scatter' op indices must be a 1-D tensor of index, i32 or i64, got 'tensor<?xf32>'}}
  %r = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<?xf32>) ins(%v : tensor<?xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @scatter_2d_indices(%d: tensor<8xf32>, %i: tensor<2x2xindex>, %v: tensor<2xf32>) {
  // expected-error @+1 {{'soac.scatter' op indices must be a 1-D tensor of index, i32 or i64, got 'tensor<2x2xindex>'}}
  %r = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<2x2xindex>) ins(%v : tensor<2xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @scatter_value_count(%d: tensor<8xf32>, %i: tensor<3xindex>, %v: tensor<4xf32>) {
  // expected-error @+1 {{'soac.scatter' op value tensors have outer size 4, but there are 3 indices}}
  %r = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<3xindex>) ins(%v : tensor<4xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @scatter_value_rows(%d: tensor<8x2xf32>, %i: tensor<?xindex>, %v: tensor<?x3xf32>) {
  // expected-error @+1 {{'soac.scatter' op rows of value tensor #0 have type 'tensor<3xf32>', but rows of dest #0 have type 'tensor<2xf32>'}}
  %r = soac.scatter dest(%d : tensor<8x2xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?x3xf32>) -> tensor<8x2xf32>
  return
}

// -----

func.func @scatter_result(%d: tensor<8xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>) {
  // expected-error @+1 {{'soac.scatter' op result #0 has type 'tensor<?xf32>', but dest #0 has type 'tensor<8xf32>'}}
  %r = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) -> tensor<?xf32>
  return
}

//===--- soac.reduce_by_index ---===//

// -----

func.func @hist_no_dest(%i: tensor<?xindex>) {
  // expected-error @+1 {{'soac.reduce_by_index' op needs at least one dest}}
  "soac.reduce_by_index"(%i) <{operandSegmentSizes = array<i32: 0, 1, 0, 0>}> ({
    soac.yield
  }) : (tensor<?xindex>) -> ()
  return
}

// -----

func.func @hist_value_count(%h: tensor<10xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce_by_index' op has 1 dests but 2 value tensors; expected one per dest}}
  %r = soac.reduce_by_index dest(%h : tensor<10xf32>) indices(%i : tensor<?xindex>) ins(%v, %v : tensor<?xf32>, tensor<?xf32>) init(%z : f32) -> tensor<10xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @hist_dest_sizes(%h: tensor<10xf32>, %g: tensor<11xi32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %w: tensor<?xi32>, %z: f32, %c: i32) {
  // expected-error @+1 {{'soac.reduce_by_index' op dest #1 has outer size 11, but dest #0 has outer size 10}}
  %r:2 = soac.reduce_by_index dest(%h, %g : tensor<10xf32>, tensor<11xi32>) indices(%i : tensor<?xindex>) ins(%v, %w : tensor<?xf32>, tensor<?xi32>) init(%z, %c : f32, i32) -> tensor<10xf32>, tensor<11xi32> {
  ^bb0(%a: f32, %b: i32, %x: f32, %y: i32):
    soac.yield %a, %b : f32, i32
  }
  return
}

// -----

func.func @hist_value_indices(%h: tensor<10xf32>, %i: tensor<4xindex>, %v: tensor<5xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce_by_index' op value tensors have outer size 5, but there are 4 indices}}
  %r = soac.reduce_by_index dest(%h : tensor<10xf32>) indices(%i : tensor<4xindex>) ins(%v : tensor<5xf32>) init(%z : f32) -> tensor<10xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @hist_value_sizes(%h: tensor<10xf32>, %g: tensor<10xf32>, %i: tensor<?xindex>, %v: tensor<4xf32>, %w: tensor<5xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce_by_index' op value tensor #1 has outer size 5, but value tensor #0 has outer size 4}}
  %r:2 = soac.reduce_by_index dest(%h, %g : tensor<10xf32>, tensor<10xf32>) indices(%i : tensor<?xindex>) ins(%v, %w : tensor<4xf32>, tensor<5xf32>) init(%z, %z : f32, f32) -> tensor<10xf32>, tensor<10xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32):
    soac.yield %a, %b : f32, f32
  }
  return
}

// -----

func.func @hist_init_type(%h: tensor<10xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %z: i32) {
  // expected-error @+1 {{'soac.reduce_by_index' op neutral element #0 has type 'i32', but the rows of dest #0 have type 'f32'}}
  %r = soac.reduce_by_index dest(%h : tensor<10xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) init(%z : i32) -> tensor<10xf32> {
  ^bb0(%a: i32, %b: i32):
    soac.yield %a : i32
  }
  return
}

// -----

func.func @hist_result(%h: tensor<10xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce_by_index' op result #0 has type 'tensor<?xf32>', but dest #0 has type 'tensor<10xf32>'}}
  %r = soac.reduce_by_index dest(%h : tensor<10xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) init(%z : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    soac.yield %a : f32
  }
  return
}

// -----

func.func @hist_operator(%h: tensor<10xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %z: f32) {
  // expected-error @+1 {{'soac.reduce_by_index' op operator must take 2 arguments (1 accumulated values, then 1 new values), got 3}}
  %r = soac.reduce_by_index dest(%h : tensor<10xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) init(%z : f32) -> tensor<10xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    soac.yield %a : f32
  }
  return
}

//===--- soac.iota ---===//

// -----

func.func @iota_rank() {
  // expected-error @+1 {{'soac.iota' op result must be a 1-D tensor, got 'tensor<2x2xindex>'}}
  %r = soac.iota : tensor<2x2xindex>
  return
}

// -----

func.func @iota_element() {
  // expected-error @+1 {{'soac.iota' op element type must be index or a signless integer, got 'f32'}}
  %r = soac.iota : tensor<4xf32>
  return
}

// -----

func.func @iota_missing_size() {
  // expected-error @+1 {{'soac.iota' op needs a size operand for the dynamic size of 'tensor<?xindex>'}}
  %r = soac.iota : tensor<?xindex>
  return
}

// -----

func.func @iota_extra_size(%n: index) {
  // expected-error @+1 {{'soac.iota' op has a size operand, but the size of 'tensor<4xindex>' is static}}
  %r = soac.iota %n : tensor<4xindex>
  return
}

//===--- soac.vjp / soac.jvp ---===//

// -----

func.func @f(%x: f32, %i: index) -> f32 {
  return %x : f32
}

func.func @wrt_order(%x: f32, %i: index, %s: f32) {
  // expected-error @+1 {{'soac.vjp' op wrt must list argument positions in strictly increasing order, but 0 follows 1}}
  %r:3 = soac.vjp @f(%x, %i, %s) wrt [1, 0] : (f32, index, f32) -> (f32, f32, index)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @wrt_negative(%x: f32, %s: f32) {
  // expected-error @+1 {{'soac.jvp' op wrt position -1 is negative}}
  %r:2 = soac.jvp @f(%x, %s) wrt [-1] : (f32, f32) -> (f32, f32)
  return
}

// -----

func.func @missing_callee(%x: f32, %s: f32) {
  // expected-error @+1 {{'soac.vjp' op callee @nowhere does not name a function}}
  %r:2 = soac.vjp @nowhere(%x, %s) : (f32, f32) -> (f32, f32)
  return
}

// -----

memref.global @not_a_function : memref<4xf32>

func.func @callee_not_function(%x: f32, %s: f32) {
  // expected-error @+1 {{'soac.jvp' op callee @not_a_function does not name a function}}
  %r:2 = soac.jvp @not_a_function(%x, %s) : (f32, f32) -> (f32, f32)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @wrt_out_of_range(%x: f32, %s: f32) {
  // expected-error @+1 {{'soac.vjp' op wrt position 1 is out of range: @f has 1 arguments}}
  %r:2 = soac.vjp @f(%x, %s) wrt [1] : (f32, f32) -> (f32, f32)
  return
}

// -----

func.func @f(%x: tensor<?xf32>, %i: tensor<?xindex>) -> f32 {
  %c = arith.constant 0.0 : f32
  return %c : f32
}

func.func @not_differentiable(%x: tensor<?xf32>, %i: tensor<?xindex>, %s: f32) {
  // expected-error @+1 {{'soac.vjp' op cannot differentiate @f with respect to argument #1 of type 'tensor<?xindex>' (not a float or a tensor of floats); choose arguments with `wrt [...]`}}
  %r:3 = soac.vjp @f(%x, %i, %s) : (tensor<?xf32>, tensor<?xindex>, f32) -> (f32, tensor<?xf32>, tensor<?xindex>)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @vjp_missing_cotangent(%x: f32) {
  // expected-error @+1 {{'soac.vjp' op has 1 operands, but differentiating @f needs 2 (its arguments, then one cotangent per result)}}
  %r:2 = soac.vjp @f(%x) : (f32) -> (f32, f32)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @vjp_cotangent_type(%x: f32, %s: f64) {
  // expected-error @+1 {{'soac.vjp' op operand #1 has type 'f64', but @f implies 'f32' for the cotangent of result #0}}
  %r:2 = soac.vjp @f(%x, %s) : (f32, f64) -> (f32, f32)
  return
}

// -----

func.func @f(%x: f32, %y: tensor<3xf32>) -> f32 {
  return %x : f32
}

func.func @vjp_gradient_type(%x: f32, %y: tensor<3xf32>, %s: f32) {
  // expected-error @+1 {{'soac.vjp' op result #2 has type 'tensor<?xf32>', but @f implies 'tensor<3xf32>' for the gradient of argument #1}}
  %r:3 = soac.vjp @f(%x, %y, %s) : (f32, tensor<3xf32>, f32) -> (f32, f32, tensor<?xf32>)
  return
}

// -----

func.func @f(%x: f32, %y: tensor<3xf32>) -> f32 {
  return %x : f32
}

func.func @jvp_tangent_type(%x: f32, %y: tensor<3xf32>, %t: f32) {
  // expected-error @+1 {{'soac.jvp' op operand #2 has type 'f32', but @f implies 'tensor<3xf32>' for the tangent of argument #1}}
  %r:2 = soac.jvp @f(%x, %y, %t) wrt [1] : (f32, tensor<3xf32>, f32) -> (f32, f32)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @jvp_result_count(%x: f32, %t: f32) {
  // expected-error @+1 {{'soac.jvp' op has 1 results, but differentiating @f needs 2 (its results, then one tangent per result)}}
  %r = soac.jvp @f(%x, %t) : (f32, f32) -> f32
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @jvp_width_lanes(%x: f32, %t: f32) {
  // expected-error @+1 {{'soac.jvp' op has 2 operands, but differentiating @f needs 3 (its arguments, then 2 tangents per differentiated argument)}}
  %r:3 = soac.jvp @f(%x, %t) width 2 : (f32, f32) -> (f32, f32, f32)
  return
}

// -----

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @jvp_width_positive(%x: f32, %t: f32) {
  // expected-error @+1 {{'soac.jvp' op attribute 'width' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r:2 = soac.jvp @f(%x, %t) width 0 : (f32, f32) -> (f32, f32)
  return
}

// -----

func.func @f(%x: f32) -> (f32, f32) {
  return %x, %x : f32, f32
}

func.func @vjp_width_lanes(%x: f32, %c: f32) {
  // expected-error @+1 {{'soac.vjp' op has 3 operands, but differentiating @f needs 5 (its arguments, then 2 cotangents per result)}}
  %r:4 = soac.vjp @f(%x, %c, %c) width 2 : (f32, f32, f32) -> (f32, f32, f32, f32)
  return
}

// -----

func.func @scale(%x: f64, %w: f64) -> f64 {
  %y = arith.mulf %x, %w : f64
  return %y : f64
}
func.func @too_wide(%x: f64, %w: f64, %t0: f64, %t1: f64) -> (f64, f64, f64) {
  // expected-error @+1 {{has width 2147483648, more lanes than its 7 operands and results can hold}}
  %r:3 = soac.jvp @scale(%x, %w, %t0, %t1) wrt [0] width 2147483648 : (f64, f64, f64, f64) -> (f64, f64, f64)
  return %r#0, %r#1, %r#2 : f64, f64, f64
}

// -----

func.func @check_values_missing(%ok: i1, %n: index) {
  // expected-error @+1 {{'soac.check' op message shows 2 values ('%lld'), but the op has 1}}
  soac.check %ok, "size %lld, expected %lld" with %n : index
  return
}

// -----

func.func @check_other_conversion(%ok: i1, %n: index) {
  // expected-error @+1 {{'soac.check' op message has a '%' at 5 that is neither '%lld' nor '%%'}}
  soac.check %ok, "size %d" with %n : index
  return
}

// -----

func.func @check_three_values(%ok: i1, %n: index) {
  // expected-error @+1 {{'soac.check' op shows 3 values; at most 2 are supported}}
  soac.check %ok, "%lld %lld %lld" with %n, %n, %n : index, index, index
  return
}
