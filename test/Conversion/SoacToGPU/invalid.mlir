// What the GPU kernels cannot run is an error at its location.
// RUN: soac-opt %s --convert-soac-to-gpu --split-input-file --verify-diagnostics

func.func @f(%x: f32) -> f32 {
  return %x : f32
}

func.func @unexpanded_vjp(%x: f32, %s: f32) -> f32 {
  // expected-error @+1 {{'soac.vjp' op must be expanded by the soac-autodiff pass before lowering to the GPU}}
  %r:2 = soac.vjp @f(%x, %s) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}

// -----

func.func @reduce_over_rows(%x: tensor<?x4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'soac.reduce' op is not supported by the GPU lowering: the rows combined must be scalars}}
  %r = soac.reduce ins(%x : tensor<?x4xf32>) init(%init : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    soac.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @argmin_flag_histogram(%h: tensor<?xf32>, %g: tensor<?xi1>, %i: tensor<?xindex>, %v: tensor<?xf32>, %w: tensor<?xi1>) -> (tensor<?xf32>, tensor<?xi1>) {
  %inf = arith.constant 0x7F800000 : f32
  %none = arith.constant false
  // expected-error @+1 {{'soac.reduce_by_index' op is not supported by the GPU lowering: its destinations of 'i1' are updated together under a lock, by loads and stores of 8, 16, 32 or 64 bits}}
  %r:2 = soac.reduce_by_index dest(%h, %g : tensor<?xf32>, tensor<?xi1>) indices(%i : tensor<?xindex>)
           ins(%v, %w : tensor<?xf32>, tensor<?xi1>) init(%inf, %none : f32, i1) -> tensor<?xf32>, tensor<?xi1> {
  ^bb0(%a: f32, %ai: i1, %b: f32, %bi: i1):
    %less = arith.cmpf olt, %b, %a : f32
    %m = arith.minimumf %a, %b : f32
    %k = arith.select %less, %bi, %ai : i1
    soac.yield %m, %k : f32, i1
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xi1>
}

// -----

func.func @narrow_product_histogram(%h: tensor<?xf16>, %i: tensor<?xindex>, %v: tensor<?xf16>) -> tensor<?xf16> {
  %one = arith.constant 1.0 : f16
  // expected-error @+1 {{'soac.reduce_by_index' op combines 'f16' with an operator that has no atomic instruction: the GPU lowering needs 32- or 64-bit values for compare-and-swap}}
  %r = soac.reduce_by_index dest(%h : tensor<?xf16>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?xf16>) init(%one : f16) -> tensor<?xf16> {
  ^bb0(%a: f16, %b: f16):
    %s = arith.mulf %a, %b : f16
    soac.yield %s : f16
  }
  return %r : tensor<?xf16>
}

// -----

func.func @shape_from_data(%x: tensor<?x?xf32>, %n: tensor<?xindex>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %k = tensor.extract %n[%c0] : tensor<?xindex>
    // expected-error @+1 {{'tensor.extract_slice' op is not supported by the GPU lowering inside a map run by one thread per row: the shape of its tensors must follow from the sizes of the tensors the map reads}}
    %s = tensor.extract_slice %row[0] [%k] [1] : tensor<?xf32> to tensor<?xf32>
    soac.yield %s : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

func.func @slice_of_computed_row(%x: tensor<?x?xf32>) -> tensor<?x2xf32> {
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?x2xf32> {
  ^bb0(%row: tensor<?xf32>):
    %sq = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb1(%v: f32):
      %t = arith.mulf %v, %v : f32
      soac.yield %t : f32
    }
    // expected-error @+1 {{'tensor.extract_slice' op is not supported by the GPU lowering inside a map run by one thread per row: it slices a tensor the body computes}}
    %s = tensor.extract_slice %sq[1] [2] [1] : tensor<?xf32> to tensor<2xf32>
    soac.yield %s : tensor<2xf32>
  }
  return %r : tensor<?x2xf32>
}

// -----

func.func @tensor_built_per_row(%x: tensor<?x?xf32>, %y: tensor<2xf32>) -> tensor<?x?xf32> {
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    // expected-error @+1 {{'tensor.insert_slice' op is not supported by the GPU lowering inside a map run by one thread per row: code per row may compute scalars; read, slice, insert into, reshape (tensor.collapse_shape, tensor.expand_shape) and build tensors (tensor.from_elements, tensor.splat, soac.iota); and run soac.map, soac.reduce and soac.reduce_by_index on them}}
    %w = tensor.insert_slice %y into %row[0] [2] [1] : tensor<2xf32> into tensor<?xf32>
    soac.yield %w : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

func.func @scan_read_in_row(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    // expected-error @+1 {{'soac.scan' op is not supported by the GPU lowering inside a map run by one thread per row: a scan per row must be yielded by a map whose body nests no deeper (one block per row)}}
    %c = soac.scan ins(%row : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    %first = tensor.extract %c[%c0] : tensor<?xf32>
    soac.yield %first : f32
  }
  return %r : tensor<?xf32>
}

// -----

func.func @scalar_body_building_tensors(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'tensor.from_elements' op is not supported by the GPU lowering inside a map run by one thread per row: its tensors must have a rank}}
    %t = tensor.from_elements %v : tensor<f32>
    %e = tensor.extract %t[] : tensor<f32>
    soac.yield %e : f32
  }
  return %r : tensor<?xf32>
}

// -----

func.func @histogram_of_rows_not_elementwise(%h: tensor<?x?xf32>, %i: tensor<?xindex>, %v: tensor<?x?xf32>, %z: tensor<?xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'soac.reduce_by_index' op is not supported by the GPU lowering: the rows combined must be scalars, or vectors combined elementwise}}
  %r = soac.reduce_by_index dest(%h : tensor<?x?xf32>) indices(%i : tensor<?xindex>)
         ins(%v : tensor<?x?xf32>) init(%z : tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: tensor<?xf32>, %b: tensor<?xf32>):
    soac.yield %b : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

func.func @histogram_of_rows_per_row(%x: tensor<?x?x?xf32>, %i: tensor<?xindex>, %h: tensor<?x?xf32>, %z: tensor<?xf32>) -> tensor<?x?x?xf32> {
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%rows: tensor<?x?xf32>):
    // expected-error @+1 {{'soac.reduce_by_index' op is not supported by the GPU lowering inside a map run by one thread per row: it must combine scalars into one destination}}
    %g = soac.reduce_by_index dest(%h : tensor<?x?xf32>) indices(%i : tensor<?xindex>)
           ins(%rows : tensor<?x?xf32>) init(%z : tensor<?xf32>) -> tensor<?x?xf32> {
    ^bb1(%a: tensor<?xf32>, %b: tensor<?xf32>):
      %s = soac.map ins(%a, %b : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb2(%p: f32, %q: f32):
        %t = arith.addf %p, %q : f32
        soac.yield %t : f32
      }
      soac.yield %s : tensor<?xf32>
    }
    soac.yield %g : tensor<?x?xf32>
  }
  return %r : tensor<?x?x?xf32>
}


// -----

func.func @trailing_dimensions_merged_per_row(%x: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-note @+1 {{in the body of this map}}
  %r = soac.map ins(%x : tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%m: tensor<?x?x?xf32>):
    %same = soac.map ins(%m : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
    ^bb1(%plane: tensor<?x?xf32>):
      soac.yield %plane : tensor<?x?xf32>
    }
    // expected-error @+1 {{'tensor.collapse_shape' op is not supported by the GPU lowering inside a map run by one thread per row: it may merge or split its leading dimension only}}
    %f = tensor.collapse_shape %same [[0], [1, 2]] : tensor<?x?x?xf32> into tensor<?x?xf32>
    soac.yield %f : tensor<?x?xf32>
  }
  return %r : tensor<?x?x?xf32>
}
