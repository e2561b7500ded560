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
