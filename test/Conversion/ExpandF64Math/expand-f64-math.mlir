// exp, log and tanh of f64 and f32 (scalars and vectors) become f64 arithmetic LLVM can
// vectorize: a range reduction, a polynomial (Estrin's scheme, its
// multiply-adds marked `contract`), a power of two built from its
// bits; NaN, zeros and infinities are chosen by selects. Other types and
// functions are left to the math-to-LLVM lowering (libm calls).
// RUN: soac-opt %s --soac-expand-f64-math | FileCheck %s

// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: arith.maxnumf
// CHECK: arith.minnumf
// CHECK: math.roundeven
// The polynomial, by Estrin's scheme: multiply-adds that may fuse.
// CHECK: arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f64
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f64
// CHECK: arith.fptosi %{{.*}} : f64 to i64
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.*}} : i64 to f64
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp(%x: f64) -> f64 {
  %y = math.exp %x : f64
  return %y : f64
}

// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.shrui
// CHECK: arith.sitofp %{{.*}} : i64 to f64
// CHECK: arith.divf
// CHECK: arith.select
// CHECK-NOT: math.log
// CHECK: return
func.func @log(%x: f64) -> f64 {
  %y = math.log %x : f64
  return %y : f64
}

// CHECK-LABEL: func.func @tanh
// CHECK-NOT: math.tanh
// CHECK: math.absf
// CHECK: math.roundeven
// CHECK: arith.divf
// CHECK: math.copysign
// CHECK-NOT: math.tanh
func.func @tanh(%x: f64) -> f64 {
  %y = math.tanh %x : f64
  return %y : f64
}

// Vectors of f64: the same arithmetic on vectors, constants splatted.
// CHECK-LABEL: func.func @vector_exp
// CHECK-NOT: math.exp
// CHECK: arith.constant dense<{{.*}}> : vector<4xf64>
// CHECK: math.roundeven %{{.*}} : vector<4xf64>
// CHECK: arith.fptosi %{{.*}} : vector<4xf64> to vector<4xi64>
// CHECK-NOT: math.exp
func.func @vector_exp(%x: vector<4xf64>) -> vector<4xf64> {
  %y = math.exp %x : vector<4xf64>
  return %y : vector<4xf64>
}

// f32 is widened to f64, expanded, and rounded back.
// CHECK-LABEL: func.func @f32_in_f64
// CHECK-NOT: math.exp
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : vector<8xf32> to vector<8xf64>
// CHECK: math.roundeven %{{.*}} : vector<8xf64>
// CHECK: %[[NARROW:.*]] = arith.truncf %{{.*}} : vector<8xf64> to vector<8xf32>
// CHECK: return %[[NARROW]]
func.func @f32_in_f64(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.exp %x : vector<8xf32>
  return %y : vector<8xf32>
}

// Other types and functions stay as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK: math.exp %{{.*}} : f16
// CHECK: math.sin %{{.*}} : f64
// CHECK: math.log1p %{{.*}} : f64
// CHECK: math.exp %{{.*}} : tensor<4xf64>
func.func @left_alone(%x: f16, %y: f64, %z: tensor<4xf64>) -> (f16, f64, f64, tensor<4xf64>) {
  %a = math.exp %x : f16
  %d = math.sin %y : f64
  %e = math.log1p %y : f64
  %f = math.exp %z : tensor<4xf64>
  return %a, %d, %e, %f : f16, f64, f64, tensor<4xf64>
}
