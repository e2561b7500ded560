// exp, log and tanh of f64 (scalars and vectors) become arithmetic LLVM can
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

// f32 and the other functions stay as they are.
// CHECK-LABEL: func.func @left_alone
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.log %{{.*}} : f32
// CHECK: math.tanh %{{.*}} : f32
// CHECK: math.sin %{{.*}} : f64
func.func @left_alone(%x: f32, %y: f64) -> (f32, f32, f32, f64) {
  %a = math.exp %x : f32
  %b = math.log %x : f32
  %c = math.tanh %x : f32
  %d = math.sin %y : f64
  return %a, %b, %c, %d : f32, f32, f32, f64
}
