"""Bad Python arguments through compiled functions.

The functions of ``examples/soacs.mlir`` (and two of this file: a size taken
from an argument, a static dimension) are compiled once into a shared library
(``soac.compile(..., emit="shared-lib")``'s lowering, checked calls and
loader), then called with arguments made bad in seeded ways: wrong dtypes, ranks and counts, None,
strings, objects, ragged lists, NaN and infinities, huge and negative
integers, empty and non-contiguous arrays, sizes that differ between
arguments, indices out of range. Call ``i`` of seed ``s`` is drawn from
``random.Random(f"{s}:{i}")`` alone.

Each call must return or raise a :class:`soac.Error`. The calls run in a
child process that prints a line before and after each one, so that a crash
(a signal, AddressSanitizer's report, an abort of the runtime) or a hang
names the call that caused it; the parent then restarts the child after it.
(Memory an earlier call corrupted can make a later one crash: the
AddressSanitizer run below names the call that did it.)

    python test/fuzz/arg_fuzz.py --count 2000 --seed 1
    python test/fuzz/arg_fuzz.py --seed 1 --only 17     # one call, in this process

With ``--asan-runtime build-asan/libsoac_runtime.so`` (``make asan``) the
library's code is instrumented by LLVM's AddressSanitizer pass and linked
against that runtime; the child runs with libasan preloaded.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "examples" / "soacs.mlir").read_text() + """
func.func @iota_n(%n: index) -> tensor<?xindex> {
  %r = soac.iota %n : tensor<?xindex>
  return %r : tensor<?xindex>
}

func.func @row_sums(%m: tensor<4x?xf64>) -> tensor<4xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%m : tensor<4x?xf64>) -> tensor<4xf64> {
  ^bb0(%row: tensor<?xf64>):
    %s = soac.reduce ins(%row : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<4xf64>
}
"""
FUNCTIONS = ("saxpy", "sum", "argmin", "cumsum", "recurrence", "matvec", "scatter", "histogram", "argmax_bins",
             "gather_squares", "iota_n", "row_sums")
SIZES = (0, 1, 2, 3, 5, 17, 100)
HANG_SECONDS = 30


# ------------------------------------------------------------ arguments


def good_value(spec: Any, n: int, rng: np.random.Generator) -> Any:
    """A value that fits ``spec`` (an ``abi.ValueSpec``): dynamic sizes are
    ``n``, integers are valid indices of size ``n``."""
    dtype = np.dtype(spec.dtype)
    if not spec.is_tensor:
        return dtype.type(rng.integers(0, 4) if dtype.kind in "iub" else rng.normal())
    shape = tuple(n if size is None else size for size in spec.shape)
    if dtype.kind in "iu":
        return rng.integers(0, max(n, 1), size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def _integer(spec: Any) -> bool:
    return np.dtype(spec.dtype).kind in "iu"


def _float(spec: Any) -> bool:
    return np.dtype(spec.dtype).kind == "f"


def _put(value: np.ndarray, specials: Sequence[Any], rng: np.random.Generator) -> np.ndarray | None:
    """A copy of ``value`` with random elements set to ``specials``."""
    if value.size == 0:
        return None
    value = value.copy()
    flat = value.reshape(-1)
    for i in rng.integers(0, flat.size, size=max(1, flat.size // 3)):
        flat[i] = specials[rng.integers(len(specials))]
    return value


def _wrong_dtype(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor:
        return [1 + 2j, "1.5", np.datetime64("2020-01-01"), True][rng.integers(4)]
    others = [d for d in ("float16", "float32", "float64", "int32", "int64", "uint8", "bool", "complex64")
              if d != spec.dtype]
    return value.astype(others[rng.integers(len(others))])


def _wrong_rank(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor:
        return np.zeros(3, spec.dtype)
    return [value[None], np.zeros((), spec.dtype), np.zeros((min(n, 3),) * (value.ndim + 2), spec.dtype)][
        rng.integers(3)]


def _non_value(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    return [None, "abc", b"\x00", object(), {"x": 1}, [[1.0], [1.0, 2.0]], [1, "x"]][rng.integers(7)]


def _nan_inf(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    specials = (np.nan, np.inf, -np.inf)
    if not spec.is_tensor:
        return specials[rng.integers(3)]
    return _put(value, specials, rng) if _float(spec) else None


def _huge(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor:
        return [2**62, 2**63 - 1, 2**63, 2**64, -(2**70), 10**30][rng.integers(6)]
    info = np.iinfo(spec.dtype) if _integer(spec) else np.finfo(spec.dtype)
    return _put(value, (info.max, info.min), rng)


def _negative(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor:
        return [-1, -(2**31), -(2**62)][rng.integers(3)] if _integer(spec) else None
    return _put(value, (-1, -(2**31)), rng) if _integer(spec) else None


def _out_of_range(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor or not _integer(spec):
        return None
    return _put(value, (-1, n, n + 7, 2**31, 2**62, np.iinfo(spec.dtype).max, np.iinfo(spec.dtype).min), rng)


def _empty(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor or not spec.shape:
        return None
    shape = list(value.shape)
    shape[rng.integers(len(shape))] = 0
    return np.zeros(shape, spec.dtype)


def _non_contiguous(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor or not spec.shape:
        return None
    choice = rng.integers(4)
    if choice == 0:  # every other element of an array twice as large
        return np.repeat(value, 2, axis=0)[::2]
    if choice == 1:
        return value[::-1]
    if choice == 2:
        return np.asfortranarray(value) if value.ndim > 1 else np.broadcast_to(value[:1], value.shape)
    readonly = value.copy()
    readonly.setflags(write=False)
    return readonly


def _mismatched_size(spec: Any, value: Any, n: int, rng: np.random.Generator) -> Any:
    if not spec.is_tensor or not spec.shape:
        return None
    other = [m for m in SIZES if m != n][rng.integers(len(SIZES) - 1)]
    return good_value(spec, other, rng) if spec.shape[0] is None else None


BAD_KINDS: dict[str, Callable[[Any, Any, int, np.random.Generator], Any]] = {
    "wrong dtype": _wrong_dtype,
    "wrong rank": _wrong_rank,
    "not a number or array": _non_value,
    "NaN/inf": _nan_inf,
    "huge values": _huge,
    "negative values": _negative,
    "indices out of range": _out_of_range,
    "empty array": _empty,
    "non-contiguous or read-only view": _non_contiguous,
    "mismatched size": _mismatched_size,
}


@dataclasses.dataclass
class Call:
    """One call: the function, its arguments, and what was made bad."""

    function: str
    args: list[Any]
    description: str


def make_call(signatures: dict[str, Any], seed: int, index: int) -> Call:
    """Call ``index`` of ``seed``: good arguments for a random function, then
    zero (one call in ten), one or two of them made bad, or their count."""
    rng = random.Random(f"{seed}:{index}")
    gen = np.random.default_rng(rng.randrange(2**32))
    name = rng.choice(FUNCTIONS)
    spec = signatures[name]
    n = rng.choice(SIZES)
    good = [good_value(a, n, gen) for a in spec.args]
    args = list(good)
    changes = [f"n={n}"]
    roll = rng.random()
    if roll < 0.05:
        args = args[:-1] if rng.random() < 0.5 else args + [args[-1]]
        changes.append(f"{len(args)} arguments")
    elif roll >= 0.1:
        for _ in range(rng.choice((1, 1, 2))):
            for _ in range(10):  # a kind that applies to some argument
                kind, position = rng.choice(list(BAD_KINDS)), rng.randrange(len(args))
                bad = BAD_KINDS[kind](spec.args[position], good[position], n, gen)
                if bad is not None and args[position] is good[position]:
                    args[position] = bad
                    changes.append(f"{kind} in argument #{position}")
                    break
    return Call(name, args, f"{name}({', '.join(changes)})")


def outcome(function: Callable[..., Any], args: Sequence[Any]) -> str:
    """``ok``, ``error <class>`` (a soac.Error) or ``WRONG <class>: <message>``."""
    import soac

    try:
        function(*args)
    except soac.Error as error:
        return f"error {type(error).__name__}"
    except Exception as error:  # noqa: BLE001  (any other exception breaks the contract)
        return f"WRONG {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return "ok"


# ------------------------------------------------------------ compiling


def build_library(directory: pathlib.Path, asan_runtime: str | None = None) -> None:
    """Compiles ``FUNCTIONS`` into one shared library in ``directory``, as
    ``soac.compile(..., emit="shared-lib")`` does (the same lowering, checked
    calls and loader). With ``asan_runtime`` (an AddressSanitizer build of
    libsoac_runtime.so) the code is instrumented: ``sanitize_address`` on
    every function, LLVM's ``asan`` pass, then llc and cc linking that runtime."""
    import json

    import llvm
    import mlir
    from mlir import ir

    from soac import compiler
    from soac.runtime import aot, native

    module = compiler.as_module(SOURCE)
    with module.context:
        public = compiler.public_functions(module)
        signatures = [compiler.signature(name, public[name]) for name in FUNCTIONS]
        lowered = compiler.lower(module)
        if not asan_runtime:
            aot.write_shared_library(lowered, signatures, directory, compiler.CpuOptions())
            return
        for op in lowered.body.operations:
            if op.operation.name == "llvm.func" and len(op.regions[0].blocks):
                op.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("sanitize_address")])
        text = str(lowered)
    name = signatures[0].name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.h").write_text(aot.c_header(signatures, f"lib{name}.so"))
    (directory / "packed.c").write_text(aot.packed_interfaces(signatures, f"{name}.h"))
    (directory / f"lib{name}.json").write_text(
        json.dumps({"target": "cpu", "functions": [s.to_json() for s in signatures]}))
    mlir_bin = os.path.join(list(mlir.__path__)[0], "bin")
    llvm_bin = os.path.join(list(llvm.__path__)[0], "bin")
    runtime = os.path.abspath(asan_runtime)
    cc = os.environ.get("CC", "cc")
    # The module names no target: the triple sets the shadow memory's offset, which must be libasan's.
    triple = subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True, check=True).stdout.strip()
    steps = [
        [os.path.join(mlir_bin, "mlir-translate"), "--mlir-to-llvmir", "-o", "code.ll"],
        [os.path.join(llvm_bin, "opt"), f"-mtriple={triple}", "-passes=asan", "code.ll", "-o", "code.bc"],
        [os.path.join(llvm_bin, "llc"), "-O2", "-filetype=obj", "-relocation-model=pic", "code.bc", "-o", "code.o"],
        [cc, "-shared", "-fPIC", "-fsanitize=address", "-o", f"lib{name}.so", "code.o",
         "packed.c", runtime, native.openmp_library(), "-lm", "-Wl,--no-undefined",
         f"-Wl,-rpath,{os.path.dirname(runtime)}:{os.path.dirname(native.openmp_library())}"],
    ]
    for i, step in enumerate(steps):
        subprocess.run(step, input=text if i == 0 else None, text=True, cwd=directory, check=True)


def load_functions(directory: pathlib.Path) -> dict[str, Any]:
    """The functions of the library ``build_library`` wrote."""
    from soac.runtime import abi

    return abi.load_library(str(directory / f"lib{FUNCTIONS[0]}.so")).functions


# ------------------------------------------------------------ child and parent


def use_interposed_free() -> None:
    """Makes soac free results with the process's ``free`` (libasan's, preloaded) rather than
    libc's own, which ``soac.runtime.abi`` loads by name and which aborts on memory that
    another malloc allocated."""
    import ctypes

    from soac.runtime import abi

    abi._libc = ctypes.CDLL(None)
    abi._libc.free.argtypes = [ctypes.c_void_p]
    abi._libc.free.restype = None


def child(seed: int, start: int, count: int, directory: pathlib.Path, asan: bool) -> None:
    """Makes calls ``start .. count-1``, printing ``CALL i`` before and ``DONE i <outcome>`` after each;
    a call that hangs makes the process exit after printing its Python stack."""
    import faulthandler

    faulthandler.enable()
    if asan:
        use_interposed_free()
    functions = load_functions(directory)
    signatures = {name: f.signature for name, f in functions.items()}
    for index in range(start, count):
        call = make_call(signatures, seed, index)
        print(f"CALL {index} {call.description}", flush=True)
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        result = outcome(functions[call.function], call.args)
        faulthandler.cancel_dump_traceback_later()
        print(f"DONE {index} {result}", flush=True)


@dataclasses.dataclass
class Failure:
    """A call that crashed, hung or raised something other than a soac.Error."""

    index: int
    description: str
    kind: str  # "crash" or "wrong exception"
    detail: str


@dataclasses.dataclass
class Report:
    """What an argument fuzzing run found."""

    calls: int
    returned: int
    raised: int
    seconds: float
    failures: list[Failure]
    command: list[str]

    def crashes(self) -> list[Failure]:
        return [f for f in self.failures if f.kind == "crash"]

    def summary(self) -> str:
        lines = [f"{self.calls} calls in {self.seconds:.0f} s: {self.returned} returned, {self.raised} raised a "
                 f"soac.Error, {len(self.crashes())} crashed, {len(self.failures) - len(self.crashes())} raised "
                 "another exception"]
        seen: set[str] = set()
        for f in self.failures:
            key = f"{f.kind}: {f.description.split('(')[0]}: {f.detail}"
            if key in seen:
                continue
            seen.add(key)
            lines.append(f"FAIL {f.kind}: {f.description}: {f.detail}")
            lines.append(f"  reproduce: {' '.join(self.command)} --only {f.index}")
        return "\n".join(lines)


def _crash_detail(returncode: int, stderr: str) -> str:
    """A line naming a crash: AddressSanitizer's summary, a runtime or Python fatal error, or the signal."""
    for pattern in (r"SUMMARY: AddressSanitizer: .*", r"ERROR: AddressSanitizer: [\w-]+", r"Timeout \(.*",
                    r"Fatal Python error: .*", r"soac: .*"):
        found = re.search(pattern, stderr)
        if found:
            return found.group()
    return f"signal {signal.Signals(-returncode).name}" if returncode < 0 else f"exit code {returncode}"


def asan_environment() -> dict[str, str]:
    """What a process loading AddressSanitizer-instrumented code needs: libasan preloaded, with
    libstdc++ (whose exceptions, thrown by MLIR's bindings, libasan must find at start), and no leak
    report (Python's own allocations would fill it)."""
    libraries = [subprocess.run([os.environ.get("CC", "cc"), f"-print-file-name={name}"], capture_output=True,
                                text=True, check=True).stdout.strip() for name in ("libasan.so", "libstdc++.so")]
    return {"LD_PRELOAD": ":".join(libraries), "ASAN_OPTIONS": "detect_leaks=0"}


def fuzz_arguments(count: int, seed: int, *, asan_runtime: str | None = None) -> Report:
    """Makes ``count`` calls in child processes, restarted after each crash."""
    command = [sys.executable, os.path.abspath(__file__), "--seed", str(seed)]
    env = dict(os.environ)
    if asan_runtime:
        command = [f"{k}={v}" for k, v in asan_environment().items()] + command
        command += ["--asan-runtime", os.path.abspath(asan_runtime)]
        env.update(asan_environment())
    begin = time.monotonic()
    returned = raised = 0
    failures: list[Failure] = []
    start = 0
    with tempfile.TemporaryDirectory(prefix="soac-argfuzz-") as directory:
        build_library(pathlib.Path(directory), asan_runtime)
        while start < count:
            done = subprocess.run([sys.executable, __file__, "--seed", str(seed), "--child", directory, "--start",
                                   str(start), "--count", str(count), *(["--asan"] if asan_runtime else [])],
                                  env=env, capture_output=True, text=True)
            pending: tuple[int, str] | None = None
            for line in done.stdout.splitlines():
                tag, _, rest = line.partition(" ")
                index_text, _, text = rest.partition(" ")
                if tag == "CALL":
                    pending = (int(index_text), text)
                elif tag == "DONE" and pending is not None:
                    returned += text == "ok"
                    raised += text.startswith("error")
                    if text.startswith("WRONG"):
                        failures.append(Failure(pending[0], pending[1], "wrong exception", text[6:]))
                    pending = None
            if done.returncode == 0:
                break
            if pending is None:
                raise RuntimeError(f"the argument fuzzer's child failed before any call:\n{done.stderr[-4000:]}")
            failures.append(Failure(pending[0], pending[1], "crash", _crash_detail(done.returncode, done.stderr)))
            start = pending[0] + 1
    return Report(count, returned, raised, time.monotonic() - begin, failures, command)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="number of calls")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--asan-runtime", help="an AddressSanitizer build of libsoac_runtime.so (preload libasan)")
    parser.add_argument("--only", type=int, metavar="INDEX", help="make call INDEX in this process and print it")
    parser.add_argument("--child", type=pathlib.Path, metavar="LIBRARY_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--asan", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.seed, args.start, args.count, args.child, args.asan)
        return 0
    if args.only is not None:
        with tempfile.TemporaryDirectory(prefix="soac-argfuzz-") as directory:
            build_library(pathlib.Path(directory), args.asan_runtime)
            if args.asan_runtime:
                use_interposed_free()
            functions = load_functions(pathlib.Path(directory))
            call = make_call({name: f.signature for name, f in functions.items()}, args.seed, args.only)
            print(call.description)
            for i, arg in enumerate(call.args):
                print(f"  #{i}: {arg!r}"[:400])
            print(outcome(functions[call.function], call.args), flush=True)
        return 0
    report = fuzz_arguments(args.count, args.seed, asan_runtime=args.asan_runtime)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
