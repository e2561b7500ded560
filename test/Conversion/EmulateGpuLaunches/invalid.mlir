// What neither way of emulating a kernel supports: an error at its location.
// RUN: soac-opt %s --soac-emulate-gpu-launches --split-input-file -verify-diagnostics

func.func @private_memory(%x: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  // expected-error @+1 {{'gpu.launch' op cannot be emulated on the CPU: it uses private memory}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             private(%mine : memref<4xf32, #gpu.address_space<private>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @subgroup_reduce(%x: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    // expected-error @+1 {{'gpu.subgroup_reduce' op cannot be emulated on the CPU: only barriers, shuffles and products on the tensor cores synchronize emulated threads}}
    %s = gpu.subgroup_reduce add %v : (f32) -> f32
    memref.store %s, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @vector_shuffle(%x: vector<2xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'gpu.shuffle' op cannot be emulated on the CPU: it shuffles a vector}}
    %r, %valid = gpu.shuffle xor %x, %one, %width : vector<2xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @half_product(%x: vector<2xf16>, %y: vector<2xf16>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'nvvm.mma.sync' op cannot be emulated on the CPU: only mma.sync m8n8k4 of float64 (row, col) whose results are read by llvm.extractvalue can be}}
    %d = nvvm.mma.sync A[%x, %x] B[%y] C[%x, %x] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (vector<2xf16>, vector<2xf16>, vector<2xf16>) -> !llvm.struct<(vector<2xf16>, vector<2xf16>)>
    gpu.terminator
  }
  return
}
