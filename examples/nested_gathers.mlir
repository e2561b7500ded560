// Reads at computed indices nested in maps, reduces and loops: their
// gradients accumulate sparsely (one reduce_by_index per read site, after
// the outermost map), so they cost a constant factor of the primal.
// bench/cheap_gradient_nested.py measures them; test/python/test_autodiff_sparse.py
// checks their gradients.

// 1-D convolution, "valid" positions: out[i] = Σ_j w[j] · x[i + j], then Σ out².
func.func @conv1d(%x: tensor<?xf64>, %w: tensor<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %nx = tensor.dim %x, %c0 : tensor<?xf64>
  %k = tensor.dim %w, %c0 : tensor<?xf64>
  %span = arith.subi %nx, %k : index
  %n = arith.addi %span, %c1 : index
  %positions = soac.iota %n : tensor<?xindex>
  %offsets = soac.iota %k : tensor<?xindex>
  %out = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %terms = soac.map ins(%offsets, %w : tensor<?xindex>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%j: index, %wj: f64):
      %p = arith.addi %i, %j : index
      %xp = tensor.extract %x[%p] : tensor<?xf64>
      %t = arith.mulf %wj, %xp : f64
      soac.yield %t : f64
    }
    %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  %sq = soac.map ins(%out : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%e: f64):
    %t = arith.mulf %e, %e : f64
    soac.yield %t : f64
  }
  %total = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %total : f64
}

// The convolution of each row of x (rows of n / 16), in a map over the rows:
// each row is a value of the outer map's body, read two maps deeper. Then
// Σ out².
func.func @rows_conv1d(%x: tensor<?x?xf64>, %w: tensor<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %nx = tensor.dim %x, %c1 : tensor<?x?xf64>
  %k = tensor.dim %w, %c0 : tensor<?xf64>
  %span = arith.subi %nx, %k : index
  %n = arith.addi %span, %c1 : index
  %positions = soac.iota %n : tensor<?xindex>
  %offsets = soac.iota %k : tensor<?xindex>
  %rows = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %out = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
    ^bb1(%i: index):
      %terms = soac.map ins(%offsets, %w : tensor<?xindex>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb2(%j: index, %wj: f64):
        %p = arith.addi %i, %j : index
        %xp = tensor.extract %row[%p] : tensor<?xf64>
        %t = arith.mulf %wj, %xp : f64
        soac.yield %t : f64
      }
      %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      %sq = arith.mulf %s, %s : f64
      soac.yield %sq : f64
    }
    %r = soac.reduce ins(%out : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %r : f64
  }
  %total = soac.reduce ins(%rows : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %total : f64
}

// The same convolution with "same" size and zero padding as a clamp: the
// offsets are made in each row (an iota of a size from outside), the
// positions clamped to the ends (duplicate indices at the boundaries).
func.func @conv1d_clamped(%x: tensor<?xf64>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %k = tensor.dim %w, %c0 : tensor<?xf64>
  %last = arith.subi %n, %c1 : index
  %positions = soac.iota %n : tensor<?xindex>
  %out = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %offsets = soac.iota %k : tensor<?xindex>
    %terms = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%j: index):
      %wj = tensor.extract %w[%j] : tensor<?xf64>
      %ij = arith.addi %i, %j : index
      %shifted = arith.subi %ij, %c1 : index
      %above = arith.maxsi %shifted, %c0 : index
      %p = arith.minsi %above, %last : index
      %xp = tensor.extract %x[%p] : tensor<?xf64>
      %t = arith.mulf %wj, %xp : f64
      %u = math.sin %t : f64
      soac.yield %u : f64
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

// 5-point stencil on an h × w grid, neighbours clamped at the edges:
// out[i][j] = x[i-1][j] + x[i+1][j] + x[i][j-1] + x[i][j+1] - 4·x[i][j], then Σ out².
func.func @stencil2d(%x: tensor<?x?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %four = arith.constant 4.0 : f64
  %h = tensor.dim %x, %c0 : tensor<?x?xf64>
  %w = tensor.dim %x, %c1 : tensor<?x?xf64>
  %hlast = arith.subi %h, %c1 : index
  %wlast = arith.subi %w, %c1 : index
  %rows = soac.iota %h : tensor<?xindex>
  %cols = soac.iota %w : tensor<?xindex>
  %sums = soac.map ins(%rows : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %row = soac.map ins(%cols : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%j: index):
      %ip = arith.addi %i, %c1 : index
      %up = arith.minsi %ip, %hlast : index
      %im = arith.subi %i, %c1 : index
      %down = arith.maxsi %im, %c0 : index
      %jp = arith.addi %j, %c1 : index
      %right = arith.minsi %jp, %wlast : index
      %jm = arith.subi %j, %c1 : index
      %left = arith.maxsi %jm, %c0 : index
      %a = tensor.extract %x[%up, %j] : tensor<?x?xf64>
      %b = tensor.extract %x[%down, %j] : tensor<?x?xf64>
      %c = tensor.extract %x[%i, %right] : tensor<?x?xf64>
      %d = tensor.extract %x[%i, %left] : tensor<?x?xf64>
      %e = tensor.extract %x[%i, %j] : tensor<?x?xf64>
      %ab = arith.addf %a, %b : f64
      %cd = arith.addf %c, %d : f64
      %s = arith.addf %ab, %cd : f64
      %e4 = arith.mulf %four, %e : f64
      %l = arith.subf %s, %e4 : f64
      %l2 = arith.mulf %l, %l : f64
      soac.yield %l2 : f64
    }
    %t = soac.reduce ins(%row : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %r = arith.addf %p, %q : f64
      soac.yield %r : f64
    }
    soac.yield %t : f64
  }
  %total = soac.reduce ins(%sums : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%p: f64, %q: f64):
    %r = arith.addf %p, %q : f64
    soac.yield %r : f64
  }
  return %total : f64
}

// Embedding bags in a map over batches: bag b is the sum of the rows
// table[ids[b][l]] (a row per read), then the loss Σ_b tanh(bag_b) · bag_b.
func.func @embedding_bag(%table: tensor<?x?xf64>, %ids: tensor<?x?xindex>) -> f64 {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %d = tensor.dim %table, %c1 : tensor<?x?xf64>
  %zeros = tensor.splat %zero[%d] : tensor<?xf64>
  %losses = soac.map ins(%ids : tensor<?x?xindex>) -> tensor<?xf64> {
  ^bb0(%bag: tensor<?xindex>):
    %rows = soac.map ins(%bag : tensor<?xindex>) -> tensor<?x?xf64> {
    ^bb0(%id: index):
      %row = tensor.extract_slice %table[%id, 0] [1, %d] [1, 1] : tensor<?x?xf64> to tensor<?xf64>
      soac.yield %row : tensor<?xf64>
    }
    %sum = soac.reduce ins(%rows : tensor<?x?xf64>) init(%zeros : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%p: tensor<?xf64>, %q: tensor<?xf64>):
      %r = soac.map ins(%p, %q : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%u: f64, %v: f64):
        %s = arith.addf %u, %v : f64
        soac.yield %s : f64
      }
      soac.yield %r : tensor<?xf64>
    }
    %terms = soac.map ins(%sum : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%e: f64):
      %t = math.tanh %e : f64
      %u = arith.mulf %t, %e : f64
      soac.yield %u : f64
    }
    %loss = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %r = arith.addf %p, %q : f64
      soac.yield %r : f64
    }
    soac.yield %loss : f64
  }
  %total = soac.reduce ins(%losses : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%p: f64, %q: f64):
    %r = arith.addf %p, %q : f64
    soac.yield %r : f64
  }
  return %total : f64
}

// Gathers in a loop in a map: each row i follows its own index path,
// acc ← acc · 0.5 + sin(x[path[i][t]]) for t over the row, then Σ acc².
func.func @loop_gathers(%x: tensor<?xf64>, %path: tensor<?x?xindex>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %half = arith.constant 0.5 : f64
  %accs = soac.map ins(%path : tensor<?x?xindex>) -> tensor<?xf64> {
  ^bb0(%steps: tensor<?xindex>):
    %t = tensor.dim %steps, %c0 : tensor<?xindex>
    %acc = scf.for %s = %c0 to %t step %c1 iter_args(%a = %zero) -> (f64) {
      %p = tensor.extract %steps[%s] : tensor<?xindex>
      %v = tensor.extract %x[%p] : tensor<?xf64>
      %sv = math.sin %v : f64
      %scaled = arith.mulf %a, %half : f64
      %next = arith.addf %scaled, %sv : f64
      scf.yield %next : f64
    }
    %sq = arith.mulf %acc, %acc : f64
    soac.yield %sq : f64
  }
  %total = soac.reduce ins(%accs : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%p: f64, %q: f64):
    %r = arith.addf %p, %q : f64
    soac.yield %r : f64
  }
  return %total : f64
}
