// softmax(A · x): a matrix-vector product (a map over rows with a nested map and
// reduce), then a numerically stable softmax (max-reduce, map, sum-reduce, map).
// `@grad` asks for the vector-Jacobian product with respect to x.
//
//   soac-opt examples/softmax_matvec.mlir

func.func @softmax_matvec(%A: tensor<?x?xf32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scores = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %products = soac.map ins(%row, %x : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      soac.yield %p : f32
    }
    %dot = soac.reduce ins(%products : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%acc: f32, %v: f32):
      %s = arith.addf %acc, %v : f32
      soac.yield %s : f32
    }
    soac.yield %dot : f32
  }
  %max = soac.reduce ins(%scores : tensor<?xf32>) init(%ninf : f32) -> f32 {
  ^bb0(%acc: f32, %v: f32):
    %m = arith.maximumf %acc, %v : f32
    soac.yield %m : f32
  }
  %exps = soac.map ins(%scores : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%s: f32):
    %shifted = arith.subf %s, %max : f32
    %e = math.exp %shifted : f32
    soac.yield %e : f32
  }
  %total = soac.reduce ins(%exps : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%acc: f32, %v: f32):
    %s = arith.addf %acc, %v : f32
    soac.yield %s : f32
  }
  %probabilities = soac.map ins(%exps : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%e: f32):
    %q = arith.divf %e, %total : f32
    soac.yield %q : f32
  }
  return %probabilities : tensor<?xf32>
}

func.func @grad(%A: tensor<?x?xf32>, %x: tensor<?xf32>, %cotangent: tensor<?xf32>) -> tensor<?xf32> {
  %r:2 = soac.vjp @softmax_matvec(%A, %x, %cotangent) wrt [1]
      : (tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %r#1 : tensor<?xf32>
}
