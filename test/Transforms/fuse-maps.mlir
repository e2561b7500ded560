// RUN: soac-opt %s --soac-fuse-maps --split-input-file | FileCheck %s

// Two reduces over the results of one map become one reduce, which the map
// then fuses into when lowered.
// CHECK-LABEL: func.func @sibling_reduces
// CHECK: %[[M:.*]]:2 = soac.map
// CHECK: %[[R:.*]]:2 = soac.reduce ins(%[[M]]#0, %[[M]]#1 : tensor<?xf32>, tensor<?xf32>) init(%{{.*}}, %{{.*}} : f32, f32)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[X:.*]]: f32, %[[Y:.*]]: f32):
// CHECK-DAG: arith.addf %[[A]], %[[X]]
// CHECK-DAG: arith.maximumf %[[B]], %[[Y]]
// CHECK-NOT: soac.reduce
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @sibling_reduces(%x: tensor<?xf32>, %zero: f32, %low: f32) -> (f32, f32) {
  %m:2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    %c = math.cos %v : f32
    soac.yield %s, %c : f32, f32
  }
  %sum = soac.reduce ins(%m#0 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %max = soac.reduce ins(%m#1 : tensor<?xf32>) init(%low : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.maximumf %a, %b : f32
    soac.yield %r : f32
  }
  return %sum, %max : f32, f32
}

// -----

// An op between the siblings that reads the first one's result moves after
// the merged op.
// CHECK-LABEL: func.func @dependent_moves_after
// CHECK: %[[R:.*]]:2 = soac.reduce
// CHECK-NEXT: ^bb0
// CHECK: %[[D:.*]] = arith.mulf %[[R]]#0, %[[R]]#0
// CHECK: return %[[D]], %[[R]]#1
func.func @dependent_moves_after(%x: tensor<?xf32>, %zero: f32) -> (f32, f32) {
  %m:2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    soac.yield %s, %v : f32, f32
  }
  %sum = soac.reduce ins(%m#0 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %square = arith.mulf %sum, %sum : f32
  %other = soac.reduce ins(%m#1 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %square, %other : f32, f32
}

// -----

// A sibling that needs another sibling's result cannot run beside it.
// CHECK-LABEL: func.func @dependent_siblings_stay
// CHECK: %[[S:.*]] = soac.reduce
// CHECK: soac.reduce ins(%{{.*}}#1 : tensor<?xf32>) init(%[[S]] : f32)
func.func @dependent_siblings_stay(%x: tensor<?xf32>, %zero: f32) -> f32 {
  %m:2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    soac.yield %s, %v : f32, f32
  }
  %sum = soac.reduce ins(%m#0 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %other = soac.reduce ins(%m#1 : tensor<?xf32>) init(%sum : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %other : f32
}

// -----

// A map read by SOACs of different kinds stays a producer when it calls a
// math function (recomputing it per reader would cost more than storing it).
// CHECK-LABEL: func.func @other_readers_stay
// CHECK-COUNT-3: soac.
func.func @other_readers_stay(%x: tensor<?xf32>, %zero: f32) -> (f32, tensor<?xf32>) {
  %m:2 = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    soac.yield %s, %v : f32, f32
  }
  %sum = soac.reduce ins(%m#0 : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %twice = soac.map ins(%m#1 : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %r = arith.addf %v, %v : f32
    soac.yield %r : f32
  }
  return %sum, %twice : f32, tensor<?xf32>
}

// -----

// A cheap map (a few arithmetic ops per element) read by SOACs of different
// kinds is copied once per reader, each copy computing what its reader
// reads; the copy read by a map fuses into it, the other waits to fuse into
// the reduce when that is lowered. No row of %m is stored.
// CHECK-LABEL: func.func @cheap_map_recomputed_per_reader
// CHECK: %[[FOR_REDUCE:.*]] = soac.map ins(%arg0, %arg1 : tensor<?x?xf64>, tensor<?xf64>) -> tensor<?x?xf64>
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = soac.map ins(%arg2, %arg0, %arg1 : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xf64>) -> tensor<?x?xf64>
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: arith.addf %{{.*}}, %[[P]]
// CHECK: %[[R:.*]] = soac.reduce ins(%[[FOR_REDUCE]] : tensor<?x?xf64>)
// CHECK: return %[[SUM]], %[[R]]
func.func @cheap_map_recomputed_per_reader(%x: tensor<?x?xf64>, %g: tensor<?xf64>, %acc: tensor<?x?xf64>, %zero: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %m:2 = soac.map ins(%x, %g : tensor<?x?xf64>, tensor<?xf64>) -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>, %s: f64):
    %p:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %a = arith.mulf %e, %s : f64
      %b = arith.addf %e, %s : f64
      soac.yield %a, %b : f64, f64
    }
    soac.yield %p#0, %p#1 : tensor<?xf64>, tensor<?xf64>
  }
  %sum = soac.map ins(%acc, %m#0 : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%u: tensor<?xf64>, %v: tensor<?xf64>):
    %t = soac.map ins(%u, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%c: f64, %d: f64):
      %w = arith.addf %c, %d : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  %r = soac.reduce ins(%m#1 : tensor<?x?xf64>) init(%zero : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
    %t = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%c: f64, %d: f64):
      %w = arith.addf %c, %d : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  return %sum, %r : tensor<?x?xf64>, tensor<?xf64>
}

// -----

// A cheap map read by two maps, one of which reads the other's result (the
// adjoints of x[1:] and x[:-1] in a gradient), cannot merge them: it is
// copied into each, so that no row of %m is stored. Each copy fuses into its
// reader, and then the first reader into the second: one loop in all.
// CHECK-LABEL: func.func @cheap_map_recomputed_for_dependent_maps
// CHECK-SAME: (%[[X:.*]]: tensor<?xf64>, %[[S:.*]]: f64)
// CHECK: %[[R:.*]] = soac.map ins(%[[X]] : tensor<?xf64>) -> tensor<?xf64>
// CHECK-NEXT: ^bb0(%[[E:.*]]: f64):
// CHECK-NEXT: %[[A:.*]] = arith.mulf %[[E]], %[[S]]
// CHECK-NEXT: %[[B:.*]] = arith.addf %[[E]], %[[S]]
// CHECK-NEXT: %[[F:.*]] = arith.addf %[[A]], %[[B]]
// CHECK-NEXT: %[[T:.*]] = arith.subf %[[F]], %[[B]]
// CHECK-NEXT: soac.yield %[[T]]
// CHECK-NOT: soac.map
// CHECK: return %[[R]]
func.func @cheap_map_recomputed_for_dependent_maps(%x: tensor<?xf64>, %s: f64) -> tensor<?xf64> {
  %m:2 = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%e: f64):
    %a = arith.mulf %e, %s : f64
    %b = arith.addf %e, %s : f64
    soac.yield %a, %b : f64, f64
  }
  %first = soac.map ins(%m#0, %m#1 : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %second = soac.map ins(%first, %m#1 : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%f: f64, %b: f64):
    %t = arith.subf %f, %b : f64
    soac.yield %t : f64
  }
  return %second : tensor<?xf64>
}

// -----

// A map read only by one map becomes part of it.
// CHECK-LABEL: func.func @map_into_map
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[Y:.*]]: f32, %[[X:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = math.sin %[[X]]
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[Y]], %[[S]]
// CHECK-NEXT: soac.yield %[[R]]
// CHECK-NOT: soac.map
func.func @map_into_map(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %s = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %r = math.sin %v : f32
    soac.yield %r : f32
  }
  %t = soac.map ins(%y, %s : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %t : tensor<?xf32>
}

// -----

// The shape of a gradient's per-component update: %w is read by a map (%p)
// whose own two readers merge first; %p then fuses into the merged map,
// which becomes a sibling of the other readers of %w, and everything ends in
// one map over the components.
// CHECK-LABEL: func.func @readers_merge_inside_out
// CHECK: soac.map
// CHECK-NOT: soac.map
// CHECK: return
func.func @readers_merge_inside_out(%x: tensor<?xf32>, %a0: tensor<?xf32>, %a1: tensor<?xf32>, %a2: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %w = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    soac.yield %e : f32
  }
  %p:2 = soac.map ins(%w : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%v: f32):
    %s = math.sin %v : f32
    %c = math.cos %v : f32
    soac.yield %s, %c : f32, f32
  }
  %u0 = soac.map ins(%a0, %w : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %u1 = soac.map ins(%a1, %p#0 : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  %u2 = soac.map ins(%a2, %p#1 : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %u0, %u1, %u2 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
