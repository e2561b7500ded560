// A small library of soac programs: one or two per combinator, the classic
// fusions and nestings. The benchmark (bench/cpu_soacs.py) and the tests run
// them; each is also a starting point for your own programs.
//
//   soac-opt examples/soacs.mlir --soac-lower-to-cpu
//   python -c 'import soac; print(soac.compile(open("examples/soacs.mlir").read(), "cumsum"))'

// map: a * x + y
func.func @saxpy(%a: f32, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%x, %y : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%xi: f32, %yi: f32):
    %m = arith.mulf %a, %xi : f32
    %s = arith.addf %m, %yi : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// reduce (+)
func.func @sum(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}

// reduce (+) . map (^2): the map is fused into the reduction, one pass over x
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

// argmin with the first index on ties: a tuple operator over (value, iota)
func.func @argmin(%x: tensor<?xf32>) -> (f32, index) {
  %inf = arith.constant 0x7F800000 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %i = soac.iota %n : tensor<?xindex>
  %r:2 = soac.reduce ins(%x, %i : tensor<?xf32>, tensor<?xindex>) init(%inf, %c0 : f32, index) -> f32, index {
  ^bb0(%a: f32, %ai: index, %b: f32, %bi: index):
    %lt = arith.cmpf olt, %b, %a : f32
    %eq = arith.cmpf oeq, %b, %a : f32
    %earlier = arith.cmpi ult, %bi, %ai : index
    %tie = arith.andi %eq, %earlier : i1
    %take = arith.ori %lt, %tie : i1
    %v = arith.select %take, %b, %a : f32
    %j = arith.select %take, %bi, %ai : index
    soac.yield %v, %j : f32, index
  }
  return %r#0, %r#1 : f32, index
}

// scan (+)
func.func @cumsum(%x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.scan ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// y[i] = a[i] * y[i-1] + b[i] (y[-1] = 0): a scan of linear functions (a, b),
// an associative but not commutative operator
func.func @recurrence(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.scan ins(%a, %b : tensor<?xf64>, tensor<?xf64>) init(%one, %zero : f64, f64) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%a1: f64, %b1: f64, %a2: f64, %b2: f64):
    %a12 = arith.mulf %a1, %a2 : f64
    %t = arith.mulf %b1, %a2 : f64
    %b12 = arith.addf %t, %b2 : f64
    soac.yield %a12, %b12 : f64, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xf64>
}

// A * v: a map over the rows of A, each a nested map (fused) and reduce; v is free
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

// dest with dest[idx[i]] = x[i]; out-of-range indices are skipped
func.func @scatter(%dest: tensor<?xf32>, %idx: tensor<?xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.scatter dest(%dest : tensor<?xf32>) indices(%idx : tensor<?xi64>) ins(%x : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// reduce_by_index (+): bins[idx[i]] += x[i]; out-of-range indices are skipped
func.func @histogram(%bins: tensor<?xf32>, %idx: tensor<?xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.reduce_by_index dest(%bins : tensor<?xf32>) indices(%idx : tensor<?xi64>) ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// the largest value per bin and where it came from: a tuple operator
func.func @argmax_bins(%best: tensor<?xf64>, %where: tensor<?xi64>, %idx: tensor<?xi64>, %x: tensor<?xf64>, %pos: tensor<?xi64>) -> (tensor<?xf64>, tensor<?xi64>) {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %none = arith.constant -1 : i64
  %r:2 = soac.reduce_by_index dest(%best, %where : tensor<?xf64>, tensor<?xi64>) indices(%idx : tensor<?xi64>) ins(%x, %pos : tensor<?xf64>, tensor<?xi64>) init(%ninf, %none : f64, i64) -> tensor<?xf64>, tensor<?xi64> {
  ^bb0(%a: f64, %ai: i64, %b: f64, %bi: i64):
    %gt = arith.cmpf ogt, %b, %a : f64
    %m = arith.select %gt, %b, %a : f64
    %mi = arith.select %gt, %bi, %ai : i64
    soac.yield %m, %mi : f64, i64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xi64>
}

// sum_i x[idx[i]]^2: reads x at data-dependent indices (the cheap-gradient
// benchmark: its gradient is a sparse scatter-add, reduce_by_index (+))
func.func @gather_squares(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %g = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    %s = arith.mulf %v, %v : f64
    soac.yield %s : f64
  }
  %r = soac.reduce ins(%g : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : f64
}
