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

// A loop-carried stack that nothing after the loop reads, and that the body
// only uses to build its own next value, is carried unchanged (reverse mode
// stacks every carried value for the reverse sweep, also ones it never
// reads); canonicalization then drops it. The stack the loop returns, and
// one another carried value reads, stay.
// CHECK-LABEL: func.func @dead_stack
// CHECK: scf.for {{.*}} iter_args(%[[TOTAL:.*]] = %{{.*}}, %[[DEAD:.*]] = %{{.*}}, %[[KEPT:.*]] = %{{.*}}, %[[READ:.*]] = %{{.*}}, %[[SUM:.*]] = %{{.*}})
// CHECK-NOT: tensor.insert %[[TOTAL]] into %[[DEAD]]
// CHECK: tensor.insert %[[TOTAL]] into %[[KEPT]]
// CHECK: %[[STACKED:.*]] = tensor.insert %[[TOTAL]] into %[[READ]]
// CHECK: tensor.extract %[[STACKED]]
// CHECK: scf.yield %{{.*}}, %[[DEAD]], %{{.*}}, %[[STACKED]], %{{.*}}
func.func @dead_stack(%x: f64, %n: index, %s: tensor<?xf64>) -> (f64, tensor<?xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r:5 = scf.for %t = %c0 to %n step %c1 iter_args(%total = %zero, %dead = %s, %kept = %s, %read = %s, %sum = %zero) -> (f64, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, f64) {
    %d = tensor.insert %total into %dead[%t] : tensor<?xf64>
    %k = tensor.insert %total into %kept[%t] : tensor<?xf64>
    %q = tensor.insert %total into %read[%t] : tensor<?xf64>
    %e = tensor.extract %q[%c0] : tensor<?xf64>
    %next = arith.addf %total, %x : f64
    %sum2 = arith.addf %sum, %e : f64
    scf.yield %next, %d, %k, %q, %sum2 : f64, tensor<?xf64>, tensor<?xf64>, tensor<?xf64>, f64
  }
  return %r#0, %r#2, %r#4 : f64, tensor<?xf64>, f64
}
