// A map whose results only sums, additions, subtractions, negations, and
// products with or divisions by inactive values use, up to the return, has
// adjoints that do not depend on its results: its
// adjoint map re-executes the body anyway, so it yields the results too, and
// the map does not run in the forward code (Engine/ResultsFromAdjoint.h). A
// map whose results something reads by value keeps its forward run.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// A loss summed over rows, plus a constant: one map, which yields each
// row's gradient and its loss; the sum reads the map's last result.
// CHECK-LABEL: func.func private @loss__vjp_wrt_0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?xf64>, %[[B:[^:]*]]: f64, %[[C:[^:]*]]: f64)
// CHECK-NOT: soac.map
// CHECK: %[[BOTH:.*]]:2 = soac.map ins(%[[X]] : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>
// CHECK: math.exp
// CHECK: soac.yield %{{.*}}, %{{.*}} : f64, f64
// CHECK-NOT: soac.map
// CHECK: %[[SUM:.*]] = soac.reduce ins(%[[BOTH]]#1 : tensor<?xf64>)
// CHECK: %[[VALUE:.*]] = arith.addf %[[SUM]], %[[B]] : f64
// CHECK: return %[[VALUE]], %[[BOTH]]#0
func.func @loss(%x: tensor<?xf64>, %b: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %terms = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %e = math.exp %v : f64
    %t = arith.mulf %e, %v : f64
    soac.yield %t : f64
  }
  %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %c: f64):
    %t = arith.addf %a, %c : f64
    soac.yield %t : f64
  }
  %total = arith.addf %s, %b : f64
  return %total : f64
}
func.func @d_loss(%x: tensor<?xf64>, %b: f64, %c: f64) -> (f64, tensor<?xf64>) {
  %r:2 = soac.vjp @loss(%x, %b, %c) wrt [0] : (tensor<?xf64>, f64, f64) -> (f64, tensor<?xf64>)
  return %r#0, %r#1 : f64, tensor<?xf64>
}

// -----

// GMM's shape: a log-sum-exp per point of a nested map over components. The
// point map's forward run kept each point's nested results for its adjoint;
// now the adjoint map computes them once per point, and its nested adjoint
// reads what the nested map keeps (the exp) inside the point's row.
// CHECK-LABEL: func.func private @log_likelihood__vjp_wrt_0(
// CHECK-NOT: soac.map
// CHECK: %[[POINTS:.*]]:2 = soac.map ins(%{{.*}} : tensor<?x?xf64>) -> tensor<?x?xf64>, tensor<?xf64>
// CHECK: soac.map ins(%{{.*}} : tensor<?xf64>) -> tensor<?xf64>
// CHECK: math.exp
// CHECK: math.log
// CHECK: soac.yield %{{.*}}, %{{.*}} : tensor<?xf64>, f64
// CHECK: %[[SUM:.*]] = soac.reduce ins(%[[POINTS]]#1 : tensor<?xf64>)
// CHECK: %[[VALUE:.*]] = arith.negf %[[SUM]] : f64
// CHECK: return %[[VALUE]], %[[POINTS]]#0
func.func @log_likelihood(%x: tensor<?x?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %points = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %e = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %ev = math.exp %v : f64
      soac.yield %ev : f64
    }
    %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %l = math.log %s : f64
    soac.yield %l : f64
  }
  %total = soac.reduce ins(%points : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %negated = arith.negf %total : f64
  return %negated : f64
}
func.func @d_log_likelihood(%x: tensor<?x?xf64>, %c: f64) -> (f64, tensor<?x?xf64>) {
  %r:2 = soac.vjp @log_likelihood(%x, %c) : (tensor<?x?xf64>, f64) -> (f64, tensor<?x?xf64>)
  return %r#0, %r#1 : f64, tensor<?x?xf64>
}

// -----

// A mean: the sum divided by the number of rows, halved. One map.
// CHECK-LABEL: func.func private @mean__vjp_wrt_0(
// CHECK-NOT: soac.map
// CHECK: %[[BOTH:.*]]:2 = soac.map ins(%{{.*}} : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>
// CHECK-NOT: soac.map
// CHECK: %[[SUM:.*]] = soac.reduce ins(%[[BOTH]]#1 : tensor<?xf64>)
// CHECK: %[[MEAN:.*]] = arith.divf %[[SUM]], %{{.*}} : f64
// CHECK: %[[HALF:.*]] = arith.mulf %[[MEAN]], %{{.*}} : f64
// CHECK: return %[[HALF]], %[[BOTH]]#0
func.func @mean(%x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %c0 = arith.constant 0 : index
  %terms = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %e = math.exp %v : f64
    soac.yield %e : f64
  }
  %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %c: f64):
    %t = arith.addf %a, %c : f64
    soac.yield %t : f64
  }
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f64
  %mean = arith.divf %s, %nf : f64
  %halved = arith.mulf %mean, %half : f64
  return %halved : f64
}
func.func @d_mean(%x: tensor<?xf64>, %c: f64) -> (f64, tensor<?xf64>) {
  %r:2 = soac.vjp @mean(%x, %c) : (tensor<?xf64>, f64) -> (f64, tensor<?xf64>)
  return %r#0, %r#1 : f64, tensor<?xf64>
}

// -----

// Results read by value keep the forward run: the residuals squared (their
// adjoint is 2r·c̄), the largest term (its adjoint is where the maximum is),
// a term read inside another map's body. The squares, only summed, come
// from their adjoint map.
// CHECK-LABEL: func.func private @read_by_value__vjp_wrt_0(
// CHECK: %[[R:.*]] = soac.map ins(%{{.*}}, %{{.*}} : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
// CHECK: arith.subf
// CHECK: %[[LARGEST:.*]] = soac.reduce ins(%[[R]] : tensor<?xf64>)
// CHECK: arith.maximumf
// CHECK: tensor.extract %[[R]]
// CHECK: %[[SQUARES:.*]]:2 = soac.map ins(%[[R]] : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>
// CHECK: %[[SUM:.*]] = soac.reduce ins(%[[SQUARES]]#1 : tensor<?xf64>)
// CHECK: return %[[SUM]], %[[LARGEST]],
func.func @read_by_value(%x: tensor<?xf64>, %y: tensor<?xf64>) -> (f64, f64, tensor<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %low = arith.constant 0xFFF0000000000000 : f64
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%x, %y : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %d = arith.subf %a, %b : f64
    soac.yield %d : f64
  }
  %largest = soac.reduce ins(%r : tensor<?xf64>) init(%low : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.maximumf %a, %b : f64
    soac.yield %t : f64
  }
  %squares = soac.map ins(%r : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %q = arith.mulf %a, %a : f64
    soac.yield %q : f64
  }
  %sum = soac.reduce ins(%squares : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %shifted = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %first = tensor.extract %r[%c0] : tensor<?xf64>
    %s = arith.addf %a, %first : f64
    soac.yield %s : f64
  }
  return %sum, %largest, %shifted : f64, f64, tensor<?xf64>
}
func.func @d_read_by_value(%x: tensor<?xf64>, %y: tensor<?xf64>, %c: f64, %d: f64, %e: tensor<?xf64>) -> tensor<?xf64> {
  %r:4 = soac.vjp @read_by_value(%x, %y, %c, %d, %e) wrt [0] : (tensor<?xf64>, tensor<?xf64>, f64, f64, tensor<?xf64>) -> (f64, f64, tensor<?xf64>, tensor<?xf64>)
  return %r#3 : tensor<?xf64>
}

// -----

// A sum multiplied by an active value, or by itself: the other factor's
// adjoint reads the sum, so the map runs in the forward code.
// CHECK-LABEL: func.func private @weighted__vjp_wrt_0_1(
// CHECK: %[[TERMS:.*]] = soac.map ins(%{{.*}} : tensor<?xf64>) -> tensor<?xf64> {
// CHECK: math.exp
// CHECK: soac.reduce ins(%[[TERMS]] : tensor<?xf64>)
// CHECK: return
func.func @weighted(%x: tensor<?xf64>, %b: f64) -> (f64, f64) {
  %zero = arith.constant 0.0 : f64
  %terms = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %e = math.exp %v : f64
    soac.yield %e : f64
  }
  %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %c: f64):
    %t = arith.addf %a, %c : f64
    soac.yield %t : f64
  }
  %weighted = arith.mulf %s, %b : f64
  %squared = arith.mulf %s, %s : f64
  return %weighted, %squared : f64, f64
}
func.func @d_weighted(%x: tensor<?xf64>, %b: f64, %c: f64, %d: f64) -> tensor<?xf64> {
  %r:4 = soac.vjp @weighted(%x, %b, %c, %d) : (tensor<?xf64>, f64, f64, f64) -> (f64, f64, tensor<?xf64>, f64)
  return %r#2 : tensor<?xf64>
}
