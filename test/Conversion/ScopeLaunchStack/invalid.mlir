// RUN: soac-opt %s --soac-scope-launch-stack --verify-diagnostics

// The pass is for host code already in the LLVM dialect (after gpu-to-llvm).
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func @not_yet_llvm(%x: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{is not in an llvm.func: soac-scope-launch-stack runs after gpu-to-llvm}}
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<?xf32>)
    return
  }
}
