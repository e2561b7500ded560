// The vjp soac-autodiff generated for a 1-D convolution (a map over output
// positions of a +-reduce over a map reading x[i + j] from the free array x)
// before adjoints were sparse at every depth: each row accumulates a dense
// adjoint of the whole of x (the tensor.splat and the reduce over rows of it).
// test_gradient_cost.py checks that the report flags it.
func.func @conv(%arg0: tensor<?xf64>, %arg1: tensor<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.000000e+00 : f64
  %dim = tensor.dim %arg0, %c0 : tensor<?xf64>
  %dim_0 = tensor.dim %arg1, %c0 : tensor<?xf64>
  %0 = arith.subi %dim, %dim_0 : index
  %1 = arith.addi %0, %c1 : index
  %2 = soac.iota %1 : tensor<?xindex>
  %3 = soac.iota %dim_0 : tensor<?xindex>
  %4 = soac.map ins(%2 : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%arg2: index):
    %6 = soac.map ins(%3, %arg1 : tensor<?xindex>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%arg3: index, %arg4: f64):
      %8 = arith.addi %arg2, %arg3 : index
      %extracted = tensor.extract %arg0[%8] : tensor<?xf64>
      %9 = arith.mulf %extracted, %arg4 : f64
      soac.yield %9 : f64
    }
    %7 = soac.reduce ins(%6 : tensor<?xf64>) init(%cst : f64) -> f64 {
    ^bb0(%arg3: f64, %arg4: f64):
      %8 = arith.addf %arg3, %arg4 : f64
      soac.yield %8 : f64
    }
    soac.yield %7 : f64
  }
  %5 = soac.reduce ins(%4 : tensor<?xf64>) init(%cst : f64) -> f64 {
  ^bb0(%arg2: f64, %arg3: f64):
    %6 = arith.addf %arg2, %arg3 : f64
    soac.yield %6 : f64
  }
  return %5 : f64
}
func.func private @conv__vjp_wrt_0_1(%arg0: tensor<?xf64>, %arg1: tensor<?xf64>, %arg2: f64) -> (f64, tensor<?xf64>, tensor<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.000000e+00 : f64
  %dim = tensor.dim %arg0, %c0 : tensor<?xf64>
  %dim_0 = tensor.dim %arg1, %c0 : tensor<?xf64>
  %0 = arith.subi %dim, %dim_0 : index
  %1 = arith.addi %0, %c1 : index
  %2 = soac.iota %1 : tensor<?xindex>
  %3 = soac.iota %dim_0 : tensor<?xindex>
  %4 = soac.map ins(%2 : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%arg3: index):
    %10 = soac.map ins(%3, %arg1 : tensor<?xindex>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%arg4: index, %arg5: f64):
      %12 = arith.addi %arg3, %arg4 : index
      %extracted = tensor.extract %arg0[%12] : tensor<?xf64>
      %13 = arith.mulf %extracted, %arg5 : f64
      soac.yield %13 : f64
    }
    %11 = soac.reduce ins(%10 : tensor<?xf64>) init(%cst : f64) -> f64 {
    ^bb0(%arg4: f64, %arg5: f64):
      %12 = arith.addf %arg4, %arg5 : f64
      soac.yield %12 : f64
    }
    soac.yield %11 : f64
  }
  %5 = soac.reduce ins(%4 : tensor<?xf64>) init(%cst : f64) -> f64 {
  ^bb0(%arg3: f64, %arg4: f64):
    %10 = arith.addf %arg3, %arg4 : f64
    soac.yield %10 : f64
  }
  %6 = soac.map ins(%2 : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%arg3: index):
    soac.yield %arg2 : f64
  }
  %7:2 = soac.map ins(%2, %6 : tensor<?xindex>, tensor<?xf64>) -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%arg3: index, %arg4: f64):
    %10 = soac.map ins(%3 : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%arg5: index):
      soac.yield %arg4 : f64
    }
    %11:3 = soac.map ins(%3, %arg1, %10 : tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>, tensor<?xindex>, tensor<?xf64> {
    ^bb0(%arg5: index, %arg6: f64, %arg7: f64):
      %13 = arith.addi %arg3, %arg5 : index
      %extracted = tensor.extract %arg0[%13] : tensor<?xf64>
      %14 = arith.mulf %arg7, %arg6 : f64
      %15 = arith.mulf %arg7, %extracted : f64
      %16 = soac.check_index %13 below %dim, "'tensor.extract' dimension 0"
      soac.yield %15, %16, %14 : f64, index, f64
    }
    %splat_2 = tensor.splat %cst[%dim] : tensor<?xf64>
    %12 = soac.reduce_by_index dest(%splat_2 : tensor<?xf64>) indices(%11#1 : tensor<?xindex>) ins(%11#2 : tensor<?xf64>) init(%cst : f64) -> tensor<?xf64> {
    ^bb0(%arg5: f64, %arg6: f64):
      %13 = arith.addf %arg5, %arg6 : f64
      soac.yield %13 : f64
    }
    soac.yield %11#0, %12 : tensor<?xf64>, tensor<?xf64>
  }
  %splat = tensor.splat %cst[%dim_0] : tensor<?xf64>
  %8 = soac.reduce ins(%7#0 : tensor<?x?xf64>) init(%splat : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%arg3: tensor<?xf64>, %arg4: tensor<?xf64>):
    %10 = soac.map ins(%arg3, %arg4 : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%arg5: f64, %arg6: f64):
      %11 = arith.addf %arg5, %arg6 : f64
      soac.yield %11 : f64
    }
    soac.yield %10 : tensor<?xf64>
  }
  %splat_1 = tensor.splat %cst[%dim] : tensor<?xf64>
  %9 = soac.reduce ins(%7#1 : tensor<?x?xf64>) init(%splat_1 : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%arg3: tensor<?xf64>, %arg4: tensor<?xf64>):
    %10 = soac.map ins(%arg3, %arg4 : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%arg5: f64, %arg6: f64):
      %11 = arith.addf %arg5, %arg6 : f64
      soac.yield %11 : f64
    }
    soac.yield %10 : tensor<?xf64>
  }
  return %5, %9, %8 : f64, tensor<?xf64>, tensor<?xf64>
}
