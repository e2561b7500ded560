"""GPU code: every SOAC and nesting lowers to kernels whose PTX assembles
(here, without a GPU), shared libraries need nothing but the CUDA driver, and
(where a GPU is) compiled code computes what the reference interpreter does,
derivatives included."""

from __future__ import annotations

import ctypes
import functools
import importlib
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from mlir import ir

import soac
from soac import ptx
from soac.compiler import GpuOptions, lower
from soac.runtime import abi, native

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "adbench"))
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
func.func @grad_gather_squares(%x: tensor<?xf64>, %i: tensor<?xindex>) -> tensor<?xf64> {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @gather_squares(%x, %i, %one) wrt [0] : (tensor<?xf64>, tensor<?xindex>, f64) -> (f64, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
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
    "product_histogram": (ROWS, lambda n: (floats(5, dtype=np.float32), indices(n, 5), rng.uniform(0.9, 1.1, n).astype(np.float32))),
    "grad_sum_of_squares": (GRADIENTS, lambda n: (floats(n),)),
    "grad_matvec": (GRADIENTS, lambda n: (floats(n, 9), floats(9), floats(n))),
    "grad_gather_squares": (GRADIENTS, lambda n: (floats(40), rng.integers(0, 40, n))),
}
SIZES = [0, 1, 7, 1003, 300_001]


@functools.cache
def gpu_status() -> str:
    library = ctypes.CDLL(native.soac_cuda_runtime_library())
    library.soac_gpu_status.restype = ctypes.c_char_p
    return library.soac_gpu_status().decode()


needs_ptxas = pytest.mark.skipif(ptx.ptxas_path() is None, reason="ptxas (CUDA toolkit) is not installed")
needs_gpu = pytest.mark.skipif(gpu_status() != "ready", reason=f"no GPU to run on: {gpu_status()}")


@needs_ptxas
@pytest.mark.parametrize("function", sorted(CASES))
def test_every_kernel_assembles(function):
    source, _ = CASES[function]
    with ir.Context():
        lowered = lower(soac.parse(source), options=GpuOptions(), only=function)
        kernels = ptx.kernels(lowered)
    assert kernels, "no kernel was generated"
    for name, text in kernels.items():
        assert ".target sm_90" in text, name
        assert ptx.assemble(text, "sm_90"), name


@needs_ptxas
@pytest.mark.parametrize("program", [f"{name}{kind}" for name in ("gmm", "kmeans", "ba", "hand", "lstm") for kind in ("", " gradient")])
def test_benchmark_programs_assemble(program):
    """The ADBench objectives and gradients (bench/adbench), traced by the frontend."""
    name, _, derivative = program.partition(" ")
    module = importlib.import_module(name)
    function, args = module.soac_version(*module.inputs(**module.TINY))
    jitted = soac.value_and_grad(function, wrt=list(module.WRT)) if derivative else soac.jit(function)
    traced = jitted.trace(*args)
    kernels = ptx.kernels(lower(traced.module, options=GpuOptions(), only=traced.name))
    assert kernels, "no kernel was generated"
    for kernel, text in kernels.items():
        assert ptx.assemble(text, "sm_90"), kernel


def test_reductions_use_warp_shuffles_and_histograms_atomics():
    with ir.Context():
        reduce_ptx = "".join(ptx.kernels(lower(soac.parse(LIBRARY), options=GpuOptions(), only="sum")).values())
        histogram_ptx = "".join(ptx.kernels(lower(soac.parse(LIBRARY), options=GpuOptions(), only="histogram")).values())
        cas_ptx = "".join(ptx.kernels(lower(soac.parse(ROWS), options=GpuOptions(), only="product_histogram")).values())
    assert "shfl.sync.bfly" in reduce_ptx and "bar.sync" in reduce_ptx
    assert "atom.global.add.f32" in histogram_ptx
    assert "atom.cas.b32" in cas_ptx or "atom.acq_rel.sys.cas.b32" in cas_ptx


def test_shared_library_needs_only_the_driver(tmp_path):
    library = soac.compile(LIBRARY, "cumsum", target="gpu", emit="shared-lib", output=tmp_path)
    needed = subprocess.run(["readelf", "-d", str(library.library)], capture_output=True, text=True, check=True).stdout
    libraries = {line.split("[")[1].rstrip("]") for line in needed.splitlines() if "(NEEDED)" in line}
    assert libraries <= {"libsoac_cuda_runtime.so", "libc.so.6", "libm.so.6"}, libraries
    runtime = subprocess.run(
        ["readelf", "-d", str(tmp_path / "libsoac_cuda_runtime.so")], capture_output=True, text=True, check=True
    ).stdout
    assert "libcuda" not in runtime  # opened at run time, so the library loads anywhere
    assert "soac_gpu_alloc" in library.header.read_text()
    loaded = library.load()
    assert loaded.target == "gpu"
    if gpu_status() != "ready":
        with pytest.raises(abi.DeviceError, match="cannot run here"):
            loaded.cumsum(np.ones(3, np.float32))


def test_unsupported_constructs_are_errors_at_their_location():
    with pytest.raises(soac.LoweringError, match=r"soacs.mlir:\d+:\d+: error: 'soac.reduce_by_index' op is not supported"):
        with ir.Context():
            module = soac.parse_file(ROOT / "examples" / "soacs.mlir")
            lower(module, options=GpuOptions(), only="argmax_bins")


def test_options_must_fit_the_target():
    with pytest.raises(soac.Error, match="takes GpuOptions"):
        soac.compile(LIBRARY, "sum", target="gpu", options=soac.compiler.CpuOptions())


@needs_gpu
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("function", sorted(CASES))
def test_runs_like_the_interpreter(function, n):
    source, make_args = CASES[function]
    args = make_args(n)
    compiled = soac.compile(source, function, target="gpu")
    with ir.Context():
        expected = soac.interpret(soac.parse(source), function, *args)
    actual = compiled(*args)
    for a, e in zip(actual if isinstance(actual, tuple) else (actual,), expected if isinstance(expected, tuple) else (expected,)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape
        rtol = 1e-4 if e.dtype == np.float32 else 1e-9
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * max(1.0, np.sqrt(max(n, 1))))
