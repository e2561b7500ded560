"""Gradients of reads at computed indices nested in maps, reduces and loops
(examples/nested_gathers.mlir): their adjoints are sparse at every depth
(test/AutoDiff/sparse-adjoints.mlir shows the IR); here each is checked
against central finite differences in float64, with duplicate indices and
indices at the ends of the arrays read, and against the gradient-cost report
(no term growing faster than the primal's)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from gradcheck import check_vjp

import soac

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
PROGRAMS = (EXAMPLES / "nested_gathers.mlir").read_text()
rng = np.random.default_rng(7)


def test_convolution_reads_one_map_deeper():
    x, w = rng.standard_normal(12), rng.standard_normal(4)
    check_vjp(PROGRAMS, "conv1d", [x, w])


def test_convolution_of_each_row_reads_a_row_of_a_map_two_maps_deeper():
    """The row is a value of the outer map's body: its reads stack over the
    positions and are added by one reduce_by_index per row, not into a dense
    adjoint of the row per position."""
    x, w = rng.standard_normal((3, 9)), rng.standard_normal(4)
    check_vjp(PROGRAMS, "rows_conv1d", [x, w])


def test_convolution_with_clamped_positions_reads_the_ends_many_times():
    x, w = rng.standard_normal(7), rng.standard_normal(3)
    check_vjp(PROGRAMS, "conv1d_clamped", [x, w])


def test_stencil_reads_clamped_neighbours_in_a_map_of_maps():
    check_vjp(PROGRAMS, "stencil2d", [rng.standard_normal((4, 5))])


def test_embedding_bags_read_rows_with_repeated_ids():
    table = rng.standard_normal((4, 3))
    ids = np.array([[0, 0, 3], [3, 1, 3], [2, 2, 2], [0, 3, 1], [1, 1, 0]], dtype=np.intp)
    check_vjp(PROGRAMS, "embedding_bag", [table, ids], wrt=[0])


def test_gathers_in_a_loop_in_a_map():
    x = rng.standard_normal(5)
    path = np.array([[0, 4, 4, 1], [2, 2, 0, 4], [4, 4, 4, 4]], dtype=np.intp)
    check_vjp(PROGRAMS, "loop_gathers", [x, path], wrt=[0])


def test_gathers_in_a_loop_with_no_iterations():
    x = rng.standard_normal(5)
    check_vjp(PROGRAMS, "loop_gathers", [x, np.zeros((3, 0), dtype=np.intp)], wrt=[0])


# Deeper and irregular nests: a map in a loop in a map (the loop's records
# hold a batch per iteration), two loops in a map, branches in a map (each
# yields the other's reads as zeros; the last position reads outside the
# array and takes the other branch), and rows of different lengths, whose reads cannot be stacked over the rows (a dense adjoint per
# row, as before, and still right).
NESTS = """
func.func @map_in_loop_in_map(%x: tensor<?xf64>, %starts: tensor<?xindex>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %r = soac.map ins(%starts : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%s: index):
    %acc = scf.for %t = %c0 to %c3 step %c1 iter_args(%a = %zero) -> (f64) {
      %terms = soac.map ins(%w : tensor<?xf64>) -> tensor<?xf64> {
      ^bb0(%wj: f64):
        %st = arith.addi %s, %t : index
        %p = arith.remui %st, %n : index
        %v = tensor.extract %x[%p] : tensor<?xf64>
        %m = arith.mulf %v, %wj : f64
        %e = arith.mulf %m, %a : f64
        %f = arith.addf %e, %m : f64
        soac.yield %f : f64
      }
      %sum = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb0(%p: f64, %q: f64):
        %u = arith.addf %p, %q : f64
        soac.yield %u : f64
      }
      scf.yield %sum : f64
    }
    soac.yield %acc : f64
  }
  return %r : tensor<?xf64>
}

func.func @loop_in_loop_in_map(%x: tensor<?x?xf64>, %rows: tensor<?xindex>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %w = tensor.dim %x, %c1 : tensor<?x?xf64>
  %r = soac.map ins(%rows : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %outer = scf.for %s = %c0 to %c2 step %c1 iter_args(%a = %zero) -> (f64) {
      %inner = scf.for %t = %c0 to %w step %c1 iter_args(%b = %a) -> (f64) {
        %v = tensor.extract %x[%i, %t] : tensor<?x?xf64>
        %sv = math.sin %v : f64
        %m = arith.mulf %b, %sv : f64
        %n = arith.addf %m, %v : f64
        scf.yield %n : f64
      }
      scf.yield %inner : f64
    }
    soac.yield %outer : f64
  }
  return %r : tensor<?xf64>
}

func.func @padded_conv(%x: tensor<?xf64>, %w: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %positions = soac.iota %n : tensor<?xindex>
  %r = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %terms = soac.map ins(%w : tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%wj: f64):
      %t = arith.addi %i, %c1 : index
      %inside = arith.cmpi ult, %t, %n : index
      %v = scf.if %inside -> (f64) {
        %xt = tensor.extract %x[%t] : tensor<?xf64>
        %s = math.sin %xt : f64
        scf.yield %s : f64
      } else {
        %x0 = tensor.extract %x[%c0] : tensor<?xf64>
        %x1 = tensor.extract %x[%i] : tensor<?xf64>
        %p = arith.mulf %x0, %x1 : f64
        scf.yield %p : f64
      }
      %m = arith.mulf %v, %wj : f64
      soac.yield %m : f64
    }
    %sum = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %u = arith.addf %p, %q : f64
      soac.yield %u : f64
    }
    soac.yield %sum : f64
  }
  return %r : tensor<?xf64>
}

func.func @ragged_rows(%x: tensor<?xf64>, %lengths: tensor<?xindex>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %r = soac.map ins(%lengths : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%len: index):
    %offsets = soac.iota %len : tensor<?xindex>
    %terms = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xf64> {
    ^bb0(%j: index):
      %p = arith.remui %j, %n : index
      %v = tensor.extract %x[%p] : tensor<?xf64>
      %s = arith.mulf %v, %v : f64
      soac.yield %s : f64
    }
    %sum = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%p: f64, %q: f64):
      %u = arith.addf %p, %q : f64
      soac.yield %u : f64
    }
    soac.yield %sum : f64
  }
  return %r : tensor<?xf64>
}
"""


def test_a_map_in_a_loop_in_a_map():
    x, w = rng.standard_normal(5), rng.standard_normal(3)
    starts = np.array([0, 4, 3, 4], dtype=np.intp)
    check_vjp(NESTS, "map_in_loop_in_map", [x, starts, w], wrt=[0, 2])


def test_a_loop_in_a_loop_in_a_map():
    x = rng.standard_normal((3, 4))
    check_vjp(NESTS, "loop_in_loop_in_map", [x, np.array([2, 0, 2, 1], dtype=np.intp)], wrt=[0])


def test_branches_in_a_map_of_maps():
    x, w = rng.standard_normal(6), rng.standard_normal(3)
    check_vjp(NESTS, "padded_conv", [x, w])


@pytest.mark.parametrize("lengths", [[3, 0, 7, 1], [2, 2, 2]])
def test_rows_of_different_lengths(lengths):
    x = rng.standard_normal(4)
    check_vjp(NESTS, "ragged_rows", [x, np.array(lengths, dtype=np.intp)], wrt=[0])


@pytest.mark.parametrize(
    "program, function",
    [(PROGRAMS, name) for name in ("conv1d", "conv1d_clamped", "rows_conv1d", "stencil2d", "embedding_bag", "loop_gathers")]
    + [(NESTS, name) for name in ("map_in_loop_in_map", "loop_in_loop_in_map")],
)
def test_nested_reads_cost_what_their_primal_does(program, function):
    """The gradient-cost report finds no work or memory growing faster than
    the primal's (the stacked reads are scattered one row at a time)."""
    cost = soac.mlir.gradient_cost(program, function, wrt=[0])
    assert cost.flags == [], cost


@pytest.mark.parametrize("program, function, wrt", [(PROGRAMS, "conv1d", [0, 1]), (NESTS, "padded_conv", [0])])
def test_stacked_reads_beside_other_adjoints_are_stored_but_cost_linear_work(program, function, wrt):
    """When the adjoint map also yields other adjoints (of w) or several
    batches (one per branch), its stacked reads are stored, n × the batch
    (a memory flag), but the work still grows as the primal's."""
    flags = soac.mlir.gradient_cost(program, function, wrt=wrt).flags
    assert [(flag.cost, flag.grows_as) for flag in flags] == [("memory", "x0·x1")], flags


def test_rows_of_different_lengths_keep_a_dense_adjoint_per_row():
    """The reads of rows of data-dependent length cannot be stacked: the
    report flags the dense adjoint each row then makes."""
    flags = soac.mlir.gradient_cost(NESTS, "ragged_rows", wrt=[0]).flags
    assert any(flag.cost == "work" for flag in flags), flags
