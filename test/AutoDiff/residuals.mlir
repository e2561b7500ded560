// A map's run in the forward code also yields, per row, the values of its
// body's math functions; the adjoint map reads them instead of computing them
// again (a value the body yields anyway is kept as that result). What the
// adjoint does not read is dropped by canonicalize. Each function squares
// its map's result, so that the result's adjoint reads the result and the
// map runs in the forward code (else its adjoint map computes it once:
// results-from-adjoint.mlir).
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @gate__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: tensor<?xf64>, %[[C:.*]]: tensor<?xf64>)
// CHECK: %[[FWD:.*]]:2 = soac.map ins(%[[X]] : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>
// CHECK: %[[E:.*]] = math.exp
// CHECK: %[[T:.*]] = math.tanh
// CHECK: soac.yield %[[T]], %[[E]] : f64, f64
// CHECK: %[[SQ:.*]]:2 = soac.map ins(%[[FWD]]#0, %[[C]] :
// CHECK: %[[ADJ:.*]] = soac.map ins(%[[SQ]]#0, %[[FWD]]#1, %[[FWD]]#0 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
// CHECK-NOT: math.
// CHECK: soac.yield
// CHECK: return %[[SQ]]#1, %[[ADJ]]
func.func @gate(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %one = arith.constant 1.0 : f64
    %n = arith.negf %v : f64
    %e = math.exp %n : f64
    %d = arith.addf %one, %e : f64
    %s = arith.divf %one, %d : f64
    %t = math.tanh %s : f64
    soac.yield %t : f64
  }
  %sq = soac.map ins(%r : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%q: f64):
    %p = arith.mulf %q, %q : f64
    soac.yield %p : f64
  }
  return %sq : tensor<?xf64>
}
func.func @d_gate(%x: tensor<?xf64>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @gate(%x, %c) : (tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// y = x · exp(w) with only x differentiated: the adjoint reads exp(w), kept;
// log(x)'s value is never read by the adjoint (its partial is 1/x), so the
// forward run does not keep it.
// CHECK-LABEL: func.func private @scaled__vjp_wrt_0(
// CHECK: %[[FWD:.*]]:2 = soac.map
// CHECK: math.exp
// CHECK: math.log
// CHECK: soac.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK: %[[SQ:.*]]:2 = soac.map ins(%[[FWD]]#0,
// CHECK: soac.map ins(%{{.*}}, %[[SQ]]#0, %[[FWD]]#1 :
// CHECK-NOT: math.
// CHECK: soac.yield
// CHECK: return
func.func @scaled(%x: tensor<?xf64>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x, %w : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64, %u: f64):
    %e = math.exp %u : f64
    %l = math.log %v : f64
    %m = arith.mulf %v, %e : f64
    %s = arith.addf %m, %l : f64
    soac.yield %s : f64
  }
  %sq = soac.map ins(%r : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%q: f64):
    %p = arith.mulf %q, %q : f64
    soac.yield %p : f64
  }
  return %sq : tensor<?xf64>
}
func.func @d_scaled(%x: tensor<?xf64>, %w: tensor<?xf64>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @scaled(%x, %w, %c) wrt [0] : (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// A nested SOAC doing more than arithmetic (here a map of exp) is kept as a
// row per row of the outer map; the outer adjoint reads it and computes again
// only the plain sum (the log's partial 1/s needs no log).
// CHECK-LABEL: func.func private @log_sum_exp__vjp_wrt_0(
// CHECK: %[[FWD:.*]]:2 = soac.map ins(%{{.*}} : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?x?xf64>
// CHECK: %[[E:.*]] = soac.map
// CHECK: math.exp
// CHECK: %[[L:.*]] = math.log
// CHECK: soac.yield %[[L]], %[[E]] : f64, tensor<?xf64>
// CHECK: %[[SQ:.*]]:2 = soac.map ins(%[[FWD]]#0,
// CHECK: soac.map ins(%[[SQ]]#0, %[[FWD]]#1 : tensor<?xf64>, tensor<?x?xf64>)
// CHECK-NOT: math.
// CHECK: return %[[SQ]]#1,
func.func @log_sum_exp(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %e = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %ev = math.exp %v : f64
      soac.yield %ev : f64
    }
    %zero = arith.constant 0.0 : f64
    %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %l = math.log %s : f64
    soac.yield %l : f64
  }
  %sq = soac.map ins(%r : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%q: f64):
    %p = arith.mulf %q, %q : f64
    soac.yield %p : f64
  }
  return %sq : tensor<?xf64>
}
func.func @d_log_sum_exp(%x: tensor<?x?xf64>, %c: tensor<?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @log_sum_exp(%x, %c) : (tensor<?x?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
