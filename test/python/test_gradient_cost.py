"""The gradient-cost report (soac.gradient_cost): the work and memory of a
vjp against its primal's, and the flags for what grows faster."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np

import soac
import soac.numpy as jnp
from soac.gradient_cost import Polynomial, analyse

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_polynomials_compare_term_by_term():
    n, k = Polynomial.symbol("n"), Polynomial.symbol("k")
    primal = n * k + n
    assert (n * k * Polynomial.constant(3.0) + k).uncovered(primal) == []
    assert (n * n).uncovered(primal) == [(("n", 2),)]
    assert str(n * n + Polynomial.constant(2.0) * n * k + Polynomial.constant(1.0)) == "2·k·n + n^2 + 1"
    assert (n * k).substitute({"k": n}).terms == {(("n", 2),): 1.0}


def test_a_dense_adjoint_per_row_is_flagged():
    with soac.builders.ir.Context():  # the IR soac-autodiff made before adjoints were sparse at every depth
        module = soac.parse_file(str(ROOT / "test/python/data/dense_nested_gather_vjp.mlir"))
        cost = analyse(module, "conv", "conv__vjp_wrt_0_1")
    flags = {(flag.cost, flag.grows_as): flag for flag in cost.flags}
    # Per row, an adjoint of all of x (work and memory), and the rows' adjoints of w stacked before their sum.
    assert set(flags) == {("work", "x0^2"), ("memory", "x0^2"), ("memory", "x0·x1")}, cost
    work = flags["work", "x0^2"]
    assert any(operation.startswith("tensor.splat") for operation in work.operations)
    assert str(work).startswith("work grows as x0^2 (the primal's at most as x0·x1): ")


def test_cheap_gradients_are_not_flagged():
    library = (ROOT / "examples/soacs.mlir").read_text()
    for function, wrt in (("sum_of_squares", None), ("gather_squares", [0])):
        cost = soac.mlir.gradient_cost(library, function, wrt=wrt)
        assert cost.flags == [], cost
        assert 1.0 < cost.work_ratio() < 5.0, cost


def test_a_scans_stacked_outputs_are_not_checkpointed_but_a_loop_that_reads_them_back_is():
    def rnn(W, xs):
        def step(h, x):
            h = jnp.tanh(W @ h + x)
            return h, jnp.sum(h ** 2)

        return jnp.sum(soac.lax.scan(step, jnp.zeros(W.shape[0]), xs)[1])

    (cost,) = soac.grad(rnn).gradient_cost(np.ones((3, 3)), np.ones((5, 3)))
    assert cost.flags == [], cost  # W's rows and h have one size: the analysis learns it from the maps
    program = (ROOT / "test/AutoDiff/stacked-outputs.mlir").read_text()
    assert soac.mlir.gradient_cost(program, "stacked").flags == []
    read_back = soac.mlir.gradient_cost(program, "read_back")  # it checkpoints the whole buffer per iteration:
    assert str(read_back.checkpoints) == "x1^2 + x1"  # memory for the loop's states, which re-execution needs,
    (work,) = read_back.flags  # but copying the buffer each iteration is work the primal does not do
    assert (work.cost, work.grows_as) == ("work", "x1^2")
    assert any(operation.startswith("tensor.insert_slice") for operation in work.operations)


def test_the_command_line_reports_every_vjp_and_fails_on_a_flag():
    command = pathlib.Path(sys.executable).parent / "soac-gradient-cost"
    out = subprocess.run([str(command), str(ROOT / "test/AutoDiff/stacked-outputs.mlir")], capture_output=True, text=True)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "@stacked -> @stacked__vjp_wrt_0" in out.stdout and "@read_back -> @read_back__vjp_wrt_0" in out.stdout
    assert out.stdout.count("ASYMPTOTICALLY WORSE") == 1  # read_back's work


def test_a_products_adjoint_is_two_products_of_its_cost():
    def loss(x, w1, w2):
        return jnp.sum(jnp.tanh(x @ w1) @ w2)

    (cost,) = soac.grad(loss, argnums=(1, 2)).gradient_cost(np.ones((8, 17)), np.ones((17, 18)), np.ones(18))
    assert cost.flags == [], cost
    assert "x0·x0_1·x1_1" in str(cost.primal_work)  # x @ w1: rows × columns × inner size
    assert 2.0 <= cost.work_ratio() <= 4.0, cost
