// SOACs have no side effects of their own: canonicalize drops unused ones and
// CSE merges identical ones, bodies included.
// RUN: soac-opt %s --canonicalize | FileCheck %s --check-prefix=DCE
// RUN: soac-opt %s --cse | FileCheck %s --check-prefix=CSE

// DCE-LABEL: func.func @unused_soacs
// DCE-NOT: soac.
// DCE: return %arg0
func.func @unused_soacs(%x: tensor<?xf32>, %i: tensor<?xindex>, %d: tensor<8xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %m = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r = soac.reduce ins(%m : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  %c = soac.scan ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  %w = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%x : tensor<?xf32>) -> tensor<8xf32>
  %h = soac.reduce_by_index dest(%d : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  %n = soac.iota : tensor<8xindex>
  return %x : tensor<?xf32>
}

func.func @square(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}

// DCE-LABEL: func.func @unused_derivatives
// DCE-NOT: soac.
// DCE: return
func.func @unused_derivatives(%x: f32, %s: f32) {
  %g:2 = soac.vjp @square(%x, %s) : (f32, f32) -> (f32, f32)
  %t:2 = soac.jvp @square(%x, %s) : (f32, f32) -> (f32, f32)
  return
}

// A map whose result is used stays.
// DCE-LABEL: func.func @used_map
// DCE: soac.map
func.func @used_map(%x: tensor<?xf32>) -> tensor<?xf32> {
  %m = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  return %m : tensor<?xf32>
}

// CSE-LABEL: func.func @duplicate_soacs
// CSE: %[[M:.*]] = soac.map
// CSE-NOT: soac.map
// CSE: %[[R:.*]] = soac.reduce ins(%[[M]]
// CSE-NOT: soac.reduce
// CSE: return %[[M]], %[[M]], %[[R]], %[[R]]
func.func @duplicate_soacs(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, f32, f32) {
  %zero = arith.constant 0.0 : f32
  %m1 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %m2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r1 = soac.reduce ins(%m1 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  %r2 = soac.reduce ins(%m2 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %m1, %m2, %r1, %r2 : tensor<?xf32>, tensor<?xf32>, f32, f32
}

// Different bodies are not merged.
// CSE-LABEL: func.func @different_bodies
// CSE: soac.map
// CSE: soac.map
func.func @different_bodies(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %m1 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %m2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.log %a : f32
    soac.yield %e : f32
  }
  return %m1, %m2 : tensor<?xf32>, tensor<?xf32>
}
