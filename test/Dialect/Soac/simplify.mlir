// soac-simplify: maps shrink and dead code goes (SOACs included).
// RUN: soac-opt %s --soac-simplify | FileCheck %s

// CHECK-LABEL: func.func @shrink
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[Y:.*]]: tensor<?xf32>, %[[S:.*]]: f32)
// CHECK-NOT: arith.addf %[[S]], %[[S]]
// CHECK: %[[M:.*]] = soac.map ins(%[[Y]] : tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NOT: soac.reduce
// CHECK: return %[[M]], %[[X]]
func.func @shrink(%x: tensor<?xf32>, %y: tensor<?xf32>, %s: f32) -> (tensor<?xf32>, tensor<?xf32>) {
  %dead = arith.addf %s, %s : f32
  %zero = arith.constant 0.0 : f32
  %m:3 = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32>, tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %e = math.exp %b : f32
    %l = math.log %b : f32
    soac.yield %e, %a, %l : f32, f32, f32
  }
  %unused = soac.reduce ins(%m#2 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    soac.yield %t : f32
  }
  return %m#0, %m#1 : tensor<?xf32>, tensor<?xf32>
}

// A map yielding the same value for every row (defined outside its body):
// its readers read that value, and the map goes. One computing its rows stays.
// CHECK-LABEL: func.func @invariant_rows
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[S:.*]]: f32)
// CHECK: %[[E:.*]] = soac.map ins(%[[X]] : tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[R:.*]] = soac.map ins(%[[X]], %[[E]] : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[S]] : f32
// CHECK-NEXT: %[[Q:.*]] = arith.addf %[[P]], %[[B]] : f32
// CHECK-NEXT: soac.yield %[[Q]] : f32
// CHECK: return %[[R]]
func.func @invariant_rows(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %seeds = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    soac.yield %s : f32
  }
  %computed = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r = soac.map ins(%x, %seeds, %computed : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %p, %c : f32
    soac.yield %q : f32
  }
  return %r : tensor<?xf32>
}
