// A map whose rows need one block each (a row kernel) but that has more
// static rows than a GPU grid holds (2^31 - 1 blocks) runs one thread per
// row instead. It used to give a grid of 2^31 blocks, on which MLIR's
// lowering of the block id asserted (found by the IR fuzzer: seed 7, mutant
// 1912 of test/Dialect/Soac/dim-indices.mlir).
// RUN: soac-opt %s --convert-soac-to-gpu | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-nvvm -o /dev/null

// CHECK-LABEL: func.func @in_range
// CHECK: %[[ROWS:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[ROWS]], %[[THREADS:.*]] : index
// CHECK: %[[GRID:.*]] = arith.maxui %[[BLOCKS]]
// A thread kernel: blocks of 64 threads (ThreadKernel.cpp, kThreadBlockSize).
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GRID]], {{.*}}) threads({{.*}}) in ({{.*}} = %c64
func.func @in_range(%x: tensor<2147483648x?xf32>) -> tensor<?xindex> {
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%x : tensor<2147483648x?xf32>) -> tensor<?xindex> {
  ^bb0(%row: tensor<?xf32>):
    %d = tensor.dim %row, %c0 : tensor<?xf32>
    soac.yield %d : index
  }
  return %r : tensor<?xindex>
}
