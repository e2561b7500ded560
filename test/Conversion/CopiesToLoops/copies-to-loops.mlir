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

// Copies of other ranks are left to finalize-memref-to-llvm.
// CHECK-LABEL: func.func @matrix
// CHECK: memref.copy %arg0, %arg1 : memref<?x?xf32> to memref<?x?xf32>
func.func @matrix(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  memref.copy %a, %b : memref<?x?xf32> to memref<?x?xf32>
  return
}
