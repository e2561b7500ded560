// RUN: soac-opt %s --split-input-file --soac-rename-reserved-symbols | FileCheck %s
// RUN: soac-opt %s --split-input-file --soac-lower-to-cpu | FileCheck %s --check-prefix=LOWERED

// A function named like libm's pow moves out of the C namespace with its
// calls; the declaration of the library's own pow stays.
// CHECK-LABEL: func.func @soac.reserved.pow
// CHECK: math.powf
// CHECK-LABEL: func.func @cube
// CHECK: call @soac.reserved.pow
// CHECK-LABEL: func.func private @powf
// CHECK-NOT: soac.reserved.powf
// After lowering, the C interface keeps the program's name and the libm
// call goes to the library, not back into the function.
// LOWERED-LABEL: llvm.func @soac.reserved.pow
// LOWERED-NOT: llvm.call @soac.reserved.pow
// LOWERED: llvm.func @_mlir_ciface_pow
// LOWERED: llvm.call @soac.reserved.pow
func.func @pow(%x: f64, %y: f64) -> f64 {
  %r = math.powf %x, %y : f64
  %s = arith.mulf %r, %y : f64
  return %s : f64
}
func.func @cube(%x: f64) -> f64 {
  %c3 = arith.constant 3.0 : f64
  %r = call @pow(%x, %c3) : (f64, f64) -> f64
  return %r : f64
}
func.func private @powf(f32, f32) -> f32

// -----

// The runtimes' prefixes are reserved too.
// CHECK-LABEL: func.func @soac.reserved.soac_report_error
// CHECK-LABEL: func.func @soac.reserved.malloc
// CHECK-LABEL: func.func @mallocate
func.func @soac_report_error() { return }
func.func @malloc() { return }
func.func @mallocate() { return }
