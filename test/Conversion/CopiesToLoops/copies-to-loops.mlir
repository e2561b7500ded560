// RUN: soac-opt %s --soac-copies-to-loops --split-input-file | FileCheck %s

// A copy of a vector into a row of a matrix (a subview at a dynamic
// offset, which finalize-memref-to-llvm would copy with memrefCopy) becomes
// a loop of loads and stores.
// CHECK-LABEL: func.func @row_into_matrix
// CHECK-NOT: memref.copy
// CHECK: %[[N:.*]] = memref.dim %arg0, %{{.*}} : memref<?xf64>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK: %[[V:.*]] = memref.load %arg0[%[[I]]] : memref<?xf64>
// CHECK: memref.store %[[V]], %[[ROW:.*]][%[[I]]] : memref<?xf64, strided<[1], offset: ?>>
func.func @row_into_matrix(%v: memref<?xf64>, %m: memref<?x?xf64>, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c1 : memref<?x?xf64>
  %row = memref.subview %m[%r, 0] [1, %n] [1, 1] : memref<?x?xf64> to memref<?xf64, strided<[1], offset: ?>>
  memref.copy %v, %row : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
  return
}

// -----

// A copy of a matrix into a slice of a 3-D buffer (a thread's accumulator
// into its place among all threads'), strided, becomes a loop nest.
// CHECK-LABEL: func.func @matrix_into_slice
// CHECK-NOT: memref.copy
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[V:.*]] = memref.load %arg0[%[[I]], %[[J]]] : memref<?x16xf64>
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<?x16xf64, strided<[16, 1], offset: ?>>
func.func @matrix_into_slice(%a: memref<?x16xf64>, %all: memref<?x?x16xf64>, %t: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?x16xf64>
  %slice = memref.subview %all[%t, 0, 0] [1, %n, 16] [1, 1, 1] : memref<?x?x16xf64> to memref<?x16xf64, strided<[16, 1], offset: ?>>
  memref.copy %a, %slice : memref<?x16xf64> to memref<?x16xf64, strided<[16, 1], offset: ?>>
  return
}

// -----

// Copies between buffers of the identity layout, which finalize-memref-to-llvm
// makes one memcpy, and copies of scalars are left to it.
// CHECK-LABEL: func.func @matrix
// CHECK: memref.copy %arg0, %arg1 : memref<?x?xf32> to memref<?x?xf32>
// CHECK: memref.copy %arg2, %arg3 : memref<f64> to memref<f64>
func.func @matrix(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<f64>, %d: memref<f64>) {
  memref.copy %a, %b : memref<?x?xf32> to memref<?x?xf32>
  memref.copy %c, %d : memref<f64> to memref<f64>
  return
}
