// soac-lower-to-nvvm{flatten=true} (GpuOptions(flatten=True)) runs
// soac-flatten before the SOACs become kernels: a map over rows whose body
// is a map becomes one map over the merged rows (one thread per element,
// not one block per row). Without the option the nest reaches the kernels.
// RUN: soac-opt %s --pass-pipeline='builtin.module(soac-lower-to-nvvm{flatten=true})' --mlir-print-ir-before=convert-soac-to-gpu -o /dev/null 2>&1 | FileCheck %s
// RUN: soac-opt %s --pass-pipeline='builtin.module(soac-lower-to-nvvm)' --mlir-print-ir-before=convert-soac-to-gpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED

// CHECK-LABEL: func.func @exp_rows
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]]
// CHECK: soac.map ins(%[[FLAT]] : tensor<?xf32>)
// CHECK: tensor.expand_shape
// NESTED-LABEL: func.func @exp_rows
// NESTED-NOT: tensor.collapse_shape
// NESTED: soac.map ins(%{{.*}} : tensor<?x?xf32>)
// NESTED: soac.map ins(%{{.*}} : tensor<?xf32>)
func.func @exp_rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %e = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%v: f32):
      %y = math.exp %v : f32
      soac.yield %y : f32
    }
    soac.yield %e : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}
