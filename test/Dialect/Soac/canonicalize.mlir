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

// canonicalize shrinks maps: unused results and unread inputs go, a result
// that yields an input's row unchanged is that input, and an input read only
// for its size is taken from upstream so that its producer may die.
// DCE-LABEL: func.func @shrink_maps
// DCE-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf32>, %[[S:.*]]: f32)
// DCE: %[[M:.*]] = soac.map ins(%[[Y]] : tensor<?xf32>) -> tensor<?xf32> {
// DCE-NEXT: ^bb0(%[[B:.*]]: f32):
// DCE-NEXT: %[[E:.*]] = math.exp %[[B]]
// DCE-NEXT: soac.yield %[[E]] : f32
// DCE: %[[R:.*]] = soac.map ins(%[[X]] : tensor<?xf32>) -> tensor<?xf32> {
// DCE-NEXT: ^bb0(%{{.*}}: f32):
// DCE-NEXT: soac.yield %[[S]] : f32
// DCE: return %[[M]], %[[X]], %[[R]]
func.func @shrink_maps(%x: tensor<?xf32>, %y: tensor<?xf32>, %s: f32) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %m:3 = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32>, tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %b : f32
    %l = math.log %b : f32
    soac.yield %e, %a, %l : f32, f32, f32
  }
  %sq = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %p = arith.mulf %a, %a : f32
    soac.yield %p : f32
  }
  %rep = soac.map ins(%sq : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%unused: f32):
    soac.yield %s : f32
  }
  return %m#0, %m#1, %rep : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// A map yielding the same row twice has one result for both readers.
// DCE-LABEL: func.func @same_row_twice
// DCE: %[[M:.*]]:2 = soac.map
// DCE: soac.yield %{{.*}}, %{{.*}} : f32, f32
// DCE: return %[[M]]#0, %[[M]]#1, %[[M]]#0
func.func @same_row_twice(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %m:3 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32>, tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    %l = math.log %a : f32
    soac.yield %e, %l, %e : f32, f32, f32
  }
  return %m#0, %m#1, %m#2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// A histogram from zeros added to a tensor becomes the histogram
// accumulated into that tensor; chains of them (a gradient's one histogram
// per gather) accumulate into one destination. A histogram whose operator
// differs from the map's, or from a non-neutral start, stays.
// DCE-LABEL: func.func @sum_of_histograms
// DCE: %[[FIRST:.*]] = soac.reduce_by_index dest(%arg0 : tensor<8xf32>) indices(%arg1 : tensor<?xindex>) ins(%arg2 : tensor<?xf32>)
// DCE: arith.addf
// DCE: %[[SECOND:.*]] = soac.reduce_by_index dest(%[[FIRST]] : tensor<8xf32>) indices(%arg3 : tensor<?xindex>) ins(%arg4 : tensor<?xf32>)
// DCE-NOT: soac.map
// DCE: %[[MAX:.*]] = soac.reduce_by_index dest(%{{.*}} : tensor<8xf32>) indices(%arg1
// DCE: arith.maximumf
// DCE: %[[ADDED:.*]] = soac.map ins(%[[MAX]], %[[SECOND]]
// DCE: return %[[SECOND]], %[[ADDED]]
func.func @sum_of_histograms(%x: tensor<8xf32>, %i: tensor<?xindex>, %a: tensor<?xf32>, %j: tensor<?xindex>, %b: tensor<?xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %zeros = tensor.splat %zero : tensor<8xf32>
  %ha = soac.reduce_by_index dest(%zeros : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%a : tensor<?xf32>) init(%zero : f32) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    soac.yield %s : f32
  }
  %hb = soac.reduce_by_index dest(%zeros : tensor<8xf32>) indices(%j : tensor<?xindex>) ins(%b : tensor<?xf32>) init(%zero : f32) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    soac.yield %s : f32
  }
  %xa = soac.map ins(%x, %ha : tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    soac.yield %s : f32
  }
  %xab = soac.map ins(%hb, %xa : tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %q, %p : f32
    soac.yield %s : f32
  }
  %hmax = soac.reduce_by_index dest(%zeros : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%a : tensor<?xf32>) init(%zero : f32) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.maximumf %p, %q : f32
    soac.yield %m : f32
  }
  %added = soac.map ins(%hmax, %xab : tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    soac.yield %s : f32
  }
  return %xab, %added : tensor<8xf32>, tensor<8xf32>
}
