// soac-inline-into-interfaces: a function of many arguments is compiled
// inside its C interface wrapper (internal, always_inline); one of few
// arguments, or one something else calls, keeps its symbol.
// RUN: soac-opt %s --convert-func-to-llvm --soac-inline-into-interfaces --split-input-file | FileCheck %s

// 13 memrefs: 65 arguments once their descriptors are expanded.
// CHECK-LABEL: llvm.func internal @wide(
// CHECK-SAME:    always_inline
// CHECK-LABEL: llvm.func @_mlir_ciface_wide(
// CHECK:         llvm.call @wide(
func.func @wide(%a0: memref<?xf64>, %a1: memref<?xf64>, %a2: memref<?xf64>, %a3: memref<?xf64>, %a4: memref<?xf64>, %a5: memref<?xf64>, %a6: memref<?xf64>, %a7: memref<?xf64>, %a8: memref<?xf64>, %a9: memref<?xf64>, %a10: memref<?xf64>, %a11: memref<?xf64>, %a12: memref<?xf64>) -> f64 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a12[%c0] : memref<?xf64>
  return %x : f64
}

// -----

// CHECK-LABEL: llvm.func @narrow(
// CHECK-NOT:     always_inline
// CHECK-LABEL: llvm.func @_mlir_ciface_narrow(
func.func @narrow(%a: memref<?xf64>) -> f64 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<?xf64>
  return %x : f64
}

// -----

// CHECK-LABEL: llvm.func @called(
// CHECK-NOT:     always_inline
// CHECK-LABEL: llvm.func @_mlir_ciface_called(
// CHECK-LABEL: llvm.func @caller(
// CHECK:         llvm.call @called(
func.func @called(%a0: memref<?xf64>, %a1: memref<?xf64>, %a2: memref<?xf64>, %a3: memref<?xf64>, %a4: memref<?xf64>, %a5: memref<?xf64>, %a6: memref<?xf64>, %a7: memref<?xf64>, %a8: memref<?xf64>, %a9: memref<?xf64>, %a10: memref<?xf64>, %a11: memref<?xf64>, %a12: memref<?xf64>) -> f64 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a12[%c0] : memref<?xf64>
  return %x : f64
}
func.func @caller(%a0: memref<?xf64>, %a1: memref<?xf64>, %a2: memref<?xf64>, %a3: memref<?xf64>, %a4: memref<?xf64>, %a5: memref<?xf64>, %a6: memref<?xf64>, %a7: memref<?xf64>, %a8: memref<?xf64>, %a9: memref<?xf64>, %a10: memref<?xf64>, %a11: memref<?xf64>, %a12: memref<?xf64>) -> f64 {
  %x = func.call @called(%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7, %a8, %a9, %a10, %a11, %a12) : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> f64
  return %x : f64
}
