// The named CPU pipeline ends in the LLVM dialect, with a C interface per public
// function and OpenMP parallel regions (none with openmp=false).
// RUN: soac-opt %s --soac-lower-to-cpu | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-cpu=openmp=false | FileCheck %s --check-prefix=SEQ

// CHECK-LABEL: llvm.func @saxpy
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-LABEL: llvm.func @_mlir_ciface_saxpy(%{{.*}}: !llvm.ptr, %{{.*}}: f32, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// SEQ-LABEL: llvm.func @saxpy
// SEQ-NOT: omp.
// SEQ: llvm.func @_mlir_ciface_saxpy
func.func @saxpy(%a: f32, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%xi: f32, %yi: f32):
    %m = arith.mulf %a, %xi : f32
    %s = arith.addf %m, %yi : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}
