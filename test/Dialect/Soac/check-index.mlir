// soac.check_index: round trip, and folding of checks that hold.
// RUN: soac-opt %s --split-input-file | soac-opt | FileCheck %s --check-prefix=ROUND
// RUN: soac-opt %s --canonicalize --loop-invariant-code-motion --split-input-file | FileCheck %s

// ROUND-LABEL: func.func @round_trip
// ROUND: soac.check_index %{{.*}} below %{{.*}}, "'tensor.extract' dimension 0"
// CHECK-LABEL: func.func @round_trip
// CHECK: soac.check_index
func.func @round_trip(%i: index, %n: index) -> index {
  %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
  return %j : index
}

// -----

// A constant index below a constant size is the index; one past it stays,
// to fail when it runs; an unused check is dead, like the access it guarded.
// CHECK-LABEL: func.func @folds
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: %[[FAILS:.*]] = soac.check_index %[[C5]] below %[[C5]]
// CHECK-NOT: soac.check_index
// CHECK: return %[[C2]], %[[FAILS]]
func.func @folds(%i: index, %n: index) -> (index, index) {
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %holds = soac.check_index %c2 below %c5, "holds"
  %fails = soac.check_index %c5 below %c5, "fails"
  %unused = soac.check_index %i below %n, "unused"
  return %holds, %fails : index, index
}

// -----

// Never hoisted out of a loop that may run zero times.
// CHECK-LABEL: func.func @not_hoisted
// CHECK: scf.for
// CHECK-NEXT: soac.check_index
func.func @not_hoisted(%x: tensor<?xf32>, %i: index, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    %v = tensor.extract %x[%j] : tensor<?xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  return %r : f32
}

// -----

// A check made before (in this block, or in one around it) of the same index
// against the same size is the later check's result; one that does not
// always run first (in a branch), or against another size, is not.
// CHECK-LABEL: func.func @checked_before
// CHECK-SAME: (%[[I:.*]]: index, %[[N:.*]]: index, %[[M:.*]]: index, %[[C:.*]]: i1)
// CHECK: %[[FIRST:.*]] = soac.check_index %[[I]] below %[[N]], "first"
// CHECK: scf.if %[[C]]
// CHECK: %[[BRANCH:.*]] = soac.check_index %[[I]] below %[[M]], "in a branch"
// CHECK: arith.addi %[[FIRST]], %[[BRANCH]]
// CHECK: %[[AFTER:.*]] = soac.check_index %[[I]] below %[[M]], "after a branch"
// CHECK-NOT: soac.check_index
// CHECK: return %[[FIRST]], %{{.*}}, %[[AFTER]], %[[AFTER]], %[[FIRST]]
func.func @checked_before(%i: index, %n: index, %m: index, %c: i1) -> (index, index, index, index, index) {
  %first = soac.check_index %i below %n, "first"
  %again = soac.check_index %i below %n, "again"
  %branch = scf.if %c -> (index) {
    %nested = soac.check_index %i below %n, "nested"
    %b = soac.check_index %i below %m, "in a branch"
    %sum = arith.addi %nested, %b : index
    scf.yield %sum : index
  } else {
    scf.yield %i : index
  }
  %after = soac.check_index %i below %m, "after a branch"
  %later = soac.check_index %i below %m, "later"
  return %again, %branch, %after, %later, %first : index, index, index, index, index
}
