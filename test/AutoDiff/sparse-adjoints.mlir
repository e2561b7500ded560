// Reads at computed indices of a free tensor, however deep in maps, reduces
// and loops, have sparse adjoints: each scope passes its reads, stacked, to
// the scope that encloses it, and one reduce_by_index (+) adds them where the
// tensor is defined; never a dense adjoint of the tensor per row.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// A convolution: a map of a reduce of a map reading x[i + j]. The adjoint
// map yields a row of indices and a row of values per output position; they
// are merged into one batch and scattered once. The adjoint of the sum is
// the same for every term: the inner map reads it, not a map broadcasting it.
// CHECK-LABEL: func.func private @conv__vjp_wrt_0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?xf64>, %[[W:[^:]*]]: tensor<?xf64>
// CHECK: %[[READS:.*]]:2 = soac.map ins(%{{.*}}) -> tensor<?x?xindex>, tensor<?x?xf64>
// CHECK-NOT: tensor.splat
// CHECK: soac.map ins(%[[W]] : tensor<?xf64>) -> tensor<?xindex>, tensor<?xf64>
// CHECK: soac.check_index
// CHECK: soac.yield %{{.*}}, %{{.*}} : index, f64
// CHECK: soac.yield %{{.*}}, %{{.*}} : tensor<?xindex>, tensor<?xf64>
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[ZEROS:.*]] = tensor.splat %{{.*}}[%[[N]]] : tensor<?xf64>
// CHECK: %[[I:.*]] = tensor.collapse_shape %[[READS]]#0 {{\[}}[0, 1]] : tensor<?x?xindex> into tensor<?xindex>
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[READS]]#1 {{\[}}[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
// CHECK: %[[DX:.*]] = soac.reduce_by_index dest(%[[ZEROS]] : tensor<?xf64>) indices(%[[I]] : tensor<?xindex>) ins(%[[V]] : tensor<?xf64>)
// CHECK-NOT: soac.reduce ins
// CHECK: return %{{.*}}, %[[DX]]
func.func @conv(%x: tensor<?xf64>, %w: tensor<?xf64>, %positions: tensor<?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %out = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %terms = soac.map ins(%w : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%wj: f64):
      %xi = tensor.extract %x[%i] : tensor<?xf64>
      %t = arith.mulf %wj, %xi : f64
      soac.yield %t : f64
    }
    %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %out : tensor<?xf64>
}
func.func @d_conv(%x: tensor<?xf64>, %w: tensor<?xf64>, %p: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @conv(%x, %w, %p, %c) wrt [0] : (tensor<?xf64>, tensor<?xf64>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// Reads in a loop in a map: the backward loop records each iteration's
// (index, value) at the iteration's position, the map stacks the records of
// its rows, and one reduce_by_index adds them.
// CHECK-LABEL: func.func private @walk__vjp_wrt_0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?xf64>
// CHECK: %[[READS:.*]]:2 = soac.map ins(%{{.*}}) -> tensor<?x?xindex>, tensor<?x?xf64>
// CHECK: %[[IS:.*]] = tensor.empty(%[[T:.*]]) : tensor<?xindex>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}}, %[[IREC:.*]] = %[[IS]], %[[VREC:.*]] = %{{.*}}) -> (f64, tensor<?xindex>, tensor<?xf64>)
// CHECK: arith.subi
// CHECK: %[[K:.*]] = arith.subi
// CHECK: %[[CHECKED:.*]] = soac.check_index
// CHECK: tensor.insert %[[CHECKED]] into %[[IREC]][%[[K]]] : tensor<?xindex>
// CHECK: tensor.insert %{{.*}} into %[[VREC]][%[[K]]] : tensor<?xf64>
// CHECK: tensor.collapse_shape %[[READS]]#0
// CHECK: tensor.collapse_shape %[[READS]]#1
// CHECK: %[[DX:.*]] = soac.reduce_by_index
// CHECK-NOT: soac.reduce ins
// CHECK: return %{{.*}}, %[[DX]]
func.func @walk(%x: tensor<?xf64>, %paths: tensor<?x?xindex>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%paths : tensor<?x?xindex>) -> tensor<?xf64> {
  ^bb0(%path: tensor<?xindex>):
    %t = tensor.dim %path, %c0 : tensor<?xindex>
    %acc = scf.for %s = %c0 to %t step %c1 iter_args(%a = %zero) -> (f64) {
      %p = tensor.extract %path[%s] : tensor<?xindex>
      %v = tensor.extract %x[%p] : tensor<?xf64>
      %m = arith.mulf %a, %v : f64
      %n = arith.addf %m, %v : f64
      scf.yield %n : f64
    }
    soac.yield %acc : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_walk(%x: tensor<?xf64>, %paths: tensor<?x?xindex>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @walk(%x, %paths, %c) wrt [0] : (tensor<?xf64>, tensor<?x?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// A loop at the top level adds its reads in place into the adjoint it
// carries: one element per read, nothing recorded.
// CHECK-LABEL: func.func private @steps__vjp_wrt_0(
// CHECK: scf.for %{{.*}} iter_args(%{{.*}}, %[[DX:.*]] = %{{.*}}) -> (f64, tensor<?xf64>)
// CHECK: %[[OLD:.*]] = tensor.extract %[[DX]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK: tensor.insert %[[NEW]] into %[[DX]]
// CHECK-NOT: soac.reduce_by_index
// CHECK: return
func.func @steps(%x: tensor<?xf64>, %path: tensor<?xindex>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %t = tensor.dim %path, %c0 : tensor<?xindex>
  %acc = scf.for %s = %c0 to %t step %c1 iter_args(%a = %zero) -> (f64) {
    %p = tensor.extract %path[%s] : tensor<?xindex>
    %v = tensor.extract %x[%p] : tensor<?xf64>
    %m = arith.mulf %a, %v : f64
    %n = arith.addf %m, %v : f64
    scf.yield %n : f64
  }
  return %acc : f64
}
func.func @d_steps(%x: tensor<?xf64>, %path: tensor<?xindex>, %c: f64) -> tensor<?xf64> {
  %r:2 = soac.vjp @steps(%x, %path, %c) wrt [0] : (tensor<?xf64>, tensor<?xindex>, f64) -> (f64, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// A read in a branch in a map: the branch yields its (index, value), the
// other branch an index 0 and a value 0 (which add nothing); the map stacks
// them as any read, and one reduce_by_index adds them.
// CHECK-LABEL: func.func private @masked__vjp_wrt_0(
// CHECK: %[[READS:.*]]:2 = soac.map ins(%{{.*}}) -> tensor<?x?xindex>, tensor<?x?xf64>
// CHECK: %[[INDEX:.*]] = scf.if %{{.*}} -> (index) {
// CHECK: %[[CHECKED:.*]] = soac.check_index
// CHECK: scf.yield %[[CHECKED]] : index
// CHECK: } else {
// CHECK: scf.yield %c0 : index
// CHECK: soac.yield %[[INDEX]], %{{.*}} : index, f64
// CHECK: tensor.collapse_shape %[[READS]]#0
// CHECK: %[[DX:.*]] = soac.reduce_by_index
// CHECK-NOT: soac.reduce ins
// CHECK: return %{{.*}}, %[[DX]]
func.func @masked(%x: tensor<?xf64>, %starts: tensor<?xindex>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %r = soac.map ins(%starts : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %terms = soac.map ins(%w : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%wj: f64):
      %inside = arith.cmpi ult, %i, %n : index
      %v = scf.if %inside -> (f64) {
        %xi = tensor.extract %x[%i] : tensor<?xf64>
        scf.yield %xi : f64
      } else {
        scf.yield %zero : f64
      }
      %m = arith.mulf %v, %wj : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_masked(%x: tensor<?xf64>, %starts: tensor<?xindex>, %w: tensor<?xf64>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @masked(%x, %starts, %w, %c) wrt [0] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// Rows whose reads differ in number (an iota of a size read from data)
// cannot be stacked: each row scatters its reads into a dense adjoint, and
// the rows' adjoints are summed (correct, but not sparse).
// CHECK-LABEL: func.func private @ragged__vjp_wrt_0(
// CHECK: %[[ROWS:.*]] = soac.map ins(%{{.*}}) -> tensor<?x?xf64>
// CHECK: soac.reduce_by_index
// CHECK: soac.reduce ins(%[[ROWS]] : tensor<?x?xf64>)
func.func @ragged(%x: tensor<?xf64>, %lengths: tensor<?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%lengths : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%len: index):
    %offsets = soac.iota %len : tensor<?xindex>
    %terms = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%j: index):
      %v = tensor.extract %x[%j] : tensor<?xf64>
      soac.yield %v : f64
    }
    %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_ragged(%x: tensor<?xf64>, %lengths: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @ragged(%x, %lengths, %c) wrt [0] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// A row read at two indices (x[i, j] of a rank-3 x, as numpy's x[i, j]) is
// an indexed read like an element's: each map row yields its position
// i * size(1) + j and its row, and one reduce_by_index adds the rows into x's
// adjoint with its first two dimensions merged. Never a dense adjoint of x
// per row (which made such gradients cost rows × the size of x).
// CHECK-LABEL: func.func private @pairs__vjp_wrt_0(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x?xf64>
// CHECK: %[[READS:.*]]:2 = soac.map ins(%{{.*}}) -> tensor<?xindex>, tensor<?x?xf64>
// CHECK-NOT: tensor.splat
// CHECK: soac.check_index
// CHECK: soac.check_index
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: soac.yield %{{.*}}, %{{.*}} : index, tensor<?xf64>
// CHECK: %[[MERGED:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x?xf64> into tensor<?x?xf64>
// CHECK: %[[SUM:.*]] = soac.reduce_by_index dest(%[[MERGED]] : tensor<?x?xf64>) indices(%[[READS]]#0 : tensor<?xindex>) ins(%[[READS]]#1 : tensor<?x?xf64>)
// CHECK: %[[DX:.*]] = tensor.expand_shape %[[SUM]] {{\[}}[0, 1], [2]]
// CHECK-NOT: soac.reduce ins
// CHECK: return %{{.*}}, %[[DX]]
func.func @pairs(%x: tensor<?x?x?xf64>, %is: tensor<?xindex>, %js: tensor<?xindex>) -> tensor<?xf64> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %d = tensor.dim %x, %c2 : tensor<?x?x?xf64>
  %r = soac.map ins(%is, %js : tensor<?xindex>, tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index, %j: index):
    %row = tensor.extract_slice %x[%i, %j, 0] [1, 1, %d] [1, 1, 1] : tensor<?x?x?xf64> to tensor<?xf64>
    %s = soac.reduce ins(%row : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_pairs(%x: tensor<?x?x?xf64>, %is: tensor<?xindex>, %js: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?x?x?xf64> {
  %r:2 = soac.vjp @pairs(%x, %is, %js, %c) wrt [0] : (tensor<?x?x?xf64>, tensor<?xindex>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?x?xf64>)
  return %r#1 : tensor<?x?x?xf64>
}

// -----

// A gather one map deeper whose inner size is computed in the outer body,
// as the frontend computes sizes (tensor.dim cast to i64 and back): the
// size is the same in every row, so the rows' reads stack into one batch
// and one reduce_by_index adds them; no dense adjoint of x per row (which
// made the gradient of x.T cost size(x) per row).
// (The values added are the cotangent's elements themselves.)
// CHECK-LABEL: func.func private @transposed__vjp_wrt_0(
// CHECK: %[[INDICES:.*]] = soac.map ins(%{{.*}}) -> tensor<?x?xindex>
// CHECK-NOT: tensor.splat
// CHECK: soac.check_index
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[INDICES]] {{\[}}[0, 1]]
// CHECK: soac.reduce_by_index dest(%{{.*}} : tensor<?xf64>) indices(%[[FLAT]] : tensor<?xindex>)
// CHECK-NOT: soac.reduce ins
// CHECK: return
func.func @transposed(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cols = tensor.dim %x, %c1 : tensor<?x?xf64>
  %columns = soac.iota %cols : tensor<?xindex>
  %r = soac.map ins(%columns : tensor<?xindex>) -> tensor<?x?xf64> {
  ^bb0(%i: index):
    %rows = tensor.dim %x, %c0 : tensor<?x?xf64>
    %wide = arith.index_cast %rows : index to i64
    %n = arith.index_cast %wide : i64 to index
    %js = soac.iota %n : tensor<?xindex>
    %column = soac.map ins(%js : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%j: index):
      %v = tensor.extract %x[%j, %i] : tensor<?x?xf64>
      soac.yield %v : f64
    }
    soac.yield %column : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}
func.func @d_transposed(%x: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @transposed(%x, %c) wrt [0] : (tensor<?x?xf64>, tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
