// Kernels whose threads wait for each other cannot run one thread after
// the other: an error at the op that synchronizes.
// RUN: soac-opt %s --soac-emulate-gpu-launches --split-input-file -verify-diagnostics

func.func @barrier(%x: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'gpu.barrier' op cannot be emulated by sequential threads: the threads of its kernel synchronize}}
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

func.func @workgroup_memory(%x: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  // expected-error @+1 {{'gpu.launch' op cannot be emulated by sequential threads: it uses workgroup or private memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<256xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
