// Every SOAC compiled by soac-lower-to-cpu and run by mlir-runner (with the
// OpenMP runtime: parallel loops run on all cores).
// RUN: soac-opt %s --soac-lower-to-cpu | \
// RUN:   mlir-runner -e main -entry-point-result=void -O3 \
// RUN:     -shared-libs=%soac_runtime,%mlir_runner_utils,%mlir_c_runner_utils,%openmp_runtime | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>) attributes {llvm.emit_c_interface}
func.func private @printMemrefI64(tensor<*xi64>) attributes {llvm.emit_c_interface}

// Not inlined into @main (the pipeline inlines calls): the unranked cast of an
// argument bufferizes without a copy only in its own function.
func.func @print(%t: tensor<?xf32>) attributes {no_inline} {
  %u = tensor.cast %t : tensor<?xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}

func.func @main() {
  %x = arith.constant dense<[1.0, -2.0, 3.0, -4.0, 5.0]> : tensor<5xf32>
  %xd = tensor.cast %x : tensor<5xf32> to tensor<?xf32>
  %zero = arith.constant 0.0 : f32

  // CHECK: [1, 4, 9, 16, 25]
  %sq = soac.map ins(%xd : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    soac.yield %s : f32
  }
  call @print(%sq) : (tensor<?xf32>) -> ()

  // CHECK: [55]
  %sum = soac.reduce ins(%sq : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %sum_t = tensor.from_elements %sum : tensor<1xf32>
  %sum_d = tensor.cast %sum_t : tensor<1xf32> to tensor<?xf32>
  call @print(%sum_d) : (tensor<?xf32>) -> ()

  // CHECK: [1, -1, 2, -2, 3]
  %cs = soac.scan ins(%xd : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  call @print(%cs) : (tensor<?xf32>) -> ()

  // scatter to [4, 0, 9 (ignored)]: CHECK: [-2, 0, 0, 0, 1]
  %dest = arith.constant dense<0.0> : tensor<5xf32>
  %idx = arith.constant dense<[4, 0, 9]> : tensor<3xindex>
  %vals = arith.constant dense<[1.0, -2.0, 7.0]> : tensor<3xf32>
  %w = soac.scatter dest(%dest : tensor<5xf32>) indices(%idx : tensor<3xindex>) ins(%vals : tensor<3xf32>) -> tensor<5xf32>
  %wd = tensor.cast %w : tensor<5xf32> to tensor<?xf32>
  call @print(%wd) : (tensor<?xf32>) -> ()

  // histogram of [1, 1, 3, -1] with weights [1, 2, 3, 4]: CHECK: [0, 3, 0, 3]
  %bins = arith.constant dense<0.0> : tensor<4xf32>
  %hidx = arith.constant dense<[1, 1, 3, -1]> : tensor<4xi64>
  %hval = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %h = soac.reduce_by_index dest(%bins : tensor<4xf32>) indices(%hidx : tensor<4xi64>) ins(%hval : tensor<4xf32>) init(%zero : f32) -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %hd = tensor.cast %h : tensor<4xf32> to tensor<?xf32>
  call @print(%hd) : (tensor<?xf32>) -> ()

  // CHECK: [0, 1, 2, 3, 4, 5]
  %i = soac.iota : tensor<6xi64>
  %iu = tensor.cast %i : tensor<6xi64> to tensor<*xi64>
  call @printMemrefI64(%iu) : (tensor<*xi64>) -> ()
  return
}
