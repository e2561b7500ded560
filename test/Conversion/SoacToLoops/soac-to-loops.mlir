// RUN: soac-opt %s --convert-soac-to-loops=num-chunks=4 --canonicalize --cse --split-input-file | FileCheck %s
// RUN: soac-opt %s --convert-soac-to-loops=openmp=false --canonicalize --cse --split-input-file | FileCheck %s --check-prefix=SEQ

// A map with scalar rows: a parallel linalg.generic reading its rows at
// linalg.index when there are enough of them to repay a parallel region and
// more than one thread, else a sequential loop (chosen at run time: sizes and
// the thread count are dynamic). Both fill one tensor, made before the
// choice, so that the result is allocated once. The pass declares the
// OpenMP runtime's thread count function.
// CHECK: func.func private @soac_omp_max_threads() -> i32
// CHECK-LABEL: func.func @map_scalar
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK-DAG: %[[MIN:.*]] = arith.constant 16384 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[N:.*]] = tensor.dim %arg0
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: %[[WORK:.*]] = arith.cmpi uge, %[[N]], %[[MIN]] : index
// CHECK: %[[THREADS:.*]] = call @soac_omp_max_threads() : () -> i32
// CHECK: %[[T:.*]] = arith.index_cast %[[THREADS]] : i32 to index
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %[[T]], %[[ONE]] : index
// CHECK: %[[ENOUGH:.*]] = arith.andi %[[WORK]], %[[MANY]] : i1
// Without OpenMP, only the sequential loop, and no thread count.
// SEQ-NOT: soac_omp_max_threads
// SEQ-LABEL: func.func @map_scalar
// SEQ-NOT: scf.if
// SEQ-NOT: linalg.generic
// SEQ: scf.for
// SEQ: arith.mulf
// SEQ: tensor.insert
// CHECK: scf.if %[[ENOUGH]] -> (tensor<?xf32>) {
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%[[EMPTY]] : tensor<?xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[X:.*]] = tensor.extract %arg0[%[[I]]]
// CHECK: %[[M:.*]] = arith.mulf %[[X]], %arg1
// CHECK: linalg.yield %[[M]] : f32
// CHECK: } else {
// CHECK-NOT: tensor.empty
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: arith.mulf
// CHECK: tensor.insert
// CHECK: } {soac.row_loop}
func.func @map_scalar(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %s : f32
    soac.yield %m : f32
  }
  return %r : tensor<?xf32>
}

// -----

// reduce . map: the map is fused (no tensor of squares), chunks are folded in
// parallel, then the 4 chunk results in order.
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: %[[CHUNK:.*]] = arith.ceildivui %{{.*}}, %c4 : index
// CHECK: %[[PARTIALS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args(%[[ACC:.*]] = %cst) -> (f32)
// CHECK: %[[X:.*]] = tensor.extract %arg0[%[[I]]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: arith.addf %[[ACC]], %[[SQ]]
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK: tensor.extract %[[PARTIALS]]
func.func @sum_of_squares(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %sq = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    soac.yield %s : f32
  }
  %s = soac.reduce ins(%sq : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}

// -----

// scan: chunk totals, their exclusive scan, then a parallel rescan per chunk.
// CHECK-LABEL: func.func @cumsum
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: %[[TOTALS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi32>)
// CHECK: %[[OFFSETS:.*]]:2 = scf.for {{.*}} -> (i32, tensor<4xi32>)
// CHECK: scf.forall (%[[C:.*]]) in (4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?xi32>)
// CHECK: %[[START:.*]] = tensor.extract %[[OFFSETS]]#1[%[[C]]]
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[OUT]]
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[START]], %{{.*}} = %[[SLICE]])
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice
func.func @cumsum(%x: tensor<?xi32>) -> tensor<?xi32> {
  %zero = arith.constant 0 : i32
  %r = soac.scan ins(%x : tensor<?xi32>) init(%zero : i32) -> tensor<?xi32> {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %b : i32
    soac.yield %s : i32
  }
  return %r : tensor<?xi32>
}

// -----

// A map yielding rows: an scf.forall writing each row; the nested map is
// sequential (the outer one is already parallel). The dynamic row size is
// known before the map: the nested map's rows are as long as %y, so no copy
// of the body runs first (without rows, the rows' size is 0).
// CHECK-LABEL: func.func @outer_product
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: %[[ROWS:.*]] = arith.cmpi ugt
// CHECK: %[[N:.*]] = tensor.dim %arg1
// CHECK: %[[SIZE:.*]] = arith.select %[[ROWS]], %[[N]], %c0
// CHECK-NOT: scf.if {{.*}} -> (index)
// CHECK: tensor.empty(%{{.*}}, %[[SIZE]]) : tensor<?x?xf32>
// CHECK: scf.forall (%[[I:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[ROW:.*]] = scf.for
// CHECK: tensor.insert
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[ROW]] into %[[OUT]][%[[I]], 0] [1, %{{.*}}] [1, 1]
func.func @outer_product(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?x?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: f32):
    %row = soac.map ins(%y : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%b: f32):
      %m = arith.mulf %a, %b : f32
      soac.yield %m : f32
    }
    soac.yield %row : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// Rows whose size depends on the data: it comes from running the body on
// row 0 (0 rows: size 0).
// CHECK-LABEL: func.func @data_sized_rows
// CHECK: %[[PROBE:.*]] = scf.if %{{.*}} -> (index)
// CHECK: tensor.extract %arg0[%c0]
// CHECK: tensor.empty(%{{.*}}, %[[PROBE]]) : tensor<?x?xf32>
func.func @data_sized_rows(%k: tensor<?xindex>, %y: tensor<?xf32>) -> tensor<?x?xf32> {
  %r = soac.map ins(%k : tensor<?xindex>) -> tensor<?x?xf32> {
  ^bb0(%n: index):
    %row = tensor.extract_slice %y[0] [%n] [1] : tensor<?xf32> to tensor<?xf32>
    soac.yield %row : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A row whose size depends on the data, computed in its slot of the result
// by the parallel form: its size is checked against the slot's before the
// row is written (a row longer than its slot was written past it).
// CHECK-LABEL: func.func @ragged_rows_checked_before_written
// CHECK: scf.forall (%[[I:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %{{.*}})
// CHECK: %[[SLOT:.*]] = tensor.dim %[[OUT]], %c1
// CHECK: %[[N:.*]] = tensor.extract %arg0[%[[I]]]
// CHECK: %[[FITS:.*]] = arith.cmpi eq, %[[N]], %[[SLOT]] : index
// CHECK: cf.assert %[[FITS]], "{{.*}}rows of different sizes"
// CHECK: tensor.empty(%[[N]])
// CHECK: scf.for
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[I]], 0] [1, %[[SLOT]]] [1, 1]
func.func @ragged_rows_checked_before_written(%sizes: tensor<?xindex>) -> tensor<?x?xindex> {
  %r = soac.map ins(%sizes : tensor<?xindex>) -> tensor<?x?xindex> {
  ^bb0(%n: index):
    %row = soac.iota %n : tensor<?xindex>
    soac.yield %row : tensor<?xindex>
  }
  return %r : tensor<?x?xindex>
}

// -----

// Maps nested three deep: every row size is a size of the input, known
// before the outer map; no body is run first (copies of bodies nested in
// bodies would grow exponentially with the depth).
// CHECK-LABEL: func.func @nested_maps
// CHECK-NOT: -> (index)
// CHECK: tensor.dim %arg0, %c2
// CHECK-NOT: -> (index)
// CHECK: return
func.func @nested_maps(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = soac.map ins(%x : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %s = soac.map ins(%m : tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%v: tensor<?xf32>):
      %t = soac.map ins(%v : tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%a: f32):
        %e = math.exp %a : f32
        soac.yield %e : f32
      }
      soac.yield %t : tensor<?xf32>
    }
    soac.yield %s : tensor<?x?xf32>
  }
  return %r : tensor<?x?x?xf32>
}

// -----

// Matrix-vector: rows are slices; the inner map fuses into the inner reduce,
// which is a sequential loop inside the parallel generic.
// CHECK-LABEL: func.func @matvec
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: linalg.generic
// CHECK: %[[ROW:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0] [1, %{{.*}}] [1, 1] : tensor<?x?xf64> to tensor<?xf64>
// CHECK: scf.for
// CHECK: tensor.extract %[[ROW]]
// CHECK: tensor.extract %arg1
// CHECK-NOT: linalg.generic
// CHECK: linalg.yield
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
    ^bb0(%acc: f64, %e: f64):
      %t = arith.addf %acc, %e : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}

// -----

// scatter: a sequential loop skipping out-of-range indices (one unsigned
// compare), after checking that there are as many values as indices.
// CHECK-LABEL: func.func @scatter
// CHECK: %[[NI:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[NV:.*]] = tensor.dim %arg2, %c0
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[NI]], %[[NV]]
// CHECK: cf.assert %[[SAME]], "{{.*}}soac-to-loops.mlir:{{[0-9]+}}:{{[0-9]+}}: 'soac.scatter': operands have different outer sizes"
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[D:.*]] = %arg0)
// CHECK: %[[IDX:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[IDX]], %{{.*}} : index
// CHECK: scf.if %[[OK]]
// CHECK: tensor.insert %{{.*}} into %[[D]][%[[IDX]]]
// CHECK: } else {
// CHECK: scf.yield %[[D]]
func.func @scatter(%d: tensor<?xf32>, %i: tensor<?xi32>, %v: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.scatter dest(%d : tensor<?xf32>) indices(%i : tensor<?xi32>) ins(%v : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// reduce_by_index: one loop reads the bin, applies the operator, writes it
// back. At the top level, when its rows repay a parallel region and are at
// least as many as all chunks' bins, chunks of the rows are folded in
// parallel (scf.forall), each into bins of its own that start from the
// neutral element; then each destination bin is folded with every chunk's,
// in chunk order, in parallel over the bins.
// CHECK-LABEL: func.func @histogram
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: %[[N:.*]] = tensor.dim %arg1
// CHECK: %[[THREADS:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: %[[CHUNKS:.*]] = arith.minui %[[THREADS]], %c4
// CHECK: %[[ALL_BINS:.*]] = arith.muli %[[CHUNKS]], %c10
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[ALL_BINS]], %[[N]]
// CHECK: arith.select %[[FEW]], %[[N]], %c0
// CHECK: scf.if
// CHECK: %[[PARTIALS:.*]] = scf.forall (%{{.*}}) in (%[[CHUNKS]])
// CHECK: tensor.insert %cst into
// CHECK: scf.for {{.*}} iter_args(%[[OWN:.*]] = {{.*}})
// CHECK: tensor.extract %[[OWN]]
// CHECK: tensor.parallel_insert_slice
// CHECK: linalg.generic {{.*}} outs(%arg0 : tensor<10xf64>)
// CHECK: ^bb0(%[[OLD:.*]]: f64)
// CHECK: %[[BIN:.*]] = linalg.index 0
// CHECK: scf.for %[[C:.*]] = %c0 to %[[CHUNKS]] {{.*}} iter_args(%[[ACC:.*]] = %[[OLD]])
// CHECK: %[[PART:.*]] = tensor.extract %[[PARTIALS]][%[[C]], %[[BIN]]]
// CHECK: arith.addf %[[ACC]], %[[PART]]
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%[[H:.*]] = %arg0)
// CHECK: scf.if
// CHECK: %[[BIN:.*]] = tensor.extract %[[H]]
// CHECK: %[[NEW:.*]] = arith.addf %[[BIN]], %{{.*}} : f64
// CHECK: tensor.insert %[[NEW]] into %[[H]]
// SEQ-LABEL: func.func @histogram
// SEQ-NOT: scf.forall
// SEQ: scf.for {{.*}} iter_args(%{{.*}} = %arg0)
// SEQ-NOT: scf.forall
// SEQ: return
func.func @histogram(%h: tensor<10xf64>, %i: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<10xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.reduce_by_index dest(%h : tensor<10xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<10xf64> {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %r : tensor<10xf64>
}

// -----

// A histogram of static rows too few to repay a parallel region has no
// parallel form at all (D-LSTM's gradient: 28 rows per time step).
// CHECK-LABEL: func.func @small_static_histogram
// CHECK-NOT: scf.forall
// CHECK-NOT: soac_omp_max_threads
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %arg0)
// CHECK-NOT: scf.forall
// CHECK: return
func.func @small_static_histogram(%h: tensor<14xf64>, %i: tensor<28xindex>, %v: tensor<28xf64>) -> tensor<14xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.reduce_by_index dest(%h : tensor<14xf64>) indices(%i : tensor<28xindex>) ins(%v : tensor<28xf64>) init(%zero : f64) -> tensor<14xf64> {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %r : tensor<14xf64>
}

// -----

// reduce_by_index of a map's rows stacked (tensor.collapse_shape of its
// results, as the sparse adjoints of nested reads are): one row of the map
// at a time, and in it one row of the nested map at a time, then a loop over
// that row's batch; neither map's results are ever stored whole.
// CHECK-LABEL: func.func @stacked_histogram
// CHECK-SAME: %[[H:[^:]*]]: tensor<10xf64>, %[[STARTS:[^:]*]]: tensor<?xindex>, %[[W:[^:]*]]: tensor<4x3xf64>
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK-NOT: tensor.collapse_shape
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUTER:.*]] = %[[H]])
// CHECK: %[[START:.*]] = tensor.extract %[[STARTS]][%[[I]]]
// CHECK: scf.for %[[K:.*]] = %c0 to %c4 {{.*}} iter_args(%[[MIDDLE:.*]] = %[[OUTER]])
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[W]][%[[K]], 0] [1, 3]
// CHECK: %[[IS:.*]] = scf.for
// CHECK: scf.for %[[J:.*]] = %c0 to %c3 {{.*}} iter_args(%[[INNER:.*]] = %[[MIDDLE]])
// CHECK: %[[BIN:.*]] = tensor.extract %[[IS]][%[[J]]]
// CHECK: tensor.extract %[[ROW]][%[[J]]]
// CHECK: scf.if
// CHECK: tensor.extract %[[INNER]][%[[BIN]]]
// CHECK: tensor.insert %{{.*}} into %[[INNER]][%[[BIN]]]
// CHECK-NOT: tensor.collapse_shape
func.func @stacked_histogram(%h: tensor<10xf64>, %starts: tensor<?xindex>, %w: tensor<4x3xf64>) -> tensor<10xf64> {
  %zero = arith.constant 0.0 : f64
  %reads:2 = soac.map ins(%starts : tensor<?xindex>) -> tensor<?x4x3xindex>, tensor<?x4x3xf64> {
  ^bb0(%s: index):
    %rows:2 = soac.map ins(%w : tensor<4x3xf64>) -> tensor<4x3xindex>, tensor<4x3xf64> {
    ^bb0(%row: tensor<3xf64>):
      %bins = soac.map ins(%row : tensor<3xf64>) -> tensor<3xindex> {
      ^bb0(%e: f64):
        soac.yield %s : index
      }
      soac.yield %bins, %row : tensor<3xindex>, tensor<3xf64>
    }
    soac.yield %rows#0, %rows#1 : tensor<4x3xindex>, tensor<4x3xf64>
  }
  %i = tensor.collapse_shape %reads#0 [[0, 1, 2]] : tensor<?x4x3xindex> into tensor<?xindex>
  %v = tensor.collapse_shape %reads#1 [[0, 1, 2]] : tensor<?x4x3xf64> into tensor<?xf64>
  %r = soac.reduce_by_index dest(%h : tensor<10xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<10xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<10xf64>
}

// -----

// The batches the sparse adjoints of a stencil yield: per element of a map
// of maps, a tensor.from_elements of its reads' (index, value) pairs. They
// are added one by one where they are computed, with no loop over them and
// no tensor holding them.
// CHECK-LABEL: func.func @stacked_elements
// CHECK-SAME: %[[H:[^:]*]]: tensor<?xf64>, %[[X:[^:]*]]: tensor<?xf64>
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.from_elements
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[OUTER:.*]] = %[[H]])
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args(%[[INNER:.*]] = %[[OUTER]])
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK: tensor.insert %{{.*}} into %[[INNER]]
// CHECK: %[[SECOND:.*]] = scf.if
// CHECK: tensor.insert %{{.*}} into %[[FIRST]]
// CHECK: scf.yield %[[SECOND]]
// CHECK-NOT: tensor.from_elements
// SEQ-LABEL: func.func @stacked_elements
// SEQ-NOT: tensor.from_elements
func.func @stacked_elements(%h: tensor<?xf64>, %x: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %c1 = arith.constant 1 : index
  %reads:2 = soac.map ins(%x : tensor<?xf64>) -> tensor<?x?x2xindex>, tensor<?x?x2xf64> {
  ^bb0(%a: f64):
    %pairs:2 = soac.map ins(%x : tensor<?xf64>) -> tensor<?x2xindex>, tensor<?x2xf64> {
    ^bb0(%b: f64):
      %i = arith.fptosi %a : f64 to i64
      %p = arith.index_cast %i : i64 to index
      %q = arith.addi %p, %c1 : index
      %ab = arith.mulf %a, %b : f64
      %is = tensor.from_elements %p, %q : tensor<2xindex>
      %vs = tensor.from_elements %ab, %b : tensor<2xf64>
      soac.yield %is, %vs : tensor<2xindex>, tensor<2xf64>
    }
    soac.yield %pairs#0, %pairs#1 : tensor<?x2xindex>, tensor<?x2xf64>
  }
  %i = tensor.collapse_shape %reads#0 [[0, 1, 2]] : tensor<?x?x2xindex> into tensor<?xindex>
  %v = tensor.collapse_shape %reads#1 [[0, 1, 2]] : tensor<?x?x2xf64> into tensor<?xf64>
  %r = soac.reduce_by_index dest(%h : tensor<?xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

// -----

// A batch whose indices and values come from different places is read back
// row by row, after checking that there are as many values as indices.
// CHECK-LABEL: func.func @stacked_batch_sizes_checked
// CHECK: scf.for
// CHECK: %[[NI:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?xindex>
// CHECK: %[[NV:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?xf64>
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[NI]], %[[NV]]
// CHECK: cf.assert %[[SAME]], "{{.*}}'soac.reduce_by_index': operands have different outer sizes"
// CHECK: scf.for
func.func @stacked_batch_sizes_checked(%h: tensor<?xf64>, %starts: tensor<?xindex>, %is: tensor<?xindex>, %vs: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %reads:2 = soac.map ins(%starts : tensor<?xindex>) -> tensor<?x?xindex>, tensor<?x?xf64> {
  ^bb0(%s: index):
    soac.yield %is, %vs : tensor<?xindex>, tensor<?xf64>
  }
  %i = tensor.collapse_shape %reads#0 [[0, 1]] : tensor<?x?xindex> into tensor<?xindex>
  %v = tensor.collapse_shape %reads#1 [[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
  %r = soac.reduce_by_index dest(%h : tensor<?xf64>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : tensor<?xf64>
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK-NOT: {{^ *(%[^ ]+ = )?soac\.}}
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<8xi32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[V:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK: linalg.yield %[[V]] : i32
func.func @iota() -> tensor<8xi32> {
  %r = soac.iota : tensor<8xi32>
  return %r : tensor<8xi32>
}

// -----

// Folding tensor rows with an elementwise operator: the two reduces over the
// results of one map are merged, the map fuses into the merged reduce, and
// each accumulator is updated in place (the operator's maps write into the
// loop-carried tensor they read: no tensor.empty per row).
// CHECK-LABEL: func.func @accumulate_rows_in_place
// CHECK: } else {
// CHECK: scf.for %{{.*}} iter_args(%[[A0:.*]] = %{{.*}}, %[[A1:.*]] = %{{.*}})
// CHECK-NOT: tensor.empty
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args(%[[O0:.*]] = %[[A0]], %[[O1:.*]] = %[[A1]])
// CHECK-DAG: tensor.extract %[[O0]][%[[J]]]
// CHECK-DAG: tensor.extract %[[O1]][%[[J]]]
// CHECK-DAG: math.sin
// CHECK-DAG: math.cos
// CHECK: tensor.insert %{{.*}} into %[[O0]][%[[J]]]
// CHECK: tensor.insert %{{.*}} into %[[O1]][%[[J]]]
func.func @accumulate_rows_in_place(%x: tensor<?x?xf64>, %z0: tensor<?xf64>, %z1: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %m:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64>, tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %a:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %s = math.sin %e : f64
      %c = math.cos %e : f64
      soac.yield %s, %c : f64, f64
    }
    soac.yield %a#0, %a#1 : tensor<?xf64>, tensor<?xf64>
  }
  %r0 = soac.reduce ins(%m#0 : tensor<?x?xf64>) init(%z0 : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
    %t = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %w = arith.addf %u, %v : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  %r1 = soac.reduce ins(%m#1 : tensor<?x?xf64>) init(%z1 : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
    %t = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %w = arith.addf %u, %v : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  return %r0, %r1 : tensor<?xf64>, tensor<?xf64>
}

// -----

// A reduce with tensor accumulators: every chunk folds from its own copy of
// the neutral element, so there are at most as many chunks as threads (here
// min(4, threads)), not num-chunks.
// CHECK-LABEL: func.func @column_sums
// CHECK-DAG: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK: scf.if
// CHECK: %[[T:.*]] = func.call @soac_omp_max_threads() : () -> i32
// CHECK: %[[THREADS:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK: %[[CHUNKS:.*]] = arith.minui %[[THREADS]], %[[FOUR]] : index
// CHECK: arith.ceildivui %{{.*}}, %[[CHUNKS]] : index
// CHECK: scf.forall (%{{.*}}) in (%[[CHUNKS]])
// CHECK: } else {
// SEQ-LABEL: func.func @column_sums
// SEQ-NOT: scf.forall
// SEQ: return
func.func @column_sums(%x: tensor<?x?xf64>, %zeros: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.reduce ins(%x : tensor<?x?xf64>) init(%zeros : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
    %t = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%u: f64, %v: f64):
      %w = arith.addf %u, %v : f64
      soac.yield %w : f64
    }
    soac.yield %t : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}

// -----

// A map's result may reuse a loop-carried input's tensor only when it
// provably has the input's shape: here each row becomes its sum (a row of
// another size), so the result is a new tensor although the types are the
// same.
// CHECK-LABEL: func.func @no_reuse_across_shapes
// CHECK: scf.for
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: scf.forall {{.*}} shared_outs(%{{.*}} = %[[E]])
func.func @no_reuse_across_shapes(%x: tensor<?x?xf64>, %z: f64, %n: index) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%d = %x) -> (tensor<?x?xf64>) {
    %s = soac.map ins(%d : tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb0(%row: tensor<?xf64>):
      %sum = soac.reduce ins(%row : tensor<?xf64>) init(%z : f64) -> f64 {
      ^bb0(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      %one = tensor.from_elements %sum : tensor<1xf64>
      %cast = tensor.cast %one : tensor<1xf64> to tensor<?xf64>
      soac.yield %cast : tensor<?xf64>
    }
    scf.yield %s : tensor<?x?xf64>
  }
  return %out : tensor<?x?xf64>
}

// -----

// The same with rows of the input's shape: the result is computed in the
// carried tensor (its rows read and written back in place).
// CHECK-LABEL: func.func @reuse_same_shape
// CHECK: scf.for %{{.*}} iter_args(%[[D:.*]] = %{{.*}})
// CHECK-NOT: tensor.empty
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[O:.*]] = %[[D]])
// CHECK: %[[ROW:.*]] = tensor.extract_slice %[[O]][%[[I]], 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[O]][%[[I]], 0]
func.func @reuse_same_shape(%x: tensor<?x?xf64>, %n: index) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = scf.for %i = %c0 to %n step %c1 iter_args(%d = %x) -> (tensor<?x?xf64>) {
    %s = soac.map ins(%d : tensor<?x?xf64>) -> tensor<?x?xf64> {
    ^bb0(%row: tensor<?xf64>):
      %two = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%e: f64):
        %t = arith.addf %e, %e : f64
        soac.yield %t : f64
      }
      soac.yield %two : tensor<?xf64>
    }
    scf.yield %s : tensor<?x?xf64>
  }
  return %out : tensor<?x?xf64>
}

// -----

// A map yielding a scalar row and a tensor row, whose scalar result reuses
// the carried input's tensor: the scalar goes back with tensor.insert, the
// tensor row into a new tensor.
// CHECK-LABEL: func.func @mixed_rows_one_reused
// CHECK: scf.for %{{.*}} iter_args(%[[V:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// CHECK: } else {
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args(%[[O:.*]] = %[[V]], %{{.*}} = %{{.*}})
// CHECK: tensor.extract %[[O]][%[[I]]]
// CHECK: tensor.insert %{{.*}} into %[[O]][%[[I]]]
func.func @mixed_rows_one_reused(%x: tensor<?xf64>, %m: tensor<?x?xf64>, %n: index) -> (tensor<?xf64>, tensor<?x?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x, %w = %m) -> (tensor<?xf64>, tensor<?x?xf64>) {
    %r:2 = soac.map ins(%v, %m : tensor<?xf64>, tensor<?x?xf64>) -> tensor<?xf64>, tensor<?x?xf64> {
    ^bb0(%e: f64, %row: tensor<?xf64>):
      %t = arith.addf %e, %e : f64
      %two = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%f: f64):
        %u = arith.mulf %f, %e : f64
        soac.yield %u : f64
      }
      soac.yield %t, %two : f64, tensor<?xf64>
    }
    scf.yield %r#0, %r#1 : tensor<?xf64>, tensor<?x?xf64>
  }
  return %out#0, %out#1 : tensor<?xf64>, tensor<?x?xf64>
}

// -----

// A map run as a sequential loop (here, per row of a parallel map) whose
// second result only a reduce reads: the reduce is folded in the map's loop
// (a redomap with map outputs), so the cosines are never stored.
// CHECK-LABEL: func.func @reduce_folded_in_map_loop
// CHECK: scf.forall.in_parallel
// CHECK: } else {
// CHECK: scf.for
// CHECK: %[[FOLD:.*]]:2 = scf.for %[[J:.*]] = {{.*}} iter_args(%[[OUT:.*]] = %{{.*}}, %[[ACC:.*]] = %arg1) -> (tensor<?xf64>, f64)
// CHECK: %[[C:.*]] = math.cos
// CHECK: tensor.insert %{{.*}} into %[[OUT]][%[[J]]]
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[C]]
// CHECK: scf.yield %{{.*}}, %[[SUM]] : tensor<?xf64>, f64
// CHECK-NOT: scf.for
// CHECK: tensor.insert %[[FOLD]]#1
func.func @reduce_folded_in_map_loop(%x: tensor<?x?xf64>, %zero: f64) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64>, tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %m:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %s = math.sin %e : f64
      %c = math.cos %e : f64
      soac.yield %s, %c : f64, f64
    }
    %sum = soac.reduce ins(%m#1 : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %m#0, %sum : tensor<?xf64>, f64
  }
  return %r#0, %r#1 : tensor<?x?xf64>, tensor<?xf64>
}

// -----

// The reduce starts from a value computed from the map's other result: it
// cannot run in the map's loop, so it folds the stored rows afterwards.
// CHECK-LABEL: func.func @init_defined_after_map
// CHECK: scf.forall.in_parallel
// CHECK: } else {
// CHECK: scf.for
// CHECK: %[[M:.*]]:2 = scf.for {{.*}} -> (tensor<?xf64>, tensor<?xf64>)
// CHECK: %[[FIRST:.*]] = tensor.extract %[[M]]#0
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[FIRST]]) -> (f64)
func.func @init_defined_after_map(%x: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %r:2 = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?x?xf64>, tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %m:2 = soac.map ins(%row : tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64> {
    ^bb0(%e: f64):
      %s = math.sin %e : f64
      %c = math.cos %e : f64
      soac.yield %s, %c : f64, f64
    }
    %c0 = arith.constant 0 : index
    %first = tensor.extract %m#0[%c0] : tensor<?xf64>
    %sum = soac.reduce ins(%m#1 : tensor<?xf64>) init(%first : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %m#0, %sum : tensor<?xf64>, f64
  }
  return %r#0, %r#1 : tensor<?x?xf64>, tensor<?xf64>
}

// -----

// A splat in a loop, outside any SOAC, is one tensor filled in parallel
// (linalg.fill) or by a sequential loop, chosen at run time like a SOAC's
// loops (left to bufferization, it would be a parallel region per
// iteration: the zero adjoints in a gradient's reverse sweep). A splat that
// runs once is left to bufferization.
// CHECK-LABEL: func.func @zeros
// CHECK: %[[ONCE:.*]] = tensor.splat
// CHECK: scf.for
// CHECK: %[[EMPTY:.*]] = tensor.empty(%arg0) : tensor<?xf64>
// CHECK: %[[T:.*]] = func.call @soac_omp_max_threads()
// CHECK: scf.if
// CHECK: linalg.fill ins(%{{.*}} : f64) outs(%[[EMPTY]] : tensor<?xf64>)
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[EMPTY]])
// CHECK: tensor.insert
// SEQ-LABEL: func.func @zeros
// SEQ: tensor.splat
// SEQ: scf.for
// SEQ-NOT: linalg.fill
// SEQ: scf.for
// SEQ: tensor.insert
func.func @zeros(%n: index, %steps: index) -> (tensor<?xf64>, tensor<?xf64>) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %once = tensor.splat %zero[%n] : tensor<?xf64>
  %r = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %once) -> (tensor<?xf64>) {
    %z = tensor.splat %zero[%n] : tensor<?xf64>
    %sum = soac.map ins(%acc, %z : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    scf.yield %sum : tensor<?xf64>
  }
  return %once, %r : tensor<?xf64>, tensor<?xf64>
}

// -----

// A map's result computed in place in a column of a matrix (the insert
// drops the slot's second dimension, not its first): its size is checked
// against the column's length, not against the dropped dimension's 1.
// SEQ-LABEL: func.func @column_computed_in_place
// SEQ: %[[LEN:.*]] = tensor.dim %arg1, %c0
// SEQ: %[[N:.*]] = tensor.dim %arg0, %c0
// SEQ: %[[FITS:.*]] = arith.cmpi eq, %[[N]], %[[LEN]] : index
// SEQ: cf.assert %[[FITS]], "{{.*}}rows of different sizes"
// SEQ: tensor.empty(%[[N]])
func.func @column_computed_in_place(%x: tensor<?xf64>, %m: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %m, %c0 : tensor<?x?xf64>
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %s = arith.mulf %a, %a : f64
    soac.yield %s : f64
  }
  %w = tensor.insert_slice %r into %m[0, 1] [%n, 1] [1, 1] : tensor<?xf64> into tensor<?x?xf64>
  return %w : tensor<?x?xf64>
}

// -----

// A reduce reading the three results of one fused map compares the outer
// sizes of the map's three inputs once (two asserts), not once per result
// it reads (eight): a vector-mode reduce of k+1 lanes compared (k+1)².
// CHECK-LABEL: func.func @fused_results_sized_once
// CHECK-COUNT-2: cf.assert {{.*}}operands have different outer sizes
// CHECK-NOT: cf.assert
// CHECK: return
// SEQ-LABEL: func.func @fused_results_sized_once
// SEQ-COUNT-2: cf.assert {{.*}}operands have different outer sizes
// SEQ-NOT: cf.assert
// SEQ: return
func.func @fused_results_sized_once(%a: tensor<?xf64>, %b: tensor<?xf64>, %c: tensor<?xf64>) -> (f64, f64, f64) {
  %z = arith.constant 0.0 : f64
  %m:3 = soac.map ins(%a, %b, %c : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64> {
  ^bb0(%x: f64, %y: f64, %w: f64):
    %p = arith.mulf %x, %y : f64
    %q = arith.mulf %x, %w : f64
    %r = arith.mulf %y, %w : f64
    soac.yield %p, %q, %r : f64, f64, f64
  }
  %s:3 = soac.reduce ins(%m#0, %m#1, %m#2 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) init(%z, %z, %z : f64, f64, f64) -> f64, f64, f64 {
  ^bb0(%u0: f64, %u1: f64, %u2: f64, %v0: f64, %v1: f64, %v2: f64):
    %t0 = arith.addf %u0, %v0 : f64
    %t1 = arith.addf %u1, %v1 : f64
    %t2 = arith.addf %u2, %v2 : f64
    soac.yield %t0, %t1, %t2 : f64, f64, f64
  }
  return %s#0, %s#1, %s#2 : f64, f64, f64
}

// -----

// A map whose result only an insert_slice reads, into a destination nothing
// else reads, the slice known before the map, is computed in the slice (no
// tensor of its own, no copy): after its size is asserted to be the map's,
// both the parallel and the sequential loop write into it.
// CHECK-LABEL: func.func @computed_in_slice
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[LEN:.*]]: index, %[[O:.*]]: index, %[[S:.*]]: index)
// CHECK: %[[D:.*]] = tensor.splat %{{.*}}[%[[LEN]]]
// CHECK: %[[N:.*]] = tensor.dim %[[X]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[N]], %[[S]]
// CHECK: cf.assert %[[SAME]], "{{.*}}: 'tensor.insert_slice': a source of another size than its slice"
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[D]][%[[O]]] [%[[S]]] [1]
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[SLICE]] : tensor<?xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[SLICE]])
// CHECK: tensor.insert_slice %{{.*}} into %[[D]][%[[O]]] [%[[S]]] [1]
// SEQ-LABEL: func.func @computed_in_slice
// SEQ: %[[SLICE:.*]] = tensor.extract_slice
// SEQ-NOT: tensor.empty
// SEQ: scf.for {{.*}} iter_args(%{{.*}} = %[[SLICE]])
func.func @computed_in_slice(%x: tensor<?xf32>, %len: index, %o: index, %s: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %d = tensor.splat %zero[%len] : tensor<?xf32>
  %m = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r = tensor.insert_slice %m into %d[%o] [%s] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Into a function's argument (read-only: bufferization copies it first) the
// map gets a tensor of its own, as it would the slice's old contents.
// eliminate-empty-tensors may still replace that tensor.empty by the slice,
// on either of the scf.if's paths: so the slice's size is asserted before it
// (checkRowsComputedInPlace), lest a slice smaller than the map be written
// past.
// CHECK-LABEL: func.func @not_into_an_argument
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: index, %[[S:.*]]: index)
// CHECK: %[[N:.*]] = tensor.dim %[[X]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[N]], %[[S]]
// CHECK: cf.assert %[[SAME]], "{{.*}}: 'tensor.insert_slice': a source of another size than its slice"
// CHECK: tensor.empty(%[[N]])
// CHECK: scf.if
// CHECK: tensor.insert_slice
// SEQ-LABEL: func.func @not_into_an_argument
// SEQ: tensor.empty
func.func @not_into_an_argument(%x: tensor<?xf32>, %d: tensor<?xf32>, %o: index, %s: index) -> tensor<?xf32> {
  %m = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r = tensor.insert_slice %m into %d[%o] [%s] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A slice read, updated row by row and inserted back (the adjoint of x[1:]
// adding into its slice of the gradient): the map is computed in the
// extracted slice, reading row i from the row it overwrites, so that
// bufferization updates the slice in place. Its two offset checks, one per
// slice op, count as one offset. The map reading the slice is fused into the
// one whose result goes back.
// CHECK-LABEL: func.func @slice_updated_in_place
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[D:.*]][%[[O:.*]]] [%{{.*}}] [1]
// CHECK-NOT: tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[SLICE]] : tensor<?xf32>)
// CHECK: ^bb0(%[[OLD:.*]]: f32):
// CHECK: arith.addf %[[OLD]]
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[SLICE]])
// CHECK: tensor.extract %[[ACC]]
// CHECK: tensor.insert_slice %{{.*}} into %[[D]][%[[O]]]
// SEQ-LABEL: func.func @slice_updated_in_place
// SEQ: %[[SLICE:.*]] = tensor.extract_slice
// SEQ-NOT: tensor.empty
// SEQ: scf.for {{.*}} iter_args(%{{.*}} = %[[SLICE]])
func.func @slice_updated_in_place(%x: tensor<?xf32>, %len: index, %o: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %d = tensor.splat %zero[%len] : tensor<?xf32>
  %n = arith.constant 0 : index
  %s = tensor.dim %x, %n : tensor<?xf32>
  %c1 = arith.constant 1 : index
  %bound = arith.addi %len, %c1 : index
  %oe = soac.check_index %o below %bound, "'tensor.extract_slice' dimension 0"
  %old = tensor.extract_slice %d[%oe] [%s] [1] : tensor<?xf32> to tensor<?xf32>
  %scaled = soac.map ins(%old : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %twice = arith.addf %a, %a : f32
    soac.yield %twice : f32
  }
  %sum = soac.map ins(%scaled, %x : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %e = arith.addf %a, %b : f32
    soac.yield %e : f32
  }
  %oi = soac.check_index %o below %bound, "'tensor.insert_slice' dimension 0"
  %r = tensor.insert_slice %sum into %d[%oi] [%s] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// Inserted into another slice than the one read: the map gets a tensor of
// its own.
// CHECK-LABEL: func.func @another_slice_not_updated_in_place
// CHECK: %[[NEW:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[NEW]] : tensor<?xf32>)
// SEQ-LABEL: func.func @another_slice_not_updated_in_place
// SEQ: tensor.empty
func.func @another_slice_not_updated_in_place(%x: tensor<?xf32>, %len: index, %o: index, %p: index) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %d = tensor.splat %zero[%len] : tensor<?xf32>
  %n = arith.constant 0 : index
  %s = tensor.dim %x, %n : tensor<?xf32>
  %old = tensor.extract_slice %d[%o] [%s] [1] : tensor<?xf32> to tensor<?xf32>
  %sum = soac.map ins(%old, %x : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %e = arith.addf %a, %b : f32
    soac.yield %e : f32
  }
  %r = tensor.insert_slice %sum into %d[%p] [%s] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// The tensor read again after the update: the map gets a tensor of its own.
// CHECK-LABEL: func.func @slice_of_a_tensor_read_again
// CHECK: %[[NEW:.*]] = tensor.empty
// CHECK: linalg.generic {{.*}} outs(%[[NEW]] : tensor<?xf32>)
// SEQ-LABEL: func.func @slice_of_a_tensor_read_again
// SEQ: tensor.empty
func.func @slice_of_a_tensor_read_again(%x: tensor<?xf32>, %len: index, %o: index) -> (tensor<?xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %d = tensor.splat %zero[%len] : tensor<?xf32>
  %n = arith.constant 0 : index
  %s = tensor.dim %x, %n : tensor<?xf32>
  %old = tensor.extract_slice %d[%o] [%s] [1] : tensor<?xf32> to tensor<?xf32>
  %sum = soac.map ins(%old, %x : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %e = arith.addf %a, %b : f32
    soac.yield %e : f32
  }
  %r = tensor.insert_slice %sum into %d[%o] [%s] [1] : tensor<?xf32> into tensor<?xf32>
  %first = tensor.extract %d[%n] : tensor<?xf32>
  return %r, %first : tensor<?xf32>, f32
}
