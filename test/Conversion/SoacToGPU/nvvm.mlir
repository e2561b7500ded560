// The named GPU pipeline: host code in the LLVM dialect launching kernels
// embedded as PTX, which ptxas assembles for sm_90.
// RUN: soac-opt %s --soac-lower-to-nvvm | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-nvvm | FileCheck %s --check-prefix=BIN
// RUN: soac-opt %s --soac-lower-to-nvvm | %python -m soac.ptx | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: llvm.func @dot
// CHECK: gpu.launch_func @dot_kernel::@dot_kernel
// CHECK: gpu.launch_func @dot_kernel_0::@dot_kernel
// CHECK: llvm.func @_mlir_ciface_dot
// CHECK-LABEL: llvm.func @histogram
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: gpu.launch_func

// BIN: gpu.binary @dot_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}} assembly = "
// BIN: gpu.binary @histogram_kernel

// PTX: kernel module dot_kernel
// PTX: .target sm_90
// PTX: shfl.sync.bfly.b32
// PTX: bar.sync
// PTX: kernel module histogram_kernel
// PTX: atom.global.add.f32
func.func @dot(%x: tensor<?xf32>, %y: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %p = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    soac.yield %m : f32
  }
  %s = soac.reduce ins(%p : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%acc: f32, %v: f32):
    %r = arith.addf %acc, %v : f32
    soac.yield %r : f32
  }
  return %s : f32
}

func.func @histogram(%h: tensor<?xf32>, %i: tensor<?xi64>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xi64>)
         ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}
