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
// that the iteration does not free, one freed only in a branch, and one
// whose layout takes a symbol. The body gets no scope when nothing moved.
// CHECK-LABEL: func.func @kept_on_the_heap
// CHECK-NOT: memref.alloca
// CHECK: memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK: memref.alloc() : memref<513xf64>
// CHECK: memref.alloc() : memref<4xf64>
// CHECK: memref.alloc() : memref<2xf64>
// CHECK: memref.alloc()[%{{.*}}] : memref<4xf64, #map>
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
    %shifted = memref.alloc()[%i] : memref<4xf64, affine_map<(d0)[s0] -> (d0 + s0)>>
    memref.store %kept, %out[%i] : memref<?xmemref<4xf64>>
    scf.if %b {
      memref.dealloc %maybe : memref<2xf64>
    }
    memref.dealloc %dynamic : memref<?xf64>
    memref.dealloc %large : memref<513xf64>
    memref.dealloc %shifted : memref<4xf64, affine_map<(d0)[s0] -> (d0 + s0)>>
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

// -----

// At most 64 KiB of one body's temporaries go on the stack: 16 of these 17
// buffers of 4 KiB; the last stays on the heap.
// CHECK-LABEL: func.func @stack_budget_per_body
// CHECK: memref.alloca_scope
// CHECK-COUNT-16: memref.alloca() : memref<512xf64>
// CHECK-NOT: memref.alloca()
// CHECK: memref.alloc() : memref<512xf64>
// CHECK-NOT: memref.alloca()
// CHECK: memref.dealloc
// CHECK-NOT: memref.dealloc
func.func @stack_budget_per_body(%x: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf64>
    %t0 = memref.alloc() : memref<512xf64>
    memref.store %v, %t0[%c0] : memref<512xf64>
    %t1 = memref.alloc() : memref<512xf64>
    memref.store %v, %t1[%c0] : memref<512xf64>
    %t2 = memref.alloc() : memref<512xf64>
    memref.store %v, %t2[%c0] : memref<512xf64>
    %t3 = memref.alloc() : memref<512xf64>
    memref.store %v, %t3[%c0] : memref<512xf64>
    %t4 = memref.alloc() : memref<512xf64>
    memref.store %v, %t4[%c0] : memref<512xf64>
    %t5 = memref.alloc() : memref<512xf64>
    memref.store %v, %t5[%c0] : memref<512xf64>
    %t6 = memref.alloc() : memref<512xf64>
    memref.store %v, %t6[%c0] : memref<512xf64>
    %t7 = memref.alloc() : memref<512xf64>
    memref.store %v, %t7[%c0] : memref<512xf64>
    %t8 = memref.alloc() : memref<512xf64>
    memref.store %v, %t8[%c0] : memref<512xf64>
    %t9 = memref.alloc() : memref<512xf64>
    memref.store %v, %t9[%c0] : memref<512xf64>
    %t10 = memref.alloc() : memref<512xf64>
    memref.store %v, %t10[%c0] : memref<512xf64>
    %t11 = memref.alloc() : memref<512xf64>
    memref.store %v, %t11[%c0] : memref<512xf64>
    %t12 = memref.alloc() : memref<512xf64>
    memref.store %v, %t12[%c0] : memref<512xf64>
    %t13 = memref.alloc() : memref<512xf64>
    memref.store %v, %t13[%c0] : memref<512xf64>
    %t14 = memref.alloc() : memref<512xf64>
    memref.store %v, %t14[%c0] : memref<512xf64>
    %t15 = memref.alloc() : memref<512xf64>
    memref.store %v, %t15[%c0] : memref<512xf64>
    %t16 = memref.alloc() : memref<512xf64>
    memref.store %v, %t16[%c0] : memref<512xf64>
    memref.dealloc %t0 : memref<512xf64>
    memref.dealloc %t1 : memref<512xf64>
    memref.dealloc %t2 : memref<512xf64>
    memref.dealloc %t3 : memref<512xf64>
    memref.dealloc %t4 : memref<512xf64>
    memref.dealloc %t5 : memref<512xf64>
    memref.dealloc %t6 : memref<512xf64>
    memref.dealloc %t7 : memref<512xf64>
    memref.dealloc %t8 : memref<512xf64>
    memref.dealloc %t9 : memref<512xf64>
    memref.dealloc %t10 : memref<512xf64>
    memref.dealloc %t11 : memref<512xf64>
    memref.dealloc %t12 : memref<512xf64>
    memref.dealloc %t13 : memref<512xf64>
    memref.dealloc %t14 : memref<512xf64>
    memref.dealloc %t15 : memref<512xf64>
    memref.dealloc %t16 : memref<512xf64>
    scf.reduce
  }
  return
}
