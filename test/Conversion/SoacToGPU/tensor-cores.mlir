// Products of float64 on the tensor cores (convert-soac-to-gpu's
// tensor-cores, which soac-lower-to-nvvm sets for sm_80 and later): each
// warp's 16 x 32 part of a 64 x 64 tile as 2 x 4 products mma.sync m8n8k4.
// RUN: soac-opt %s --convert-soac-to-gpu=tensor-cores=true --split-input-file | FileCheck %s
// RUN: soac-opt %s --split-input-file --soac-lower-to-nvvm | FileCheck %s --check-prefix=SM90
// RUN: soac-opt %s --split-input-file '--soac-lower-to-nvvm=chip=sm_75' | FileCheck %s --check-prefix=SM75 --implicit-check-not=mma.sync
// RUN: soac-opt %s --split-input-file '--soac-lower-to-nvvm=tensor-cores=false' | FileCheck %s --check-prefix=SM75 --implicit-check-not=mma.sync

// Staged rows of 64 values padded to 68 (fragment loads in 16 banks), four
// values of k per step, 2 fragments of A and 4 of B per lane and step, 8
// products carrying two results each, 16 results stored.
// CHECK-LABEL: func.func @product
// CHECK: gpu.launch {{.*}} workgroup(%[[A:.*]] : memref<1088xf64, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<1088xf64, #gpu.address_space<workgroup>>)
// CHECK: %{{.*}}:16 = scf.for
// CHECK: gpu.barrier
// CHECK: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[FOUR]] iter_args({{.*}}) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
// CHECK-COUNT-2: memref.load %[[A]]
// CHECK-COUNT-4: memref.load %[[B]]
// CHECK-COUNT-8: nvvm.mma.sync A[%{{.*}}]  B[%{{.*}}]  C[%{{.*}}, %{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 8, n = 8, k = 4>} : (f64, f64, f64) -> !llvm.struct<(f64, f64)>
// CHECK: gpu.barrier
// CHECK-COUNT-16: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf64>
// CHECK: gpu.terminator
// SM90-LABEL: llvm.func @product
// SM90: gpu.binary @product_kernel {{.*}}mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64
// Before sm_80, or with tensor-cores=false, the ordinary cores.
// SM75-LABEL: llvm.func @product
// SM75: gpu.binary @product_kernel
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) transpose_rhs -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}

// -----

// float32 stays on the ordinary cores (its tensor cores round to tf32):
// rows padded to 65, 4 x 4 multiply-adds per thread and value of k.
// CHECK-LABEL: func.func @product_f32
// CHECK: workgroup(%{{.*}} : memref<1040xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.terminator
// SM90-LABEL: llvm.func @product_f32
// SM90: gpu.binary @product_f32_kernel
// SM90-NOT: mma.sync
func.func @product_f32(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
