// The PTX of every SOAC, nesting and operator kind assembles with ptxas for
// sm_90 (the programs of the CPU integration test and more).
// REQUIRES: ptxas
// RUN: soac-opt %S/../../../examples/soacs.mlir --symbol-privatize=exclude=saxpy,sum,sum_of_squares,argmin,cumsum,recurrence,matvec,scatter,histogram,gather_squares --symbol-dce --soac-lower-to-nvvm | %python -m soac.ptx --ptxas sm_90 | FileCheck %s
// RUN: soac-opt %S/soac-to-gpu.mlir --split-input-file --soac-lower-to-nvvm | %python -m soac.ptx --ptxas sm_90 | FileCheck %s --check-prefix=MORE
// RUN: soac-opt %S/tensor-cores.mlir --split-input-file --soac-lower-to-nvvm | %python -m soac.ptx --ptxas sm_90 | FileCheck %s --check-prefix=MMA

// CHECK: saxpy_kernel: assembled for sm_90
// CHECK: sum_kernel_0: assembled for sm_90
// CHECK: sum_of_squares_kernel_1: assembled for sm_90
// CHECK: argmin_kernel_3: assembled for sm_90
// CHECK: cumsum_kernel_5: assembled for sm_90
// CHECK: recurrence_kernel_7: assembled for sm_90
// CHECK: matvec_kernel: assembled for sm_90
// A scatter and a histogram: the one-block kernel that copies and updates
// small ones, then the copy and the update of larger ones.
// CHECK: scatter_kernel: assembled for sm_90
// CHECK: scatter_kernel_8: assembled for sm_90
// CHECK: scatter_kernel_9: assembled for sm_90
// CHECK: histogram_kernel: assembled for sm_90
// CHECK: histogram_kernel_10: assembled for sm_90
// CHECK: histogram_kernel_11: assembled for sm_90
// CHECK: gather_squares_kernel_12: assembled for sm_90

// MORE-DAG: product_histogram_kernel{{(_[0-9]+)?}}: assembled for sm_90
// MORE-DAG: row_cumsum_kernel: assembled for sm_90
// MORE-DAG: iota_kernel: assembled for sm_90
// MORE-DAG: sum_count_and_max_histogram_kernel_4: assembled for sm_90

// Products of float64 by mma.sync m8n8k4, and of float32 on the ordinary cores.
// MMA: product_kernel: assembled for sm_90
// MMA: product_f32_kernel: assembled for sm_90
