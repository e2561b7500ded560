"""Tiered compilation on the CPU: a large function's sequential code first,
its parallel code from a background process.

Parallel code costs LLVM about three times what sequential code does: each
top-level SOAC becomes an OpenMP region (outlined, with its chunk partials)
and also keeps a sequential loop for small sizes and one thread. ADBench's
GMM gradient took 0.95 s sequential against 3.25 s parallel on this
project's 2-core machine (docs/benchmarks.md, "Compile time"). So when
:func:`soac.compile` finds no code in the disk cache for a function whose
sequential lowering is large (``LARGE_BYTES``), it

* compiles the sequential code (``CpuOptions(openmp=False)``, LLVM at
  -O0: the first tier, 2-4 times faster to compile, 1.0-2.8 times slower
  to run) in this process and returns a :class:`TieredFunction` that runs
  it;
* compiles the parallel code in a child process (``python -m soac.tiers``;
  one child at a time, at a lower priority), which cannot hold up this
  process: MLIR's Python bindings keep the GIL while they compile;
* switches the function to the parallel code at its first call after the
  child is done, and stores that code in the disk cache, where later
  processes find it (if the child failed, that call compiles it here).

A call that runs the first tier runs on one core: one that takes a second
or more makes the next call wait for the parallel code.

Both tiers compute the same function; a reduce or scan may round
differently in parallel (it adds in chunks), as it does today between one
thread and several. ``SOAC_TIERED=off`` (read at each compilation) compiles
the parallel code before ``soac.compile`` returns; so does ``timing=True``.
:func:`wait_for_background_compiles` waits for the children (benchmarks
call it before timing). At exit, a child still compiling is stopped.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import pathlib
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from typing import Any

from .runtime.flags import flag

_log = logging.getLogger("soac")

# LLVM's optimization level for the first tier: -O0 compiled ADBench's
# gradients 2-4 times faster than -O3, and they ran 1.0-2.8 times slower
# (docs/benchmarks.md, "Compile time").
FIRST_TIER_OPT_LEVEL = 0

# A first-tier call this long makes the next call wait for the parallel code.
LONG_CALL_SECONDS = 1.0

# A sequential lowering (LLVM dialect, printed) below this size compiles
# its parallel code at once, in about 0.25 s or less on this project's
# machine: a child would save little. ADBench's k-means gradient (32 KB) is
# just below it; the other ADBench gradients are far above it (140-680 KB).
LARGE_BYTES = 32_000

def enabled() -> bool:
    """Whether ``SOAC_TIERED`` lets large functions start on sequential code."""
    return flag("SOAC_TIERED", default=True)


def worth_tiering(sequential_lowering: str) -> bool:
    """Whether a function whose sequential code lowers to this text is large
    enough to compile its parallel code in the background."""
    return len(sequential_lowering) >= LARGE_BYTES


class ParallelCode:
    """The parallel code of one function, compiled by a child process: not
    yet done, done (``function``), or failed (``function`` stays None)."""

    def __init__(self, ir: str, function: str, options: Any, store):
        self.ir, self.name, self.options = ir, function, options
        self._store = store  # store(directory): puts the files in the disk cache
        self.function = None
        self.abandoned = False
        self._done = threading.Event()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def give_up(self) -> None:
        """In a forked process: no parallel code, and none to compile here
        either (the parent's MLIR thread pool did not come along)."""
        self.abandoned = True
        self._done.set()

    def build(self, worker: _Worker) -> None:
        """Runs the child, loads its library and stores it (on the worker's thread)."""
        from .runtime import abi

        start = time.perf_counter()
        scratch = pathlib.Path(tempfile.mkdtemp(prefix="soac-parallel-"))
        try:
            request = json.dumps({"ir": self.ir, "function": self.name, "options": asdict(self.options)})
            failure = worker.run_child(scratch, request)
            if failure is not None:
                if not worker.closed:  # else stopped at exit: nothing to say
                    _log.warning("soac: the parallel code of @%s did not compile in the background (%s); "
                                 "the next call compiles it", self.name, failure)
                return
            self.function = abi.load_library(str(scratch / f"lib{self.name}.so")).functions[self.name]
            self._store(scratch)
            _log.info("the parallel code of @%s is ready (compiled in the background in %.2f s)",
                      self.name, time.perf_counter() - start)
        except Exception as error:  # noqa: BLE001  (the next call compiles it)
            self.function = None
            _log.warning("soac: could not load the parallel code of @%s (%s); the next call compiles it",
                         self.name, error)
        finally:
            # A loaded library stays mapped after its file is gone.
            shutil.rmtree(scratch, ignore_errors=True)
            self._done.set()


class TieredFunction:
    """A compiled function that runs its first tier (sequential code, LLVM
    at ``FIRST_TIER_OPT_LEVEL``) until its parallel code is ready, then the
    parallel code. Called, and described, like the function it wraps
    (``signature``).

    If the child fails (no C compiler to link with, an embedded Python
    whose ``sys.executable`` is not Python), the next call compiles the
    parallel code in this process, as ``SOAC_TIERED=off`` would have. A call
    of the first tier that takes ``LONG_CALL_SECONDS`` or more makes the
    next call wait for the parallel code: calls that long repay the wait."""

    def __init__(self, first_tier, parallel: ParallelCode, compile_here):
        self.signature = first_tier.signature
        self._current = first_tier
        self._parallel: ParallelCode | None = parallel
        self._compile_here = compile_here
        self._tier = "sequential"
        self._long_calls = False
        self._lock = threading.Lock()

    @property
    def tier(self) -> str:
        """``"sequential"`` or ``"parallel"``: the code the next call runs."""
        self._switch()
        return self._tier

    def wait(self, timeout: float | None = None) -> bool:
        """Waits until the parallel code is ready (compiling it here if the
        child failed); whether the next call runs it."""
        parallel = self._parallel
        if parallel is not None and not parallel.wait(timeout):
            return False
        self._switch()
        return self._tier == "parallel"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._long_calls:
            self.wait()
        self._switch()
        if self._tier == "parallel":
            return self._current(*args, **kwargs)
        start = time.perf_counter()
        try:
            return self._current(*args, **kwargs)
        finally:
            if time.perf_counter() - start >= LONG_CALL_SECONDS:
                self._long_calls = True

    def timed(self, *args: Any, **kwargs: Any) -> Any:
        """As ``CompiledFunction.timed`` (which measures GPU code only)."""
        self._switch()
        return self._current.timed(*args, **kwargs)

    def _switch(self) -> None:
        with self._lock:
            parallel = self._parallel
            if parallel is None or not parallel.done:
                return
            self._parallel = None
            if parallel.function is not None:
                self._current, self._tier = parallel.function, "parallel"
                return
            if parallel.abandoned:
                return
            try:
                self._current, self._tier = self._compile_here(), "parallel"
            except Exception as error:  # noqa: BLE001  (the first tier keeps working)
                _log.warning("soac: the parallel code of @%s did not compile here either (%s); it keeps "
                             "running sequential code", self.signature.name, error)


class _Worker:
    """One thread that runs the children one after another (several at once
    would take the cores from this process and from each other)."""

    def __init__(self):
        self._jobs: queue.Queue[ParallelCode] = queue.Queue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._child: subprocess.Popen | None = None
        self._unfinished: list[ParallelCode] = []
        self._closed = False

    def submit(self, job: ParallelCode) -> None:
        with self._lock:
            self._unfinished.append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="soac-parallel-code", daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def wait_idle(self, timeout: float | None) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: not self._unfinished, timeout)

    def run_child(self, directory: pathlib.Path, request: str) -> str | None:
        """Compiles the request's parallel code into ``directory`` in a child
        process; None when it succeeded, else why not."""
        package_parent = str(pathlib.Path(__file__).resolve().parents[1])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_parent, env.get("PYTHONPATH")]))
        with self._lock:
            if self._closed:
                return "the process is exiting"
            child = self._child = subprocess.Popen(
                child_command(directory), stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
            )
        try:
            _, errors = child.communicate(request)
        finally:
            with self._lock:
                self._child = None
        if child.returncode != 0:
            lines = errors.strip().splitlines()
            return lines[-1] if lines else f"exit status {child.returncode}"
        return None

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stops the child that is compiling; later jobs fail at once."""
        with self._lock:
            self._closed = True
            if self._child is not None:
                self._child.kill()

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job.build(self)
            finally:
                with self._lock:
                    self._unfinished.remove(job)
                    self._idle.notify_all()

    def abandon(self) -> None:
        """In a process forked from this one, which has none of its threads
        or children: the jobs are given up (their functions stay sequential)."""
        for job in list(self._unfinished):
            job.give_up()


def child_command(directory: pathlib.Path) -> list[str]:
    """The command of the child that compiles parallel code into ``directory``."""
    return [sys.executable, "-m", "soac.tiers", str(directory)]


_WORKER = _Worker()


def _after_fork() -> None:
    global _WORKER
    _WORKER.abandon()
    _WORKER = _Worker()


atexit.register(lambda: _WORKER.close())
os.register_at_fork(after_in_child=_after_fork)


def compile_in_background(ir: str, function: str, options: Any, store) -> ParallelCode:
    """Queues the compilation of ``@function``'s parallel code (``options``);
    ``store(directory)`` is given the directory of its shared library once
    it is loaded."""
    job = ParallelCode(ir, function, options, store)
    _WORKER.submit(job)
    return job


def wait_for_background_compiles(timeout: float | None = None) -> bool:
    """Waits until every function's parallel code queued so far is compiled
    (or failed to compile); False if ``timeout`` seconds passed first. The
    functions switch to it at their next call."""
    return _WORKER.wait_idle(timeout)


def _child_main(directory: str) -> None:
    """``python -m soac.tiers DIR``: compiles the parallel code the JSON
    request on standard input names into ``DIR/lib<function>.so``."""
    from mlir import ir

    from . import compiler
    from .diagnostics import parse
    from .runtime import aot, jit

    try:
        os.nice(5)  # a background job: the parent's work comes first
    except OSError:
        pass
    request = json.load(sys.stdin)
    function = request["function"]
    options = compiler.CpuOptions(**request["options"])
    with ir.Context():
        module = parse(request["ir"])
        entry = compiler.signature(function, compiler.public_functions(module)[function])
        lowered = compiler.lower(module, options=options, only=function)
        object_file = pathlib.Path(directory, f"{function}.o")
        jit.jit(lowered, [entry], openmp=options.openmp, object_file=str(object_file))
        aot.link_jit_object(object_file, [entry], directory, options)
        object_file.unlink()


if __name__ == "__main__":
    _child_main(sys.argv[1])
