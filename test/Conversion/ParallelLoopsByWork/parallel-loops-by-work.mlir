// RUN: soac-opt %s --soac-parallel-loops-by-work --split-input-file | FileCheck %s

// A fill of dynamic size: parallel only with enough iterations and more
// than one thread, else a sequential loop.
// CHECK: func.func private @soac_omp_max_threads() -> i32
// CHECK-LABEL: func.func @dynamic_fill
// CHECK-SAME: (%[[BUFFER:.*]]: memref<?x3xf64>, %[[N:.*]]: index)
// CHECK: %[[WORK:.*]] = arith.muli %[[N]], %c3
// CHECK: %[[ENOUGH:.*]] = arith.cmpi uge, %[[WORK]], %c16384
// CHECK: %[[THREADS:.*]] = call @soac_omp_max_threads()
// CHECK: %[[COUNT:.*]] = arith.index_cast %[[THREADS]]
// CHECK: %[[MORE:.*]] = arith.cmpi ugt, %[[COUNT]], %c1
// CHECK: %[[BOTH:.*]] = arith.andi %[[ENOUGH]], %[[MORE]]
// CHECK: scf.if %[[BOTH]] {
// CHECK-NEXT: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK-NEXT: memref.store %{{.*}}, %[[BUFFER]][%[[I]], %[[J]]]
// CHECK: } else {
// CHECK-NEXT: scf.for %[[K:.*]] = %c0 to %[[N]] step %c1 {
// CHECK-NEXT: scf.for %[[L:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT: memref.store %{{.*}}, %[[BUFFER]][%[[K]], %[[L]]]
func.func @dynamic_fill(%buffer: memref<?x3xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c3) step (%c1, %c1) {
    memref.store %zero, %buffer[%i, %j] : memref<?x3xf64>
    scf.reduce
  }
  return
}

// -----

// A static count below 2^14: sequential, with no choice; one at or above it
// stays parallel as it is.
// CHECK-LABEL: func.func @static_counts
// CHECK-NOT: scf.if
// CHECK: scf.for %[[I:.*]] = %c0 to %c544 step %c1 {
// CHECK-NEXT: arith.index_cast %[[I]]
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c16384)
// CHECK-NOT: soac_omp_max_threads
func.func @static_counts(%small: memref<544xi64>, %large: memref<16384xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c544 = arith.constant 544 : index
  %c16384 = arith.constant 16384 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%i) = (%c0) to (%c544) step (%c1) {
    %v = arith.index_cast %i : index to i64
    memref.store %v, %small[%i] : memref<544xi64>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c16384) step (%c1) {
    memref.store %zero, %large[%i] : memref<16384xf64>
    scf.reduce
  }
  return
}

// -----

// Left alone: a parallel loop inside another op (the SOAC lowering's own,
// in the branch of its choice), one whose body has regions, and one with a
// reduction.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: soac_omp_max_threads
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.for
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: scf.parallel
// CHECK: scf.reduce(
// CHECK-NOT: scf.for
func.func @left_alone(%buffer: memref<?xf64>, %n: index, %b: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  scf.if %b {
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      memref.store %zero, %buffer[%i] : memref<?xf64>
      scf.reduce
    }
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.if %b {
      memref.store %zero, %buffer[%i] : memref<?xf64>
    }
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f64 {
    %v = memref.load %buffer[%i] : memref<?xf64>
    scf.reduce(%v : f64) {
    ^bb0(%x: f64, %y: f64):
      %s = arith.addf %x, %y : f64
      scf.reduce.return %s : f64
    }
  }
  return %sum : f64
}
