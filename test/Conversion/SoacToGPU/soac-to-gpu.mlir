// Each SOAC becomes kernels on buffers between to_buffer and to_tensor.
// RUN: soac-opt %s --convert-soac-to-gpu --split-input-file | FileCheck %s

// A map: the map feeding it is recomputed in its kernel. Its body is
// small, so each thread computes four rows, a block (256 threads) apart: it
// reads all four (the ones past the end read the last row), then computes
// and stores each that exists.
// CHECK-LABEL: func.func @saxpy_of_squares
// CHECK-DAG: %[[X:.*]] = bufferization.to_buffer %arg1 read_only
// CHECK-DAG: %[[N:.*]] = tensor.dim %arg1
// CHECK-DAG: %[[OUT:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[THREADS:.*]] = arith.ceildivui %[[N]], %c4
// CHECK: arith.ceildivui %[[THREADS]], %c256
// CHECK: gpu.launch blocks(%[[BLOCK:.*]], %{{.*}}, %{{.*}}) in {{.*}} threads(%[[THREAD:.*]], %{{.*}}, %{{.*}}) in
// CHECK: %[[ROWS:.*]] = arith.muli %[[BLOCK]], %c1024
// CHECK: %[[FIRST:.*]] = arith.addi %[[ROWS]], %[[THREAD]]
// CHECK: scf.if
// CHECK: %[[LAST:.*]] = arith.subi %[[N]], %c1
// CHECK: memref.load %[[X]][%[[FIRST]]]
// CHECK: %[[SECOND:.*]] = arith.addi %[[FIRST]], %c256
// CHECK: %[[CLAMPED:.*]] = arith.minui %[[SECOND]], %[[LAST]]
// CHECK: memref.load %[[X]][%[[CLAMPED]]]
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[X]]
// CHECK-NOT: memref.load
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[FIRST]]]
// CHECK: %[[EXISTS:.*]] = arith.cmpi ult, %[[SECOND]], %[[N]]
// CHECK: scf.if %[[EXISTS]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[SECOND]]]
// CHECK-NOT: gpu.launch
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @saxpy_of_squares(%a: f32, %x: tensor<?xf32>) -> tensor<?xf32> {
  %sq = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %m = arith.mulf %v, %v : f32
    soac.yield %m : f32
  }
  %r = soac.map ins(%sq : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %m = arith.mulf %a, %v : f32
    soac.yield %m : f32
  }
  return %r : tensor<?xf32>
}

// -----

// A reduce: blocks fold interleaved rows (addf commutes), combine by a
// butterfly of warp shuffles and workgroup memory; one block combines the
// blocks' results, launched only when there are several blocks (a single
// block stores the total itself); the host reads the total.
// CHECK-LABEL: func.func @sum
// CHECK: %[[PARTIALS:.*]] = memref.alloc(%[[BLOCKS:.*]]) : memref<?xf32>
// CHECK: %[[TOTALS:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt, %[[BLOCKS]], %{{.*}} : index
// CHECK: gpu.launch blocks
// CHECK-SAME: workgroup(%[[SCRATCH:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: %[[INTO:.*]] = arith.select %[[SEVERAL]], %[[PARTIALS]], %[[TOTALS]]
// CHECK: memref.store %{{.*}}, %[[INTO]]
// CHECK: scf.if %[[SEVERAL]] {
// CHECK-NOT: }
// CHECK: gpu.launch blocks
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.*}}, %[[TOTALS]]
// CHECK: gpu.terminator
// CHECK: }
// CHECK: %[[TOTAL:.*]] = memref.load %[[TOTALS]]
// CHECK-NEXT: return %[[TOTAL]]
func.func @sum(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}

// -----

// A scan: block totals, their exclusive scan (shuffles up) in one block,
// then each block rescans its rows, tiles of 4 consecutive rows per thread:
// 4 reads, the block scan of the threads' totals, 4 writes.
// CHECK-LABEL: func.func @cumsum
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: gpu.shuffle  up
// CHECK: %[[TILE:.*]] = arith.constant 1024 : index
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[TILE]]
// CHECK-COUNT-4: memref.load
// CHECK: gpu.shuffle  up
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK: bufferization.to_tensor
func.func @cumsum(%x: tensor<?xi32>) -> tensor<?xi32> {
  %zero = arith.constant 0 : i32
  %s = soac.scan ins(%x : tensor<?xi32>) init(%zero : i32) -> tensor<?xi32> {
  ^bb0(%a: i32, %b: i32):
    %r = arith.addi %a, %b : i32
    soac.yield %r : i32
  }
  return %s : tensor<?xi32>
}

// -----

// A histogram with + is one atomic add per value, after a copy of dest. Up
// to 4096 bins and values, one block copies, waits, then adds, in one
// launch; larger ones take a launch for each.
// CHECK-LABEL: func.func @histogram
// CHECK: %[[LIMIT:.*]] = arith.constant 4096 : index
// CHECK: %[[FEW_VALUES:.*]] = arith.cmpi ule, %{{.*}}, %[[LIMIT]]
// CHECK: %[[FEW_BINS:.*]] = arith.cmpi ule, %{{.*}}, %[[LIMIT]]
// CHECK: %[[SMALL:.*]] = arith.andi %[[FEW_BINS]], %[[FEW_VALUES]]
// CHECK: scf.if %[[SMALL]] {
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]],
// CHECK: scf.for
// CHECK: memref.store
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: memref.atomic_rmw addf
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: memref.store
// CHECK: gpu.launch
// CHECK: arith.cmpi ult
// CHECK: memref.atomic_rmw addf
func.func @histogram(%h: tensor<?xf32>, %i: tensor<?xi64>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xi64>)
         ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// -----
// A histogram of adjoints starting from zeros (a splat): its copy stores the
// splat's value, so no kernel fills the splat first (a launch fewer per
// histogram in D-LSTM's reverse time step); its sizes come from the splat's
// operand.
// CHECK-LABEL: func.func @histogram_from_zeros
// CHECK-SAME: (%{{.*}}: index, %{{.*}}: tensor<?xi64>, %{{.*}}: tensor<?xf32>)
// CHECK-NOT: tensor.splat
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: gpu.launch
// CHECK: scf.if
// CHECK: gpu.launch
// CHECK: memref.store %[[ZERO]], %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: gpu.barrier
// CHECK: gpu.terminator
// CHECK-NOT: tensor.splat
// CHECK: return
func.func @histogram_from_zeros(%bins: index, %i: tensor<?xi64>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %h = tensor.splat %zero[%bins] : tensor<?xf32>
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xi64>)
         ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// -----

// The sizes of a splat read right after it, by the program and by the host
// code of the histogram, come from its operand (folding them erases the
// tensor.dim ops after the walk that found the splat, not during it).
// CHECK-LABEL: func.func @splat_sizes_read_next
// CHECK-SAME: (%[[BINS:.*]]: index, %{{.*}}: tensor<?xi64>, %{{.*}}: tensor<?xf32>)
// CHECK-NOT: tensor.splat
// CHECK: return %{{.*}}, %[[BINS]] : tensor<?xf32>, index
func.func @splat_sizes_read_next(%bins: index, %i: tensor<?xi64>, %v: tensor<?xf32>) -> (tensor<?xf32>, index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %h = tensor.splat %zero[%bins] : tensor<?xf32>
  %n = tensor.dim %h, %c0 : tensor<?xf32>
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xi64>)
         ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r, %n : tensor<?xf32>, index
}

// -----

// Rows combined elementwise in a flat view of dest; a static 0 among the
// sizes still makes a dynamic flat size.
// CHECK-LABEL: func.func @histogram_of_empty_rows
// CHECK: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<0x?xf32> into memref<?xf32>
// CHECK: memref.atomic_rmw addf
func.func @histogram_of_empty_rows(%h: tensor<0x?xf32>, %i: tensor<?xindex>, %v: tensor<?x?xf32>, %z: tensor<?xf32>) -> tensor<0x?xf32> {
  %r = soac.reduce_by_index dest(%h : tensor<0x?xf32>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?x?xf32>) init(%z : tensor<?xf32>) -> tensor<0x?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %s = soac.map ins(%a, %b : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%x: f32, %y: f32):
      %t = arith.addf %x, %y : f32
      soac.yield %t : f32
    }
    soac.yield %s : tensor<?xf32>
  }
  return %r : tensor<0x?xf32>
}

// -----

// Several destinations whose operator combines each by itself (a sum, a
// count of i64 and the maximum of vector rows): one histogram per
// destination, each its own atomics, sharing the indices.
// CHECK-LABEL: func.func @sum_count_and_max_histogram
// CHECK: memref.atomic_rmw addf
// CHECK: memref.atomic_rmw addi
// CHECK: memref.collapse_shape
// CHECK: llvm.cmpxchg
// CHECK-NOT: soac.reduce_by_index
func.func @sum_count_and_max_histogram(%h: tensor<?xf32>, %c: tensor<?xi64>, %m: tensor<?x3xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>, %n: tensor<?xi64>, %w: tensor<?x3xf32>, %low: tensor<3xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<?x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %none = arith.constant 0 : i64
  %r:3 = soac.reduce_by_index dest(%h, %c, %m : tensor<?xf32>, tensor<?xi64>, tensor<?x3xf32>) indices(%i : tensor<?xindex>)
           ins(%v, %n, %w : tensor<?xf32>, tensor<?xi64>, tensor<?x3xf32>) init(%zero, %none, %low : f32, i64, tensor<3xf32>) -> tensor<?xf32>, tensor<?xi64>, tensor<?x3xf32> {
  ^bb0(%a: f32, %ac: i64, %am: tensor<3xf32>, %b: f32, %bc: i64, %bm: tensor<3xf32>):
    %s = arith.addf %a, %b : f32
    %t = arith.addi %ac, %bc : i64
    %u = soac.map ins(%am, %bm : tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
    ^bb1(%x: f32, %y: f32):
      %z = arith.maximumf %x, %y : f32
      soac.yield %z : f32
    }
    soac.yield %s, %t, %u : f32, i64, tensor<3xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xi64>, tensor<?x3xf32>
}

// -----

// Other operators: a compare-and-swap loop around the operator.
// CHECK-LABEL: func.func @product_histogram
// CHECK: scf.while
// CHECK: arith.mulf
// CHECK: llvm.cmpxchg
func.func @product_histogram(%h: tensor<?xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %one = arith.constant 1.0 : f32
  %r = soac.reduce_by_index dest(%h : tensor<?xf32>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?xf32>) init(%one : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// -----

// A scatter: a copy of dest, then one thread per index and row element
// (one block doing both in one launch when they are few, as above).
// CHECK-LABEL: func.func @scatter_rows
// CHECK: scf.if
// CHECK: gpu.barrier
// CHECK: } else {
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: scf.if
// CHECK: memref.store
func.func @scatter_rows(%d: tensor<?x?xf32>, %i: tensor<?xindex>, %v: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = soac.scatter dest(%d : tensor<?x?xf32>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A map over rows with a reduce in its body: one block per row (segmented
// reduce); the inner map is recomputed, not materialized.
// CHECK-LABEL: func.func @matvec
// CHECK: gpu.launch blocks
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf64, #gpu.address_space<workgroup>>)
// CHECK-NOT: memref.alloc
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: gpu.shuffle  xor
// CHECK: gpu.barrier
func.func @matvec(%A: tensor<?x?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %p = soac.map ins(%row, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%x: f64, %y: f64):
      %t = arith.addf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}

// -----

// A map over rows with a scan in its body (segmented scan) writes the scan
// into its result rows.
// CHECK-LABEL: func.func @row_cumsum
// CHECK: gpu.launch
// CHECK: gpu.shuffle  up
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] : memref<?x?xf64>
func.func @row_cumsum(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %c = soac.scan ins(%row : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %c : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// -----

// iota: one thread per element.
// CHECK-LABEL: func.func @iota
// CHECK: gpu.launch
// CHECK: arith.index_cast %{{.*}} : index to i32
func.func @iota(%n: index) -> tensor<?xi32> {
  %r = soac.iota %n : tensor<?xi32>
  return %r : tensor<?xi32>
}

// -----

// Rows of rank two, maps nested two deep: one thread per row runs the body
// as loops (the inner reduce folds the recomputed products; nothing is
// materialized but the result).
// CHECK-LABEL: func.func @batched_matvec
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: gpu.launch
// CHECK-NOT: workgroup
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[J]], %[[K]]] : memref<?x?x?xf32
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: memref.store %[[SUM]], %[[OUT]][%{{.*}}, %[[J]]]
func.func @batched_matvec(%a: tensor<?x?x?xf32>, %v: tensor<?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%a : tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %rows = soac.map ins(%m : tensor<?x?xf32>) -> tensor<?xf32> {
    ^bb1(%row: tensor<?xf32>):
      %p = soac.map ins(%row, %v : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb2(%x: f32, %y: f32):
        %t = arith.mulf %x, %y : f32
        soac.yield %t : f32
      }
      %s = soac.reduce ins(%p : tensor<?xf32>) init(%zero : f32) -> f32 {
      ^bb3(%x: f32, %y: f32):
        %t = arith.addf %x, %y : f32
        soac.yield %t : f32
      }
      soac.yield %s : f32
    }
    soac.yield %rows : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A vector of the row read at computed indices, and a slice of a tensor at a
// row-dependent offset: read where they lie.
// CHECK-LABEL: func.func @gather_in_row
// CHECK: gpu.launch
// CHECK: %[[I:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xindex
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[I]]] : memref<?x?xf64
// CHECK-LABEL: func.func @slice_at_row_offset
// CHECK: gpu.launch
// CHECK: %[[START:.*]] = arith.index_cast
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %[[AT:.*]] = arith.addi %[[START]], %[[J]]
// CHECK: memref.load %{{.*}}[%[[AT]]] : memref<?xf64
func.func @gather_in_row(%m: tensor<?x?xf64>, %idx: tensor<?xindex>) -> tensor<?x?xf64> {
  %r = soac.map ins(%m : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %g = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
    ^bb1(%i: index):
      %e = tensor.extract %row[%i] : tensor<?xf64>
      soac.yield %e : f64
    }
    soac.yield %g : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}
func.func @slice_at_row_offset(%starts: tensor<?xi64>, %x: tensor<?xf64>) -> tensor<?x4xf64> {
  %r = soac.map ins(%starts : tensor<?xi64>) -> tensor<?x4xf64> {
  ^bb0(%s: i64):
    %start = arith.index_cast %s : i64 to index
    %w = tensor.extract_slice %x[%start] [4] [1] : tensor<?xf64> to tensor<4xf64>
    soac.yield %w : tensor<4xf64>
  }
  return %r : tensor<?x4xf64>
}

// -----

// A fold of the rows of the row with an elementwise operator: each element
// of the result is a loop over the rows, read where they lie.
// CHECK-LABEL: func.func @fold_rows_per_row
// CHECK: gpu.launch
// CHECK-NOT: memref.alloc
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %[[SUM:.*]] = scf.for %[[K:[a-z0-9_]+]] = {{.*}} iter_args
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[K]], %[[J]]]
// CHECK: arith.addf
// CHECK: memref.store %[[SUM]], %{{.*}}[%{{.*}}, %[[J]]]
func.func @fold_rows_per_row(%x: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%x : tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %n = tensor.dim %m, %c1 : tensor<?x?xf32>
    %init = tensor.splat %zero[%n] : tensor<?xf32>
    %s = soac.reduce ins(%m : tensor<?x?xf32>) init(%init : tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%a: tensor<?xf32>, %b: tensor<?xf32>):
      %t = soac.map ins(%a, %b : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb2(%p: f32, %q: f32):
        %u = arith.addf %p, %q : f32
        soac.yield %u : f32
      }
      soac.yield %t : tensor<?xf32>
    }
    soac.yield %s : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// An element inserted into a row: chosen where its index is, the
// destination's element elsewhere.
// CHECK-LABEL: func.func @insert_per_row
// CHECK: gpu.launch
// CHECK: %[[TWICE:.*]] = arith.addf
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: %[[HERE:.*]] = arith.cmpi eq, %[[J]]
// CHECK: arith.select %[[HERE]], %[[TWICE]]
func.func @insert_per_row(%x: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %n = tensor.dim %row, %c0 : tensor<?xf64>
    %z = tensor.splat %zero[%n] : tensor<?xf64>
    %first = tensor.extract %row[%c0] : tensor<?xf64>
    %twice = arith.addf %first, %first : f64
    %w = tensor.insert %twice into %z[%c1] : tensor<?xf64>
    soac.yield %w : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// -----

// A small matrix built per row: its elements chosen by their row-major
// position (constant positions fold after canonicalization).
// CHECK-LABEL: func.func @matrix_per_row
// CHECK: gpu.launch
// CHECK-NOT: memref.alloc
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK: arith.mulf
func.func @matrix_per_row(%x: tensor<?xf32>, %v: tensor<2xf32>) -> tensor<?x2xf32> {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?x2xf32> {
  ^bb0(%s: f32):
    %m = tensor.from_elements %s, %one, %zero, %s : tensor<2x2xf32>
    %d = tensor.cast %m : tensor<2x2xf32> to tensor<?x?xf32>
    %mv = soac.map ins(%d : tensor<?x?xf32>) -> tensor<2xf32> {
    ^bb1(%row: tensor<?xf32>):
      %p = soac.map ins(%row, %v : tensor<?xf32>, tensor<2xf32>) -> tensor<?xf32> {
      ^bb2(%a: f32, %b: f32):
        %t = arith.mulf %a, %b : f32
        soac.yield %t : f32
      }
      %dot = soac.reduce ins(%p : tensor<?xf32>) init(%zero : f32) -> f32 {
      ^bb3(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        soac.yield %t : f32
      }
      soac.yield %dot : f32
    }
    soac.yield %mv : tensor<2xf32>
  }
  return %r : tensor<?x2xf32>
}

// -----

// A histogram per row, in the thread's scratch memory (bins, then the
// thread innermost): its destination copied there, then one pass over the
// values, each combined into its bin where the index is one (unsigned
// comparison: negative indices are dropped too); then the row is written.
// CHECK-LABEL: func.func @histogram_per_row
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%arg2, %[[ROWS:.*]]) : memref<?x?xf32>
// CHECK: %[[OUT:.*]] = memref.alloc(%[[ROWS]], %arg2) : memref<?x?xf32>
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[BIN:[a-z0-9_]+]] =
// CHECK-NEXT: memref.store %{{.*}}, %[[SCRATCH]][%[[BIN]], %[[ROW]]]
// CHECK: scf.for
// CHECK: %[[INDEX:.*]] = memref.load
// CHECK: %[[HIT:.*]] = arith.cmpi ult, %[[INDEX]], %arg2
// CHECK: scf.if %[[HIT]]
// CHECK: %[[OLD:.*]] = memref.load %[[SCRATCH]][%[[INDEX]], %[[ROW]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]]
// CHECK: memref.store %[[NEW]], %[[SCRATCH]][%[[INDEX]], %[[ROW]]]
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: memref.load %[[SCRATCH]][%[[J]], %[[ROW]]]
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[ROW]], %[[J]]]
func.func @histogram_per_row(%idx: tensor<?x?xindex>, %val: tensor<?x?xf32>, %bins: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%idx, %val : tensor<?x?xindex>, tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%i: tensor<?xindex>, %v: tensor<?xf32>):
    %z = tensor.splat %zero[%bins] : tensor<?xf32>
    %h = soac.reduce_by_index dest(%z : tensor<?xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
    ^bb1(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    soac.yield %h : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A reduce over matrices combined elementwise: a column reduce over their
// elements (partial folds of row ranges, then one thread per element, which
// is not launched when there is one range: its folds are the result).
// CHECK-LABEL: func.func @sum_of_matrices
// CHECK: %[[PARTIALS:.*]] = memref.alloc
// CHECK: %[[OUT:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf32>
// CHECK: %[[SEVERAL:.*]] = arith.cmpi ugt
// CHECK: gpu.launch
// CHECK: scf.if %[[SEVERAL]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[PARTIALS]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
// CHECK: scf.if %[[SEVERAL]] {
// CHECK-NOT: }
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[OUT]][%{{.*}}, %{{.*}}] : memref<?x?xf32>
func.func @sum_of_matrices(%x: tensor<?x?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = soac.reduce ins(%x : tensor<?x?x?xf32>) init(%init : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>):
    %t = soac.map ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb1(%p: tensor<?xf32>, %q: tensor<?xf32>):
      %u = soac.map ins(%p, %q : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb2(%e: f32, %f: f32):
        %w = arith.addf %e, %f : f32
        soac.yield %w : f32
      }
      soac.yield %u : tensor<?xf32>
    }
    soac.yield %t : tensor<?x?xf32>
  }
  return %s : tensor<?x?xf32>
}

// -----

// A histogram of rows combined elementwise: one atomic per element of each
// row, into a rank-1 view of the copy of the destination.
// CHECK-LABEL: func.func @histogram_of_rows
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]]
// CHECK: gpu.launch
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[FLAT]]
func.func @histogram_of_rows(%h: tensor<?x?xf32>, %i: tensor<?xindex>, %v: tensor<?x?xf32>, %z: tensor<?xf32>) -> tensor<?x?xf32> {
  %r = soac.reduce_by_index dest(%h : tensor<?x?xf32>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?x?xf32>) init(%z : tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    %s = soac.map ins(%a, %b : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%p: f32, %q: f32):
      %t = arith.addf %p, %q : f32
      soac.yield %t : f32
    }
    soac.yield %s : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A splat still used once the SOACs are lowered (a gradient's zeros, say):
// one thread per element fills it, row-major indices from the flat id
// (left to bufferization, it would be a fill on the host).
// CHECK-LABEL: func.func @zeros
// CHECK: %[[OUT:.*]] = memref.alloc(%arg0) : memref<?x3xf64>
// CHECK: gpu.launch
// CHECK: arith.remui
// CHECK: arith.divui
// CHECK: memref.store %arg1, %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]]
// CHECK-NOT: tensor.splat
func.func @zeros(%n: index, %v: f64) -> tensor<?x3xf64> {
  %z = tensor.splat %v[%n] : tensor<?x3xf64>
  return %z : tensor<?x3xf64>
}

// -----

// A map whose body is over 32 ops (bound by its arithmetic): one row per
// thread, no row read twice.
// CHECK-LABEL: func.func @long_map_body
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]]
// CHECK: %[[THREADS:.*]] = arith.ceildivui %[[N]], %c1
// CHECK: gpu.launch
// CHECK: memref.load
// CHECK-NOT: memref.load
// CHECK-NOT: arith.minui
// CHECK: memref.store
// CHECK-NOT: memref.store
// CHECK: gpu.terminator
func.func @long_map_body(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v0: f32):
    %v1 = arith.mulf %v0, %v0 : f32
    %v2 = arith.mulf %v1, %v1 : f32
    %v3 = arith.mulf %v2, %v2 : f32
    %v4 = arith.mulf %v3, %v3 : f32
    %v5 = arith.mulf %v4, %v4 : f32
    %v6 = arith.mulf %v5, %v5 : f32
    %v7 = arith.mulf %v6, %v6 : f32
    %v8 = arith.mulf %v7, %v7 : f32
    %v9 = arith.mulf %v8, %v8 : f32
    %v10 = arith.mulf %v9, %v9 : f32
    %v11 = arith.mulf %v10, %v10 : f32
    %v12 = arith.mulf %v11, %v11 : f32
    %v13 = arith.mulf %v12, %v12 : f32
    %v14 = arith.mulf %v13, %v13 : f32
    %v15 = arith.mulf %v14, %v14 : f32
    %v16 = arith.mulf %v15, %v15 : f32
    %v17 = arith.mulf %v16, %v16 : f32
    %v18 = arith.mulf %v17, %v17 : f32
    %v19 = arith.mulf %v18, %v18 : f32
    %v20 = arith.mulf %v19, %v19 : f32
    %v21 = arith.mulf %v20, %v20 : f32
    %v22 = arith.mulf %v21, %v21 : f32
    %v23 = arith.mulf %v22, %v22 : f32
    %v24 = arith.mulf %v23, %v23 : f32
    %v25 = arith.mulf %v24, %v24 : f32
    %v26 = arith.mulf %v25, %v25 : f32
    %v27 = arith.mulf %v26, %v26 : f32
    %v28 = arith.mulf %v27, %v27 : f32
    %v29 = arith.mulf %v28, %v28 : f32
    %v30 = arith.mulf %v29, %v29 : f32
    %v31 = arith.mulf %v30, %v30 : f32
    %v32 = arith.mulf %v31, %v31 : f32
    soac.yield %v32 : f32
  }
  return %r : tensor<?xf32>
}

// -----

// One thread per row: a nested map whose elements each cost a loop (dot
// products) and which only SOACs read is computed once per thread into
// scratch memory (its elements, then the thread, innermost), and read from
// there, not recomputed at each of its two reads.
// CHECK-LABEL: func.func @products_read_twice
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[SCRATCH]][%[[K]], %[[ROW]]]
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: memref.load %[[SCRATCH]][%[[J]], %[[ROW]]]
// CHECK-NEXT: memref.load %[[SCRATCH]][%[[J]], %[[ROW]]]
// CHECK: gpu.terminator
func.func @products_read_twice(%x: tensor<?x?xf64>, %L: tensor<?x?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%xi: tensor<?xf64>):
    %s = soac.map ins(%L : tensor<?x?xf64>) -> tensor<?xf64> {
    ^bb1(%row: tensor<?xf64>):
      %p = soac.map ins(%row, %xi : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.mulf %a, %b : f64
        soac.yield %t : f64
      }
      %dot = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %dot : f64
    }
    %sq = soac.map ins(%s, %s : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%a: f64, %b: f64):
      %t = arith.mulf %a, %b : f64
      soac.yield %t : f64
    }
    %n2 = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %n2 : f64
  }
  return %r : tensor<?xf64>
}

// -----

// A nested map of histogram rows, summed by a reduce: each row's histogram is
// computed once into scratch (bins, then the thread) and copied into the
// map's scratch, which the fold reads; not computed again for each bin the
// fold reads.
// CHECK-LABEL: func.func @summed_histograms_per_row
// CHECK: %[[ROWS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: %[[BINS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf32>
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: memref.store %{{.*}}, %[[BINS]][%[[K]], %{{.*}}, %[[ROW]]]
// CHECK: memref.store %{{.*}}, %[[BINS]][%[[K]], %{{.*}}, %[[ROW]]]
// CHECK: memref.store %{{.*}}, %[[ROWS]][%[[K]], %{{.*}}, %[[ROW]]]
// CHECK: scf.for %[[B:[a-z0-9_]+]] =
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK-NEXT: memref.load %[[ROWS]][%[[J]], %[[B]], %[[ROW]]]
// CHECK-NOT: %[[BINS]]
// CHECK: gpu.terminator
func.func @summed_histograms_per_row(%idx: tensor<?x?x?xindex>, %val: tensor<?x?x?xf32>, %bins: index) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%idx, %val : tensor<?x?x?xindex>, tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%i: tensor<?x?xindex>, %v: tensor<?x?xf32>):
    %hs = soac.map ins(%i, %v : tensor<?x?xindex>, tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb1(%ir: tensor<?xindex>, %vr: tensor<?xf32>):
      %z = tensor.splat %zero[%bins] : tensor<?xf32>
      %h = soac.reduce_by_index dest(%z : tensor<?xf32>) indices(%ir : tensor<?xindex>) ins(%vr : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
      ^bb2(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        soac.yield %t : f32
      }
      soac.yield %h : tensor<?xf32>
    }
    %z0 = tensor.splat %zero[%bins] : tensor<?xf32>
    %s = soac.reduce ins(%hs : tensor<?x?xf32>) init(%z0 : tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%a: tensor<?xf32>, %b: tensor<?xf32>):
      %t = soac.map ins(%a, %b : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb2(%p: f32, %q: f32):
        %u = arith.addf %p, %q : f32
        soac.yield %u : f32
      }
      soac.yield %t : tensor<?xf32>
    }
    soac.yield %s : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}


// -----

// A nested map yielding a scalar and a row of dot products, read by three
// SOACs: each component is computed once into scratch (its scalars, and its
// rows element by element), and the readers load from there. The row of dot
// products, which the component also squares, is itself kept in scratch
// (it is yielded by a map kept there): its dot products run once, not once
// for the squares' read and once for the component's row.
// CHECK-LABEL: func.func @component_products_per_row
// CHECK: %[[SCALARS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK: %[[PRODUCTS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf64>
// CHECK: %[[DOTS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf64>
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: scf.for %[[J:[a-z0-9_]+]] =
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[DOTS]][%[[K]], %[[J]], %[[ROW]]]
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[DOTS]]
// CHECK-NEXT: memref.load %[[DOTS]]
// CHECK: memref.store %{{.*}}, %[[SCALARS]][%[[K]], %[[ROW]]]
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[DOTS]]
// CHECK-NEXT: memref.store %{{.*}}, %[[PRODUCTS]][%[[K]], %{{.*}}, %[[ROW]]]
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[SCALARS]]
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[SCALARS]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NEXT: memref.load %[[PRODUCTS]]
// CHECK: gpu.terminator
func.func @component_products_per_row(%x: tensor<?x?xf64>, %q: tensor<?x?x?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %m = tensor.dim %q, %c1 : tensor<?x?x?xf64>
  %r:3 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?xf64>, tensor<?x?xf64> {
  ^bb0(%xr: tensor<?xf64>):
    %c:2 = soac.map ins(%q : tensor<?x?x?xf64>) -> tensor<?xf64>, tensor<?x?xf64> {
    ^bb1(%qk: tensor<?x?xf64>):
      %v = soac.map ins(%qk : tensor<?x?xf64>) -> tensor<?xf64> {
      ^bb2(%qrow: tensor<?xf64>):
        %p = soac.map ins(%qrow, %xr : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
        ^bb3(%a: f64, %b: f64):
          %t = arith.mulf %a, %b : f64
          soac.yield %t : f64
        }
        %d = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
        ^bb3(%a: f64, %b: f64):
          %t = arith.addf %a, %b : f64
          soac.yield %t : f64
        }
        soac.yield %d : f64
      }
      %sq = soac.map ins(%v, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.mulf %a, %b : f64
        soac.yield %t : f64
      }
      %s = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %s, %v : f64, tensor<?xf64>
    }
    %total = soac.reduce ins(%c#0 : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %largest = soac.reduce ins(%c#0 : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.maximumf %a, %b : f64
      soac.yield %t : f64
    }
    %z = tensor.splat %zero[%m] : tensor<?xf64>
    %sum = soac.reduce ins(%c#1 : tensor<?x?xf64>) init(%z : tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%a: tensor<?xf64>, %b: tensor<?xf64>):
      %t = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%e: f64, %f: f64):
        %u = arith.addf %e, %f : f64
        soac.yield %u : f64
      }
      soac.yield %t : tensor<?xf64>
    }
    soac.yield %total, %largest, %sum : f64, f64, tensor<?xf64>
  }
  return %r#0, %r#1, %r#2 : tensor<?xf64>, tensor<?xf64>, tensor<?x?xf64>
}

// -----

// The same components, their rows of dot products read by nothing but the
// yield: computed once, element by element, into the component's scratch,
// with no scratch of their own.
// CHECK-LABEL: func.func @component_rows_only_yielded
// CHECK: %[[SCALARS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK: %[[PRODUCTS:.*]] = memref.alloc(%{{.*}}, %{{.*}}, %{{.*}}) : memref<?x?x?xf64>
// CHECK-NOT: memref<?x?x?xf64>
// CHECK: gpu.launch
// CHECK: scf.for %[[K:[a-z0-9_]+]] =
// CHECK: memref.store %{{.*}}, %[[SCALARS]][%[[K]], %{{.*}}]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: memref.store %{{.*}}, %[[PRODUCTS]][%[[K]], %{{.*}}, %{{.*}}]
// CHECK: gpu.terminator
func.func @component_rows_only_yielded(%x: tensor<?x?xf64>, %q: tensor<?x?x?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%xr: tensor<?xf64>):
    %c:2 = soac.map ins(%q : tensor<?x?x?xf64>) -> tensor<?xf64>, tensor<?x?xf64> {
    ^bb1(%qk: tensor<?x?xf64>):
      %v = soac.map ins(%qk : tensor<?x?xf64>) -> tensor<?xf64> {
      ^bb2(%qrow: tensor<?xf64>):
        %p = soac.map ins(%qrow, %xr : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
        ^bb3(%a: f64, %b: f64):
          %t = arith.mulf %a, %b : f64
          soac.yield %t : f64
        }
        %d = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
        ^bb3(%a: f64, %b: f64):
          %t = arith.addf %a, %b : f64
          soac.yield %t : f64
        }
        soac.yield %d : f64
      }
      %row = tensor.extract_slice %qk[0, 0] [1, 1] [1, 1] : tensor<?x?xf64> to tensor<1xf64>
      %s = soac.reduce ins(%row : tensor<1xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %s, %v : f64, tensor<?xf64>
    }
    %total = soac.reduce ins(%c#0 : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %sums = soac.map ins(%c#1 : tensor<?x?xf64>) -> tensor<?xf64> {
    ^bb1(%rowk: tensor<?xf64>):
      %t = soac.reduce ins(%rowk : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %u = arith.addf %a, %b : f64
        soac.yield %u : f64
      }
      soac.yield %t : f64
    }
    %largest = soac.reduce ins(%sums : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.maximumf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %total, %largest : f64, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xf64>
}

// -----

// Reads stacked over a nested map and flattened (as sparse adjoints scatter
// them): the collapses are views of the map's rows, and the histogram runs
// the map's body once per row for both (a loop over its rows, then over
// their elements), not once per element of each; one histogram per thread
// in one pass.
// CHECK-LABEL: func.func @stacked_reads_per_row
// CHECK: %[[BINS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[P:[a-z0-9_]+]] =
// CHECK: %[[I:.*]] = memref.load %{{.*}}[%[[P]]]
// CHECK: scf.for %[[O:[a-z0-9_]+]] =
// CHECK: %[[J:.*]] = memref.load %{{.*}}[%[[O]]]
// CHECK-NEXT: arith.addi %[[I]], %[[J]] : index
// CHECK: memref.store %{{.*}}, %[[BINS]][%{{.*}}, %[[ROW]]]
// CHECK: gpu.terminator
func.func @stacked_reads_per_row(%x: tensor<?x?xf64>, %positions: tensor<?xindex>, %offsets: tensor<?xindex>) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %width = tensor.dim %x, %c1 : tensor<?x?xf64>
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %reads:2 = soac.map ins(%positions : tensor<?xindex>) -> tensor<?x?xindex>, tensor<?x?xf64> {
    ^bb1(%i: index):
      %pairs:2 = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xindex>, tensor<?xf64> {
      ^bb2(%j: index):
        %p = arith.addi %i, %j : index
        %v = tensor.extract %row[%p] : tensor<?xf64>
        soac.yield %p, %v : index, f64
      }
      soac.yield %pairs#0, %pairs#1 : tensor<?xindex>, tensor<?xf64>
    }
    %flat_i = tensor.collapse_shape %reads#0 [[0, 1]] : tensor<?x?xindex> into tensor<?xindex>
    %flat_v = tensor.collapse_shape %reads#1 [[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
    %z = tensor.splat %zero[%width] : tensor<?xf64>
    %h = soac.reduce_by_index dest(%z : tensor<?xf64>) indices(%flat_i : tensor<?xindex>) ins(%flat_v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %h : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// -----

// A row split by tensor.expand_shape (as soac-flatten makes) is a view of
// its source: element (part, w) is the source's at part * width + w. The
// width, computed in the body from the row's size, is computed on the host
// for the kernel's loop bounds, dividing by one where `parts` is zero (the
// host computes it even when no thread does).
// CHECK-LABEL: func.func @split_rows_per_row(
// CHECK-SAME: %[[X:[a-z0-9_]+]]: tensor<?x?xf64>, %[[PARTS:[a-z0-9_]+]]: index
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[PARTS]], %{{.*}} : index
// CHECK: %[[DIVISOR:.*]] = arith.select %[[ZERO]], %{{.*}}, %[[PARTS]] : index
// CHECK: arith.divui %{{.*}}, %[[DIVISOR]] : index
// CHECK: gpu.launch
// CHECK: %[[ROW:[a-z0-9_]+]] = arith.addi
// CHECK: scf.for %[[W:[a-z0-9_]+]] = %{{.*}} to %{{.*}}
// CHECK: scf.for %[[PART:[a-z0-9_]+]] = %{{.*}} to %[[PARTS]]
// CHECK: %[[AT:.*]] = arith.muli %[[PART]], %{{.*}} : index
// CHECK: %[[POSITION:.*]] = arith.addi %[[AT]], %[[W]] : index
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[POSITION]]]
// CHECK: gpu.terminator
func.func @split_rows_per_row(%x: tensor<?x?xf64>, %parts: index) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %n = tensor.dim %row, %c0 : tensor<?xf64>
    %width = arith.divui %n, %parts : index
    %sq = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%e: f64):
      %t = arith.mulf %e, %e : f64
      soac.yield %t : f64
    }
    %split = tensor.expand_shape %sq [[0, 1]] output_shape [%parts, %width] : tensor<?xf64> into tensor<?x?xf64>
    %z = tensor.splat %zero[%width] : tensor<?xf64>
    %s = soac.reduce ins(%split : tensor<?x?xf64>) init(%z : tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%a: tensor<?xf64>, %b: tensor<?xf64>):
      %t = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%p: f64, %q: f64):
        %u = arith.addf %p, %q : f64
        soac.yield %u : f64
      }
      soac.yield %t : tensor<?xf64>
    }
    soac.yield %s : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// -----

// Read at one index (tensor.extract), the same map is recomputed where read:
// computing all of its elements could cost more than the ones read.
// CHECK-LABEL: func.func @products_read_at_one_index
// CHECK-COUNT-2: memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK-NOT: memref.store
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.store
// CHECK: memref.store
// CHECK: gpu.terminator
func.func @products_read_at_one_index(%x: tensor<?x?xf64>, %L: tensor<?x?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%xi: tensor<?xf64>):
    %s = soac.map ins(%L : tensor<?x?xf64>) -> tensor<?xf64> {
    ^bb1(%row: tensor<?xf64>):
      %p = soac.map ins(%row, %xi : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.mulf %a, %b : f64
        soac.yield %t : f64
      }
      %dot = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %dot : f64
    }
    %sq = soac.map ins(%s, %s : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%a: f64, %b: f64):
      %t = arith.mulf %a, %b : f64
      soac.yield %t : f64
    }
    %n2 = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %c0 = arith.constant 0 : index
    %first = tensor.extract %s[%c0] : tensor<?xf64>
    soac.yield %n2, %first : f64, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xf64>
}

// -----

// The results of one nested map are written by one loop nest: each element
// is computed once for both of its outputs (the maps are views, computed
// where written).
// CHECK-LABEL: func.func @two_results_per_row
// CHECK: %[[FIRST:.*]] = memref.alloc
// CHECK: %[[SECOND:.*]] = memref.alloc
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[X:.*]] = memref.load
// CHECK: %[[E:.*]] = math.exp %[[X]]
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: memref.store %[[E]], %[[FIRST]]
// CHECK-NEXT: memref.store %[[S]], %[[SECOND]]
// CHECK-NOT: scf.for
// CHECK: gpu.terminator
func.func @two_results_per_row(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %r:2 = soac.map ins(%x : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>, tensor<?x?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %a:2 = soac.map ins(%m : tensor<?x?xf32>) -> tensor<?x?xf32>, tensor<?x?xf32> {
    ^bb1(%row: tensor<?xf32>):
      %e:2 = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32>, tensor<?xf32> {
      ^bb2(%v: f32):
        %p = math.exp %v : f32
        %q = arith.mulf %v, %v : f32
        soac.yield %p, %q : f32, f32
      }
      soac.yield %e#0, %e#1 : tensor<?xf32>, tensor<?xf32>
    }
    soac.yield %a#0, %a#1 : tensor<?x?xf32>, tensor<?x?xf32>
  }
  return %r#0, %r#1 : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}

// -----

// A product: one block per 64 x 64 tile of the result, its threads staging
// 16-deep slices of both operands in workgroup memory (rows of 64 values
// padded to 65) between barriers and accumulating 4 x 4 results each; the
// dynamic inner sizes checked first. With fewer than 128 tiles, the slices
// of k are split among blocks of the same tile (as many splits as make 128
// blocks, each of 4 slices at least; none for an empty result): each block
// writes its split's results, and a second kernel sums them in split
// order. One split writes C directly.
// CHECK-LABEL: func.func @product
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[K:.*]], %[[KB:.*]] : index
// CHECK: soac.check %[[SAME]], "'soac.matmul': the operands' inner sizes differ: %lld and %lld" with %[[K]], %[[KB]]
// CHECK: %[[C:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xf64>
// CHECK: %[[TILES:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[RESULTS:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[SLICES:.*]] = arith.ceildivui %[[K]], %c16 : index
// CHECK: arith.ceildivui %c128{{.*}}, %[[TILES]] : index
// CHECK: arith.ceildivui %[[SLICES]], %c4 : index
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[RESULTS]], %{{.*}} : index
// CHECK: %[[SPLITS:.*]] = arith.select %[[EMPTY]], %{{.*}}, %{{.*}} : index
// CHECK: %[[IN_PARTS:.*]] = arith.cmpi ugt, %[[SPLITS]], %{{.*}} : index
// CHECK: %[[PARTS_SIZE:.*]] = arith.select %[[IN_PARTS]], %[[SPLITS]], %{{.*}} : index
// CHECK: %[[PARTS:.*]] = memref.alloc(%[[PARTS_SIZE]], %{{.*}}, %{{.*}}) : memref<?x?x?xf64>
// CHECK: %[[BLOCKS:.*]] = arith.muli %[[TILES]], %[[SPLITS]] : index
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %[[BLOCKS]], {{.*}} workgroup(%[[A:.*]] : memref<1040xf64, #gpu.address_space<workgroup>>, %[[B:.*]] : memref<1040xf64, #gpu.address_space<workgroup>>)
// CHECK: %{{.*}}:16 = scf.for
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
// CHECK-COUNT-4: memref.load %[[A]]
// CHECK: gpu.barrier
// CHECK: scf.if %[[IN_PARTS]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[PARTS]]
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.store %{{.*}}, %[[C]]
// CHECK: gpu.terminator
// CHECK: scf.if %[[IN_PARTS]] {
// CHECK: gpu.launch
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[SPLITS]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f64)
// CHECK: memref.load %[[PARTS]]
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: gpu.terminator
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) transpose_lhs -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}

// -----

// Two rows of one map of dot products per component, kept in the thread's
// scratch: one loop stores both, running the dot product once per element.
// CHECK-LABEL: func.func @two_rows_of_one_map_per_row
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} iter_args
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK-NEXT: memref.store
// CHECK-NOT: arith.mulf
// CHECK: return
func.func @two_rows_of_one_map_per_row(%x: tensor<?x?xf64>, %q: tensor<?x?x?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%xr: tensor<?xf64>):
    %c:2 = soac.map ins(%q : tensor<?x?x?xf64>) -> tensor<?x?xf64>, tensor<?x?xf64> {
    ^bb1(%qk: tensor<?x?xf64>):
      %v:2 = soac.map ins(%qk : tensor<?x?xf64>) -> tensor<?xf64>, tensor<?xf64> {
      ^bb2(%qrow: tensor<?xf64>):
        %p = soac.map ins(%qrow, %xr : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
        ^bb3(%a: f64, %b: f64):
          %t = arith.mulf %a, %b : f64
          soac.yield %t : f64
        }
        %d = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
        ^bb3(%a: f64, %b: f64):
          %t = arith.addf %a, %b : f64
          soac.yield %t : f64
        }
        %d2 = arith.mulf %d, %d : f64
        soac.yield %d, %d2 : f64, f64
      }
      soac.yield %v#0, %v#1 : tensor<?xf64>, tensor<?xf64>
    }
    %per = soac.map ins(%c#0, %c#1 : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?xf64> {
    ^bb1(%v: tensor<?xf64>, %w: tensor<?xf64>):
      %diff = soac.map ins(%w, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.subf %a, %b : f64
        soac.yield %t : f64
      }
      %s = soac.reduce ins(%diff : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %s : f64
    }
    %total = soac.reduce ins(%per : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %total : f64
  }
  return %r : tensor<?xf64>
}

// -----

// Rows only a sum reads (a reduce (+) of them alone: the adjoint of
// k-means' centroids summed over the points, and a scalar): the thread
// kernel writes one row per warp, ceil(n / 32), of its lanes' rows summed
// by shuffles, which lane 0 stores; every launched thread runs a row (those
// past the last, clamped to it, add -0.0) unless there are none, and the
// reduces fold the warps' rows. Not where the body checks what it reads
// (@gathered_summed_rows in the GPU tests).
// CHECK-LABEL: func.func @summed_rows
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0{{.*}} : tensor<?x?xf64>
// CHECK: %[[WARPS:.*]] = arith.ceildivui %[[N]], %c32{{.*}} : index
// CHECK: %[[ROWS:.*]] = memref.alloc(%[[WARPS]], %{{.*}}, %{{.*}}) : memref<?x?x?xf64>
// CHECK: %[[WARPS2:.*]] = arith.ceildivui %[[N]], %c32{{.*}} : index
// CHECK: %[[TOTALS:.*]] = memref.alloc(%[[WARPS2]]) : memref<?xf64>
// CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c64{{.*}},
// CHECK: %[[SOME:.*]] = arith.cmpi ne, %[[N]], %{{.*}} : index
// CHECK: scf.if %[[SOME]] {
// CHECK: arith.minui %{{.*}}, %{{.*}} : index
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[NEG_ZERO:.*]] = arith.constant -0.000000e+00 : f64
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NEG_ZERO]] : f64
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32{{.*}}, %c32_i32{{.*}} : f64
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : f64
// CHECK: memref.store %{{.*}}, %[[ROWS]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<?x?x?xf64>
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32{{.*}} : f64
// CHECK: memref.store %{{.*}}, %[[TOTALS]][%{{.*}}] : memref<?xf64>
// CHECK: gpu.terminator
func.func @summed_rows(%x: tensor<?x?xf64>, %c: tensor<?x?xf64>) -> (tensor<?x?xf64>, f64) {
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?x?xf64>, tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>):
    %d = soac.map ins(%c : tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb1(%row: tensor<?xf64>):
      %e = soac.map ins(%p, %row : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %s = arith.subf %a, %b : f64
        soac.yield %s : f64
      }
      soac.yield %e : tensor<?xf64>
    }
    %t = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %s = arith.addf %a, %b : f64
      soac.yield %s : f64
    }
    soac.yield %d, %t : tensor<?x?xf64>, f64
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = tensor.dim %c, %c0 : tensor<?x?xf64>
  %dd = tensor.dim %c, %c1 : tensor<?x?xf64>
  %init = tensor.splat %zero[%k, %dd] : tensor<?x?xf64>
  %sum = soac.reduce ins(%r#0 : tensor<?x?x?xf64>) init(%init : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>):
    %m = soac.map ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb1(%ra: tensor<?xf64>, %rb: tensor<?xf64>):
      %n = soac.map ins(%ra, %rb : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%u: f64, %v: f64):
        %w = arith.addf %u, %v : f64
        soac.yield %w : f64
      }
      soac.yield %n : tensor<?xf64>
    }
    soac.yield %m : tensor<?x?xf64>
  }
  %total = soac.reduce ins(%r#1 : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %sum, %total : tensor<?x?xf64>, f64
}

// -----

// The same rows, the body reading an element at a checked index: a thread
// whose check fails skips its code up to the next shuffle, so the rows are
// written per thread, not summed per warp.
// CHECK-LABEL: func.func @summed_rows_checked
// CHECK: gpu.launch
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.terminator
func.func @summed_rows_checked(%x: tensor<?xf64>, %idx: tensor<?xindex>, %c: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?x?x?xf64> {
  ^bb0(%i: index):
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    %v = tensor.extract %x[%j] : tensor<?xf64>
    %d = soac.map ins(%c : tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb1(%row: tensor<?xf64>):
      %e = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64):
        %s = arith.mulf %a, %v : f64
        soac.yield %s : f64
      }
      soac.yield %e : tensor<?xf64>
    }
    soac.yield %d : tensor<?x?xf64>
  }
  %k = tensor.dim %c, %c0 : tensor<?x?xf64>
  %dd = tensor.dim %c, %c1 : tensor<?x?xf64>
  %init = tensor.splat %zero[%k, %dd] : tensor<?x?xf64>
  %sum = soac.reduce ins(%r : tensor<?x?x?xf64>) init(%init : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>):
    %m = soac.map ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb1(%ra: tensor<?xf64>, %rb: tensor<?xf64>):
      %q = soac.map ins(%ra, %rb : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%u: f64, %w: f64):
        %t = arith.addf %u, %w : f64
        soac.yield %t : f64
      }
      soac.yield %q : tensor<?xf64>
    }
    soac.yield %m : tensor<?x?xf64>
  }
  return %sum : tensor<?x?xf64>
}
