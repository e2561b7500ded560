"""Tiered compilation (soac.tiers): a large function starts on sequential
code, switches to parallel code compiled by a background process, and that
code goes into the disk cache; both tiers compute the same results and stop
failed calls with the same errors; small functions, SOAC_TIERED=off and
timing=True compile parallel code at once; when the child fails, the next
call compiles the parallel code; a long call makes the next one wait for
it; a child still compiling at exit is stopped."""

from __future__ import annotations

import logging
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import soac
from soac import tiers
from soac.runtime.abi import CompiledFunction, IndexOutOfRangeError

# A parallel reduce (chunked over threads once it has 2^14 elements) and a
# gather whose indices are checked.
PROGRAM = """
func.func @total(%x: tensor<?xf64>) -> f64 {
  %z = arith.constant 0.0 : f64
  %r = soac.reduce ins(%x : tensor<?xf64>) init(%z : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  return %r : f64
}

func.func @pick(%x: tensor<?xf64>, %i: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%i : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%k: index):
    %v = tensor.extract %x[%k] : tensor<?xf64>
    soac.yield %v : f64
  }
  return %r : tensor<?xf64>
}
"""

X = np.random.default_rng(0).standard_normal(100_000)


@pytest.fixture
def tiered(tmp_path, monkeypatch):
    """Tiering on for every function however small, a fresh disk cache, two
    threads (so that parallel code runs parallel loops)."""
    monkeypatch.setenv("SOAC_TIERED", "on")
    monkeypatch.setenv("SOAC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SOAC_CACHE", raising=False)
    monkeypatch.setattr(tiers, "LARGE_BYTES", 0)
    threads = soac.get_num_threads()
    soac.set_num_threads(2)
    soac.clear_caches()
    yield tmp_path
    assert soac.wait_for_background_compiles(300)
    soac.set_num_threads(threads)
    soac.clear_caches()


def entries(cache: pathlib.Path) -> list[pathlib.Path]:
    return [path for path in cache.glob("??/*") if "." not in path.name]


def calls_openmp(entry: pathlib.Path, function: str) -> bool:
    """Whether the entry's library forks OpenMP threads: parallel code."""
    return b"__kmpc_fork_call" in (entry / f"lib{function}.so").read_bytes()


def test_a_large_function_runs_sequential_code_then_parallel_code(tiered):
    total = soac.compile(PROGRAM, "total")
    assert isinstance(total, tiers.TieredFunction)
    assert total.signature.name == "total"
    first = total(X)
    assert total.wait(300)
    assert total.tier == "parallel"
    np.testing.assert_allclose([first, total(X)], [X.sum()] * 2, rtol=1e-12)
    # Both tiers are in the disk cache: a later compile loads the parallel one.
    stored = entries(tiered)
    assert len(stored) == 2
    assert sorted(calls_openmp(entry, "total") for entry in stored) == [False, True]
    soac.clear_caches()
    loaded = soac.compile(PROGRAM, "total")
    assert isinstance(loaded, CompiledFunction)
    np.testing.assert_allclose(loaded(X), X.sum(), rtol=1e-12)


def test_both_tiers_stop_a_bad_index_with_the_same_error(tiered):
    pick = soac.compile(PROGRAM, "pick")
    indices = np.array([3, 100_000, 1], dtype=np.intp)
    messages = []
    for _ in range(2):
        np.testing.assert_array_equal(pick(X, indices[[0, 2]]), X[[3, 1]])
        with pytest.raises(IndexOutOfRangeError) as caught:
            pick(X, indices)
        messages.append(str(caught.value))
        pick.wait(300)
    assert pick.tier == "parallel"
    assert messages[0] == messages[1]
    assert "index 100000" in messages[0] and "out of range" in messages[0]


def test_sequential_code_from_the_disk_cache_compiles_its_parallel_code_again(tiered, monkeypatch):
    soac.compile(PROGRAM, "total").wait(300)
    parallel = next(entry for entry in entries(tiered) if calls_openmp(entry, "total"))
    for path in parallel.iterdir():
        path.unlink()
    parallel.rmdir()
    soac.clear_caches()
    total = soac.compile(PROGRAM, "total")  # the sequential entry, loaded
    assert isinstance(total, tiers.TieredFunction)
    assert total.wait(300)
    np.testing.assert_allclose(total(X), X.sum(), rtol=1e-12)


@pytest.mark.parametrize("how", ["environment", "timing", "small"])
def test_parallel_code_at_once(tiered, monkeypatch, how):
    if how == "environment":
        monkeypatch.setenv("SOAC_TIERED", "off")
    if how == "small":
        monkeypatch.setattr(tiers, "LARGE_BYTES", 10**9)
    total = soac.compile(PROGRAM, "total", timing=how == "timing")
    assert isinstance(total, CompiledFunction)
    np.testing.assert_allclose(total(X), X.sum(), rtol=1e-12)


def test_a_child_that_fails_leaves_the_parallel_code_to_the_next_call(tiered, monkeypatch, caplog):
    monkeypatch.setattr(tiers, "child_command",
                        lambda directory: [sys.executable, "-c", "import sys; sys.exit('no compiler here')"])
    with caplog.at_level(logging.WARNING, logger="soac"):
        total = soac.compile(PROGRAM, "total")
        np.testing.assert_allclose(total(X), X.sum(), rtol=1e-12)
        assert tiers.wait_for_background_compiles(300)
    assert any("no compiler here" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(total(X), X.sum(), rtol=1e-12)  # compiled here, then run
    assert total.tier == "parallel"
    parallel = [entry for entry in entries(tiered) if calls_openmp(entry, "total")]
    assert len(parallel) == 1  # and stored for later processes


def test_a_long_call_makes_the_next_one_wait_for_the_parallel_code(tiered, monkeypatch):
    monkeypatch.setattr(tiers, "LONG_CALL_SECONDS", 0.0)  # every call is long
    total = soac.compile(PROGRAM, "total")
    total(X)
    assert total._parallel is not None or total.tier == "parallel"
    total(X)
    assert total.tier == "parallel"


def test_the_first_tier_is_stored_apart_from_the_sequential_code_users_ask_for(tiered):
    soac.compile(PROGRAM, "total").wait(300)
    soac.clear_caches()
    sequential = soac.compile(PROGRAM, "total", options=soac.compiler.CpuOptions(openmp=False))
    assert isinstance(sequential, CompiledFunction)
    np.testing.assert_allclose(sequential(X), X.sum(), rtol=1e-12)
    assert len(entries(tiered)) == 3  # first tier (-O0), parallel, sequential at -O3


def test_a_child_still_compiling_at_exit_is_stopped(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = textwrap.dedent(
        f"""
        import numpy as np, soac
        from soac import tiers
        tiers.LARGE_BYTES = 0
        total = soac.compile({PROGRAM!r}, "total")
        assert total.tier == "sequential", total.tier
        print("result", total(np.ones(10)))
        """
    )
    env = {**os.environ, "SOAC_TIERED": "on", "SOAC_CACHE": "off", "TMPDIR": str(scratch)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "result 10.0" in done.stdout
    # No child of that process is left compiling into its scratch directory.
    for command in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            assert str(scratch) not in command.read_text()
        except OSError:
            continue


def test_a_forked_process_keeps_the_first_tier(tmp_path):
    # In a fresh process (no JAX or other threads from earlier tests), whose
    # background child sleeps: the fork surely happens before the switch.
    script = textwrap.dedent(
        f"""
        import os, sys, time
        import numpy as np, soac
        from soac import tiers
        tiers.LARGE_BYTES = 0
        tiers.child_command = lambda directory: [sys.executable, "-c", "import time; time.sleep(60)"]
        total = soac.compile({PROGRAM!r}, "total")
        x = np.arange(10.0)
        pid = os.fork()
        if pid == 0:
            # Its job is given up at once, and no compile is tried here
            # (MLIR's threads stayed in the parent).
            start = time.monotonic()
            given_up = not total.wait(30) and time.monotonic() - start < 10
            ok = given_up and total.tier == "sequential" and total(x) == 45.0
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print("forked", os.waitstatus_to_exitcode(status), "parent", total.tier)
        """
    )
    env = {**os.environ, "SOAC_TIERED": "on", "SOAC_CACHE_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "forked 0 parent sequential" in done.stdout
