// soac.check: round trip, the erasure of checks that hold, and its message
// rules.
// RUN: soac-opt %s --split-input-file | soac-opt --split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: soac-opt %s --canonicalize --loop-invariant-code-motion --split-input-file | FileCheck %s

// ROUND-LABEL: func.func @round_trip
// ROUND: soac.check %{{.*}}, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %{{.*}}, %{{.*}} : index, index
// ROUND: soac.check %{{.*}}, "100%% sure"
// CHECK-LABEL: func.func @round_trip
// CHECK-COUNT-2: soac.check
func.func @round_trip(%n: index, %ok: i1) {
  %c4 = arith.constant 4 : index
  %same = arith.cmpi eq, %n, %c4 : index
  soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index
  soac.check %ok, "100%% sure"
  return
}

// -----

// A check of a condition that holds is erased; one that fails stays, to
// fail when it runs; an unused one stays too (it has an effect: stopping).
// CHECK-LABEL: func.func @folds
// CHECK-NOT: "holds"
// CHECK: soac.check %false, "fails"
// CHECK: soac.check %{{.*}}, "unknown"
func.func @folds(%n: index) {
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %holds = arith.cmpi eq, %c4, %c4 : index
  soac.check %holds, "holds"
  %fails = arith.cmpi eq, %c4, %c5 : index
  soac.check %fails, "fails"
  %unknown = arith.cmpi eq, %n, %c4 : index
  soac.check %unknown, "unknown"
  return
}

// -----

// Never hoisted out of a loop that may run zero times.
// CHECK-LABEL: func.func @not_hoisted
// CHECK: scf.for
// CHECK-NEXT: soac.check
func.func @not_hoisted(%ok: i1, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %n step %c1 {
    soac.check %ok, "in the loop"
  }
  return
}
