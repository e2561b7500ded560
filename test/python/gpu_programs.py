"""The programs the GPU tests compile (test_compile_gpu.py,
test_gpu_emulated.py): every SOAC and nesting the GPU lowering supports, with
arguments for n rows."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

import soac
from soac.compiler import lower, public_functions, signature
from soac.runtime import jit

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARY = (ROOT / "examples" / "soacs.mlir").read_text()
rng = np.random.default_rng(7)

ROWS = """
func.func @softmax_rows(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%x : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %m = soac.reduce ins(%row : tensor<?xf32>) init(%ninf : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %mx = arith.maximumf %a, %b : f32
      soac.yield %mx : f32
    }
    %e = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%v: f32):
      %d = arith.subf %v, %m : f32
      %ex = math.exp %d : f32
      soac.yield %ex : f32
    }
    %s = soac.reduce ins(%e : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    %o = soac.map ins(%e : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%v: f32):
      %q = arith.divf %v, %s : f32
      soac.yield %q : f32
    }
    soac.yield %o : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

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

func.func @positive(%x: tensor<?xf32>) -> tensor<?xi1> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xi1> {
  ^bb0(%v: f32):
    %c = arith.cmpf ogt, %v, %zero : f32
    soac.yield %c : i1
  }
  return %r : tensor<?xi1>
}

// Nested deeper than one block shares out: one thread per row.
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

// Each row: its entries at computed indices, weighted by their position.
func.func @weighted_gather_rows(%m: tensor<?x?xf64>, %idx: tensor<?xindex>) -> tensor<?x?xf64> {
  %r = soac.map ins(%m : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %c0 = arith.constant 0 : index
    %k = tensor.dim %idx, %c0 : tensor<?xindex>
    %positions = soac.iota %k : tensor<?xi64>
    %g = soac.map ins(%idx, %positions : tensor<?xindex>, tensor<?xi64>) -> tensor<?xf64> {
    ^bb1(%i: index, %p: i64):
      %e = tensor.extract %row[%i] : tensor<?xf64>
      %w = arith.sitofp %p : i64 to f64
      %t = arith.mulf %e, %w : f64
      soac.yield %t : f64
    }
    soac.yield %g : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}

// Windows of 4 at row-dependent offsets, plus a constant row.
func.func @windows(%starts: tensor<?xi64>, %x: tensor<?xf64>) -> tensor<?x4xf64> {
  %half = arith.constant 0.5 : f64
  %r = soac.map ins(%starts : tensor<?xi64>) -> tensor<?x4xf64> {
  ^bb0(%s: i64):
    %start = arith.index_cast %s : i64 to index
    %w = tensor.extract_slice %x[%start] [4] [1] : tensor<?xf64> to tensor<4xf64>
    %h = tensor.splat %half : tensor<4xf64>
    %o = soac.map ins(%w, %h : tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64> {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %o : tensor<4xf64>
  }
  return %r : tensor<?x4xf64>
}

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

// Per row: a fold of the rows of a matrix, an element inserted, a small
// matrix built, a histogram; then folds and histograms of whole rows.
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


// Per row, a histogram per row of its index table, summed over the table's
// rows (the dense adjoint of a gather two maps deep): each histogram is
// computed once into the thread's scratch, not once per bin read.
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


// Per row, its squares split into `parts` rows of the width that leaves (a
// tensor.expand_shape, as soac-flatten and a reshape per row make) and
// summed elementwise: the thread reads the split rows as a view of the
// squares; the width, computed in the body, is computed on the host too.
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


// Per row x, each component k's product Q_k x (a row of dot products) and
// its squared norm, read by three SOACs: the components are computed once
// into the thread's scratch, not again by each reader.
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


// Rows a sum reads (the adjoint of k-means' centroids, and a scalar), summed
// per warp in the thread kernel before the reduces fold one row per warp.
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

// Per row x, each component k's dot products with x and their squares: two
// rows of one map of dot products, kept in the thread's scratch and computed
// in one loop (the body of dot products runs once per element for both).
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

// Several destinations, each combined by itself: run as one histogram each
// (a sum, a count and a minimum, all native atomics).
func.func @sum_count_min_histogram(%h: tensor<?xf32>, %c: tensor<?xi64>, %m: tensor<?xi64>, %i: tensor<?xindex>, %v: tensor<?xf32>, %n: tensor<?xi64>) -> (tensor<?xf32>, tensor<?xi64>, tensor<?xi64>) {
  %zero = arith.constant 0.0 : f32
  %none = arith.constant 0 : i64
  %high = arith.constant 9223372036854775807 : i64
  %r:3 = soac.reduce_by_index dest(%h, %c, %m : tensor<?xf32>, tensor<?xi64>, tensor<?xi64>) indices(%i : tensor<?xindex>)
           ins(%v, %n, %n : tensor<?xf32>, tensor<?xi64>, tensor<?xi64>) init(%zero, %none, %high : f32, i64, i64) -> tensor<?xf32>, tensor<?xi64>, tensor<?xi64> {
  ^bb0(%a: f32, %ac: i64, %am: i64, %b: f32, %bc: i64, %bm: i64):
    %s = arith.addf %a, %b : f32
    %t = arith.addi %ac, %bc : i64
    %u = arith.minsi %am, %bm : i64
    soac.yield %s, %t, %u : f32, i64, i64
  }
  return %r#0, %r#1, %r#2 : tensor<?xf32>, tensor<?xi64>, tensor<?xi64>
}


// The least value per bin and its position: an operator that combines the
// two destinations together (the position kept follows the values'
// comparison; ties keep the lower position, so that any order of the
// updates gives the same result), run under a lock per bin.
func.func @argmin_histogram(%h: tensor<?xf64>, %g: tensor<?xi64>, %i: tensor<?xindex>, %v: tensor<?xf64>, %w: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %inf = arith.constant 0x7FF0000000000000 : f64
  %none = arith.constant -1 : i64
  %r:2 = soac.reduce_by_index dest(%h, %g : tensor<?xf64>, tensor<?xi64>) indices(%i : tensor<?xindex>)
           ins(%v, %w : tensor<?xf64>, tensor<?xi64>) init(%inf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%a: f64, %ai: i64, %b: f64, %bi: i64):
    %less = arith.cmpf olt, %b, %a : f64
    %same = arith.cmpf oeq, %b, %a : f64
    %earlier = arith.cmpi ult, %bi, %ai : i64
    %tie = arith.andi %same, %earlier : i1
    %take = arith.ori %less, %tie : i1
    %m = arith.select %take, %b, %a : f64
    %k = arith.select %take, %bi, %ai : i64
    soac.yield %m, %k : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}
"""

# Gradients: reverse mode through maps, reduces, scans, gathers and nesting.
GRADIENTS = """
func.func @sum_of_squares(%x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %s = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %m = arith.mulf %v, %v : f64
    soac.yield %m : f64
  }
  %r = soac.reduce ins(%s : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : f64
}
// Per row, GMM's shape: for each component k, s = L_k (x - m_k) (a map of
// dot products, which the squares read twice), v_k = -|s|^2 / 2; then the
// log-sum-exp of the v_k (read twice: the maximum and the sum). Run one
// thread per row, the maps of dot products are kept in scratch memory.
func.func @mixture_per_row(%x: tensor<?x?xf64>, %m: tensor<?x?xf64>, %L: tensor<?x?x?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %minus_half = arith.constant -0.5 : f64
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%xi: tensor<?xf64>):
    %v = soac.map ins(%m, %L : tensor<?x?xf64>, tensor<?x?x?xf64>) -> tensor<?xf64> {
    ^bb1(%mk: tensor<?xf64>, %Lk: tensor<?x?xf64>):
      %c = soac.map ins(%xi, %mk : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.subf %a, %b : f64
        soac.yield %t : f64
      }
      %s = soac.map ins(%Lk : tensor<?x?xf64>) -> tensor<?xf64> {
      ^bb2(%row: tensor<?xf64>):
        %p = soac.map ins(%row, %c : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
        ^bb3(%a: f64, %b: f64):
          %t = arith.mulf %a, %b : f64
          soac.yield %t : f64
        }
        %dot = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
        ^bb3(%a: f64, %b: f64):
          %t = arith.addf %a, %b : f64
          soac.yield %t : f64
        }
        soac.yield %dot : f64
      }
      %sq = soac.map ins(%s, %s : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%a: f64, %b: f64):
        %t = arith.mulf %a, %b : f64
        soac.yield %t : f64
      }
      %n2 = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      %vk = arith.mulf %n2, %minus_half : f64
      soac.yield %vk : f64
    }
    %top = soac.reduce ins(%v : tensor<?xf64>) init(%ninf : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.maximumf %a, %b : f64
      soac.yield %t : f64
    }
    %e = soac.map ins(%v : tensor<?xf64>) -> tensor<?xf64> {
    ^bb1(%a: f64):
      %d = arith.subf %a, %top : f64
      %t = math.exp %d : f64
      soac.yield %t : f64
    }
    %total = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    %l = math.log %total : f64
    %y = arith.addf %l, %top : f64
    soac.yield %y : f64
  }
  return %r : tensor<?xf64>
}
func.func @grad_mixture_per_row(%x: tensor<?x?xf64>, %m: tensor<?x?xf64>, %L: tensor<?x?x?xf64>, %seed: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?x?xf64>) {
  %r:4 = soac.vjp @mixture_per_row(%x, %m, %L, %seed) : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?x?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?x?xf64>)
  return %r#1, %r#2, %r#3 : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?x?xf64>
}
func.func @grad_sum_of_squares(%x: tensor<?xf64>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @sum_of_squares(%x, %one) : (tensor<?xf64>, f64) -> (f64, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}
""" + LIBRARY.replace("func.func @", "func.func private @lib_") .replace("@lib_matvec", "@matvec").replace(
    "@lib_gather_squares", "@gather_squares"
) + """
func.func @grad_matvec(%A: tensor<?x?xf64>, %v: tensor<?xf64>, %c: tensor<?xf64>) -> (tensor<?x?xf64>, tensor<?xf64>) {
  %r:3 = soac.vjp @matvec(%A, %v, %c) : (tensor<?x?xf64>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>, tensor<?xf64>)
  return %r#1, %r#2 : tensor<?x?xf64>, tensor<?xf64>
}
// A row read two maps deeper: per row, its reads stacked over the
// positions and flattened, one histogram per row (the GPU's thread runs the
// positions' body once per position for the indices and values both).
func.func private @rows_window(%x: tensor<?x?xf64>, %offsets: tensor<?xindex>, %positions: tensor<?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %sums = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
    ^bb1(%i: index):
      %terms = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xf64> {
      ^bb2(%j: index):
        %p = arith.addi %i, %j : index
        %v = tensor.extract %row[%p] : tensor<?xf64>
        %sq = arith.mulf %v, %v : f64
        soac.yield %sq : f64
      }
      %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      %s2 = arith.mulf %s, %s : f64
      soac.yield %s2 : f64
    }
    %total = soac.reduce ins(%sums : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %total : f64
  }
  return %r : tensor<?xf64>
}
func.func @grad_rows_window(%x: tensor<?x?xf64>, %offsets: tensor<?xindex>, %positions: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @rows_window(%x, %offsets, %positions, %c) wrt [0] : (tensor<?x?xf64>, tensor<?xindex>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
func.func @grad_gather_squares(%x: tensor<?xf64>, %i: tensor<?xindex>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @gather_squares(%x, %i, %one) wrt [0] : (tensor<?xf64>, tensor<?xindex>, f64) -> (f64, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}
"""


CONTRACTIONS = """
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) transpose_rhs -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}
func.func @matmul_wide(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
func.func private @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
func.func @grad_matmul(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %s: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) {
  %r:3 = soac.vjp @product(%a, %b, %s) : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>)
  return %r#1, %r#2 : tensor<?x?xf64>, tensor<?x?xf64>
}
"""

# Scalars that a reduce computes and later kernels use: through host
# arithmetic (the kernels read the total themselves, soac-sink-scalar-reads),
# and in a loop that also carries one (which the host reads each step).
SCALARS = """
func.func @normalise(%x: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %e = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %ev = math.exp %v : f64
    soac.yield %ev : f64
  }
  %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %shifted = arith.addf %s, %two : f64
  %l = math.log %shifted : f64
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %d = arith.subf %v, %l : f64
    soac.yield %d : f64
  }
  return %r : tensor<?xf64>
}
func.func @normalised_steps(%x: tensor<?xf64>, %steps: index) -> (tensor<?xf64>, f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %two = arith.constant 2.0 : f64
  %half = arith.constant 0.5 : f64
  %r:2 = scf.for %t = %c0 to %steps step %c1 iter_args(%state = %x, %total = %zero) -> (tensor<?xf64>, f64) {
    %e = soac.map ins(%state : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64):
      %ev = math.exp %v : f64
      soac.yield %ev : f64
    }
    %s = soac.reduce ins(%e : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t2 = arith.addf %a, %b : f64
      soac.yield %t2 : f64
    }
    %shifted = arith.addf %s, %two : f64
    %l = math.log %shifted : f64
    %next = soac.map ins(%state, %e : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%v: f64, %ev: f64):
      %d = arith.subf %v, %l : f64
      %w = arith.mulf %ev, %half : f64
      %n = arith.subf %d, %w : f64
      soac.yield %n : f64
    }
    %m = soac.reduce ins(%next : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t3 = arith.addf %a, %b : f64
      soac.yield %t3 : f64
    }
    %sum = arith.addf %total, %m : f64
    scf.yield %next, %sum : tensor<?xf64>, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, f64
}
"""


def floats(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def indices(n, bins, dtype=np.int64):
    return rng.integers(-2, bins + 2, n).astype(dtype)  # some out of range


# (program, function, arguments for n rows)
CASES = {
    "saxpy": (LIBRARY, lambda n: (np.float32(1.5), floats(n, dtype=np.float32), floats(n, dtype=np.float32))),
    "sum": (LIBRARY, lambda n: (floats(n, dtype=np.float32),)),
    "sum_of_squares": (LIBRARY, lambda n: (floats(n, dtype=np.float32),)),
    "argmin": (LIBRARY, lambda n: (rng.integers(0, 5, n).astype(np.float32),)),
    "cumsum": (LIBRARY, lambda n: (floats(n, dtype=np.float32),)),
    "recurrence": (LIBRARY, lambda n: (rng.uniform(0.5, 1.0, n), floats(n))),
    "matvec": (LIBRARY, lambda n: (floats(n, 33), floats(33))),
    "scatter": (LIBRARY, lambda n: (floats(9, dtype=np.float32), rng.permutation(n + 2)[:n] - 1, floats(n, dtype=np.float32))),
    "histogram": (LIBRARY, lambda n: (floats(7, dtype=np.float32), indices(n, 7), floats(n, dtype=np.float32))),
    "gather_squares": (LIBRARY, lambda n: (floats(50), rng.integers(0, 50, n))),
    "softmax_rows": (ROWS, lambda n: (floats(n, 300, dtype=np.float32),)),
    "row_cumsum": (ROWS, lambda n: (floats(n, 700),)),
    "positive": (ROWS, lambda n: (floats(n, dtype=np.float32),)),
    "batched_matvec": (ROWS, lambda n: (floats(n, 5, 17, dtype=np.float32), floats(17, dtype=np.float32))),
    "weighted_gather_rows": (ROWS, lambda n: (floats(n, 12), rng.integers(0, 12, 30))),
    "windows": (ROWS, lambda n: (rng.integers(0, 60, n), floats(64))),
    "fold_rows_per_row": (ROWS, lambda n: (floats(n, 6, 5, dtype=np.float32),)),
    "insert_per_row": (ROWS, lambda n: (floats(n, 3),)),
    "matrix_per_row": (ROWS, lambda n: (floats(n, dtype=np.float32), floats(2, dtype=np.float32))),
    "histogram_per_row": (ROWS, lambda n: (rng.integers(0, 4, (n, 9)), floats(n, 9, dtype=np.float32), 4)),
    "summed_histograms_per_row": (ROWS, lambda n: (rng.integers(-1, 7, (n, 3, 5)), floats(n, 3, 5, dtype=np.float32), 6)),
    "component_products_per_row": (ROWS, lambda n: (floats(n, 4), floats(3, 5, 4))),
    "two_rows_of_one_map_per_row": (ROWS, lambda n: (floats(n, 4), floats(3, 5, 4))),
    "summed_rows": (ROWS, lambda n: (floats(n, 4), floats(3, 4))),
    "split_rows_per_row": (ROWS, lambda n: (floats(n, 12), 3)),
    "sum_of_matrices": (ROWS, lambda n: (floats(n, 3, 4, dtype=np.float32), np.zeros((3, 4), np.float32))),
    "histogram_of_rows": (ROWS, lambda n: (floats(6, 3, dtype=np.float32), indices(n, 6), floats(n, 3, dtype=np.float32), np.zeros(3, np.float32))),
    "product_histogram": (ROWS, lambda n: (floats(5, dtype=np.float32), indices(n, 5), rng.uniform(0.9, 1.1, n).astype(np.float32))),
    "sum_count_min_histogram": (ROWS, lambda n: (floats(6, dtype=np.float32), rng.integers(0, 3, 6), rng.integers(0, 9, 6), indices(n, 6), floats(n, dtype=np.float32), rng.integers(-5, 9, n))),
    "argmin_histogram": (ROWS, lambda n: (np.full(6, np.inf), np.full(6, -1), indices(n, 6), rng.integers(-3, 4, n).astype(np.float64), np.arange(n))),
    "grad_sum_of_squares": (GRADIENTS, lambda n: (floats(n),)),
    "grad_matvec": (GRADIENTS, lambda n: (floats(n, 9), floats(9), floats(n))),
    "mixture_per_row": (GRADIENTS, lambda n: (floats(n, 5), floats(4, 5), floats(4, 5, 5))),
    "grad_mixture_per_row": (GRADIENTS, lambda n: (floats(n, 5), floats(4, 5), floats(4, 5, 5), floats(n))),
    "matmul": (CONTRACTIONS, lambda n: (floats(n, 6, dtype=np.float32), floats(5, 6, dtype=np.float32))),
    "grad_matmul": (CONTRACTIONS, lambda n: (floats(n, 6), floats(6, 4), floats(n, 4))),
    "matmul_wide": (CONTRACTIONS, lambda n: (floats(n, 37), floats(37, 70))),
    "grad_gather_squares": (GRADIENTS, lambda n: (floats(40), rng.integers(0, 40, n))),
    "grad_rows_window": (GRADIENTS, lambda n: (floats(n, 9), np.arange(3), np.arange(7), floats(n))),
    "normalise": (SCALARS, lambda n: (floats(n),)),
    "normalised_steps": (SCALARS, lambda n: (floats(n), 3)),
}
SIZES = [0, 1, 7, 1003, 300_001]

# Gathers whose indices are checked inside kernels: a thread kernel, a
# reduction (threads that meet at barriers) and a block per row.
CHECKED_GATHERS = """
func.func @gather(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %w = arith.mulf %v, %v : f64
    soac.yield %w : f64
  }
  return %r : tensor<?xf64>
}

func.func @gathered_sum(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %g = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    soac.yield %v : f64
  }
  %s = soac.reduce ins(%g : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %c = arith.addf %a, %b : f64
    soac.yield %c : f64
  }
  return %s : f64
}

// A thread per index whose 3 x 4 rows a sum reads, its gather checked: the
// rows are written per thread (not summed per warp by shuffles, which a
// thread whose check failed would skip).
func.func @gathered_summed_rows(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<3x4xf64> {
  %zero = arith.constant 0.0 : f64
  %a = tensor.extract_slice %x[0] [3] [1] : tensor<?xf64> to tensor<3xf64>
  %b = tensor.extract_slice %x[3] [4] [1] : tensor<?xf64> to tensor<4xf64>
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?x3x4xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %m = soac.map ins(%a : tensor<3xf64>) -> tensor<3x4xf64> {
    ^bb1(%p: f64):
      %row = soac.map ins(%b : tensor<4xf64>) -> tensor<4xf64> {
      ^bb2(%q: f64):
        %t = arith.mulf %p, %q : f64
        %u = arith.mulf %t, %v : f64
        soac.yield %u : f64
      }
      soac.yield %row : tensor<4xf64>
    }
    soac.yield %m : tensor<3x4xf64>
  }
  %init = tensor.splat %zero : tensor<3x4xf64>
  %s = soac.reduce ins(%r : tensor<?x3x4xf64>) init(%init : tensor<3x4xf64>) -> tensor<3x4xf64> {
  ^bb0(%l: tensor<3x4xf64>, %rr: tensor<3x4xf64>):
    %sum = soac.map ins(%l, %rr : tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64> {
    ^bb1(%lrow: tensor<4xf64>, %rrow: tensor<4xf64>):
      %e = soac.map ins(%lrow, %rrow : tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64> {
      ^bb2(%u: f64, %w: f64):
        %t = arith.addf %u, %w : f64
        soac.yield %t : f64
      }
      soac.yield %e : tensor<4xf64>
    }
    soac.yield %sum : tensor<3x4xf64>
  }
  return %s : tensor<3x4xf64>
}

func.func @gathered_row_sums(%x: tensor<?xf64>, %idx: tensor<?x?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%idx : tensor<?x?xindex>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xindex>):
    %g = soac.map ins(%row : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%i: index):
      %v = tensor.extract %x[%i] : tensor<?xf64>
      soac.yield %v : f64
    }
    %s = soac.reduce ins(%g : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %c = arith.addf %a, %b : f64
      soac.yield %c : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
"""


def checked_runs(function: str) -> list[tuple[str, tuple, str | None]]:
    """Runs of a ``CHECKED_GATHERS`` function, each (label, arguments, what
    the message of the IndexOutOfRangeError it raises must match, or None):
    a clean run, a run with one index out of range, and a clean run again
    (a failure leaves nothing behind for the next call)."""
    rng = np.random.default_rng(11)
    x = rng.random(50)
    shape = (40, 300) if function == "gathered_row_sums" else (1003,)
    good = rng.integers(0, 50, shape)
    bad = good.copy()
    bad.flat[good.size // 2] = 57
    message = r"'tensor.extract' dimension 0: index 57 is out of range for size 50"
    return [("clean", (x, good), None), ("index57", (x, bad), message), ("clean_again", (x, good), None)]


# soac.vjp / soac.jvp expanded and inlined, as every pipeline does first.
_DERIVATIVES = "soac-autodiff,inline,soac-simplify,canonicalize,cse"


class _DerivativesExpanded:
    """soac-autodiff and the clean-up after it: what the interpreter needs
    before it runs a program with soac.vjp ops (it does not differentiate)."""

    TARGET = "cpu"

    def pipeline(self) -> str:
        return f"builtin.module({_DERIVATIVES})"


def interpreted(source: str, function: str, args):
    """The reference interpreter's results of ``function`` in ``source``
    (its derivatives expanded first)."""
    with ir.Context():
        module = lower(soac.parse(source), options=_DerivativesExpanded(), only=function)
        return soac.interpret(module, function, *args)


def _kernels(tensor_cores: bool = False) -> str:
    """soac-lower-to-nvvm's passes up to kernels on buffers inside host code
    on tensors (reduces and scans folded by at most 2 blocks; float64
    products on the tensor cores or not)."""
    options = f"fold-blocks=2 tensor-cores={'true' if tensor_cores else 'false'}"
    return (
        f"soac-fuse-gathers,soac-check-indices,cse,soac-copy-cheap-maps,convert-soac-to-gpu{{{options}}},"
        "soac-lower-kernel-checks,func.func(soac-sink-scalar-reads)"
    )


TO_KERNELS = f"{_DERIVATIVES},{_kernels()}"
# What GpuOptions(flatten=True) runs between the two.
_FLATTEN = "soac-expand-contractions{nested-only=true},soac-flatten"


@dataclass(frozen=True)
class EmulatedGpu:
    """The GPU pipeline's kernels run on the CPU: with ``flatten``, products
    in SOAC bodies expanded and nested parallelism flattened first (as
    ``GpuOptions(flatten=True)``: soac-expand-contractions, soac-flatten), then cheap maps only gathered
    from computed where they are read (soac-fuse-gathers), indices checked,
    cheap maps read by several SOACs copied per reader (soac-copy-cheap-maps),
    convert-soac-to-gpu (reduces and scans folded by at most 2 blocks;
    with ``tensor_cores``, float64 products by mma.sync, as the pipeline
    makes them for sm_80 and later), the kernels' checks lowered as for the
    GPU (soac-lower-kernel-checks), the scalars kernels read moved into them
    (soac-sink-scalar-reads), the launches emulated
    (soac-emulate-gpu-launches), then the CPU pipeline (which finds no SOAC
    left and bufferizes and lowers the kernels' code)."""

    TARGET: ClassVar[str] = "cpu"
    flatten: bool = False
    tensor_cores: bool = False

    def pipeline(self) -> str:
        kernels = _kernels(self.tensor_cores)
        passes = [_DERIVATIVES, _FLATTEN, kernels] if self.flatten else [_DERIVATIVES, kernels]
        return f"builtin.module({','.join(passes)},canonicalize,cse,soac-emulate-gpu-launches,soac-lower-to-cpu{{openmp=false}})"


def emulated(source: str, function: str, options: EmulatedGpu | None = None):
    """``function`` of ``source`` compiled by ``options`` (an
    :class:`EmulatedGpu`) into this process."""
    with ir.Context():
        module = soac.parse(source)
        entry = signature(function, public_functions(module)[function])
        lowered = lower(module, options=options or EmulatedGpu(), only=function)
        # The OpenMP runtime runs the teams of kernels that synchronize.
        return jit.jit(lowered, [entry], openmp=True)[function]


def assert_same_results(actual, expected, n):
    """Compiled results against the interpreter's: dtypes, shapes (of
    non-empty arrays: with no rows, the interpreter cannot tell the size of
    a row) and values, to float rounding that grows with the rows folded."""
    for a, e in zip(actual if isinstance(actual, tuple) else (actual,), expected if isinstance(expected, tuple) else (expected,)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype
        if e.size == 0:
            assert a.size == 0, a.shape
            continue
        assert a.shape == e.shape
        rtol = 1e-4 if e.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * max(1.0, np.sqrt(max(n, 1))))
