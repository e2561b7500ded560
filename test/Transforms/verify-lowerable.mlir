// soac-verify-lowerable: what the verifiers accept but MLIR's own passes
// abort on is an error at the op (each case was found by the IR fuzzer).
// RUN: soac-opt %s --soac-verify-lowerable --split-input-file --verify-diagnostics
// RUN: soac-opt %s --soac-lower-to-cpu --split-input-file --verify-diagnostics
// RUN: soac-opt %s --soac-lower-to-nvvm --split-input-file --verify-diagnostics

func.func @dim_below_zero(%x: memref<?xf32>) -> index {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'memref.dim' op index -1 is out of range for its source of type 'memref<?xf32>': expected an index below its rank, 1}}
  %m = memref.dim %x, %c : memref<?xf32>
  return %m : index
}

// -----

func.func @huge_static_shape(%starts: tensor<?xi64>, %x: tensor<?xf64>) -> tensor<4611686018427387904x4xf64> {
  // expected-error @+1 {{'soac.map' op has a result of type 'tensor<4611686018427387904x4xf64>', larger than the 2^62 bytes a buffer can have}}
  %r = soac.map ins(%starts : tensor<?xi64>) -> tensor<4611686018427387904x4xf64> {
  ^bb0(%s: i64):
    %start = arith.index_cast %s : i64 to index
    %w = tensor.extract_slice %x[%start] [4] [1] : tensor<?xf64> to tensor<4xf64>
    soac.yield %w : tensor<4xf64>
  }
  return %r : tensor<4611686018427387904x4xf64>
}

// -----

func.func @huge_block(%x: memref<256xindex>) {
  %c1 = arith.constant 1 : index
  %big = arith.constant 2147483648 : index
  // expected-error @+1 {{'gpu.launch' op has a block of 2147483648 threads in dimension 0: a block has 1 to 1024 threads}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %big, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @too_many_threads(%x: memref<256xindex>) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{'gpu.launch' op has blocks of 4096 threads: a block has at most 1024}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c64, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @empty_grid(%x: memref<256xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op has 0 blocks in dimension 1: a grid has 1 to 65535 blocks there}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c0, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @rank_reducing_slice_with_zero_stride(%q: tensor<?x?xf64>) -> tensor<1xf64> {
  // expected-error @+1 {{'tensor.extract_slice' op drops 1 dimension(s) and has a stride of 0: a slice that drops dimensions needs nonzero strides (which dimensions it drops is then known)}}
  %row = tensor.extract_slice %q[0, 0] [1, 1] [0, 1] : tensor<?x?xf64> to tensor<1xf64>
  return %row : tensor<1xf64>
}

// -----

func.func @rank_reducing_insert_with_zero_stride(%q: tensor<?x?xf64>, %r: tensor<1xf64>) -> tensor<?x?xf64> {
  // expected-error @+1 {{'tensor.insert_slice' op drops 1 dimension(s) and has a stride of 0: a slice that drops dimensions needs nonzero strides (which dimensions it drops is then known)}}
  %x = tensor.insert_slice %r into %q[0, 0] [1, 1] [0, 1] : tensor<1xf64> into tensor<?x?xf64>
  return %x : tensor<?x?xf64>
}
