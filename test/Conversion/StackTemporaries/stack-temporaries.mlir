// RUN: soac-opt %s --soac-stack-temporaries --split-input-file | FileCheck %s

// A small temporary of static shape that each iteration of a parallel loop
// allocates and frees goes on the stack, in a scope per iteration.
// CHECK-LABEL: func.func @per_row_temporary
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 16 : i64} : memref<11xf64>
// CHECK-NOT: memref.alloc(
// CHECK: memref.store %{{.*}}, %[[T]]
// CHECK: memref.load %[[T]]
// CHECK-NOT: memref.dealloc
// CHECK: memref.store %{{.*}}, %arg1
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
func.func @per_row_temporary(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %t = memref.alloc() {alignment = 16 : i64} : memref<11xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    memref.store %v, %t[%c1] : memref<11xf64>
    %w = memref.load %t[%c1] : memref<11xf64>
    memref.store %w, %y[%i] : memref<?xf64>
    memref.dealloc %t : memref<11xf64>
    scf.reduce
  }
  return
}

// -----

// Left on the heap: a buffer of dynamic size, one larger than 4 KiB, one
// that the iteration does not free, and one freed only in a branch. The body
// gets no scope when nothing moved.
// CHECK-LABEL: func.func @kept_on_the_heap
// CHECK-NOT: memref.alloca
// CHECK: memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK: memref.alloc() : memref<513xf64>
// CHECK: memref.alloc() : memref<4xf64>
// CHECK: memref.alloc() : memref<2xf64>
// CHECK-NOT: memref.alloca
func.func @kept_on_the_heap(%x: memref<?xf64>, %out: memref<?xmemref<4xf64>>, %b: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %dynamic = memref.alloc(%n) : memref<?xf64>
    %large = memref.alloc() : memref<513xf64>
    %kept = memref.alloc() : memref<4xf64>
    %maybe = memref.alloc() : memref<2xf64>
    memref.store %kept, %out[%i] : memref<?xmemref<4xf64>>
    scf.if %b {
      memref.dealloc %maybe : memref<2xf64>
    }
    memref.dealloc %dynamic : memref<?xf64>
    memref.dealloc %large : memref<513xf64>
    scf.reduce
  }
  return
}

// -----

// A loop with a reduction is left alone (its terminator reads the body's
// values), as are temporaries outside parallel loops.
// CHECK-LABEL: func.func @reduction_and_sequential
// CHECK-NOT: memref.alloca
// CHECK: scf.parallel
// CHECK: memref.alloc() : memref<3xf64>
// CHECK: scf.for
// CHECK: memref.alloc() : memref<3xf64>
// CHECK-NOT: memref.alloca
func.func @reduction_and_sequential(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f64 {
    %t = memref.alloc() : memref<3xf64>
    %v = memref.load %x[%i] : memref<?xf64>
    memref.store %v, %t[%c0] : memref<3xf64>
    %w = memref.load %t[%c0] : memref<3xf64>
    memref.dealloc %t : memref<3xf64>
    scf.reduce(%w : f64) {
    ^bb0(%a: f64, %b: f64):
      %s = arith.addf %a, %b : f64
      scf.reduce.return %s : f64
    }
  }
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<3xf64>
    memref.dealloc %t : memref<3xf64>
  }
  return %sum : f64
}
