// Loads and stores of i1 become one-byte llvm.load/llvm.store through the
// descriptor (finalize-memref-to-llvm asserts on them in MLIR 22.1); other
// element types are left to finalize-memref-to-llvm.
// RUN: soac-opt %s --convert-i1-memref-to-llvm | FileCheck %s

// CHECK-LABEL: func.func @flags
// CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?xi1> to !llvm.struct
// CHECK: %[[PTR:.*]] = llvm.getelementptr
// CHECK: %[[BIT:.*]] = llvm.load %[[PTR]] : !llvm.ptr -> i1
// CHECK: llvm.store %{{.*}}, %{{.*}} : i1, !llvm.ptr
// CHECK: memref.load %{{.*}} : memref<?xf32>
func.func @flags(%m: memref<?xi1>, %f: memref<?xf32>, %i: index) -> f32 {
  %b = memref.load %m[%i] : memref<?xi1>
  %n = arith.xori %b, %b : i1
  memref.store %n, %m[%i] : memref<?xi1>
  %v = memref.load %f[%i] : memref<?xf32>
  return %v : f32
}
