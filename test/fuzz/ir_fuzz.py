"""IR mutation fuzzer of soac-opt.

Seeds are the programs of the lit suite (every ``test/**/*.mlir`` split on
``// -----``, comment lines dropped) and ``examples/*.mlir``. Mutant ``i`` of
seed ``s`` is a seed changed by one to three token-level mutations drawn from
``random.Random(f"{s}:{i}")``, so every mutant is reproducible on its own
(for a given soac-opt: seeds it verifies are drawn more often).
Each mutant is parsed and verified by soac-opt, then, if that succeeds, run
through every pipeline of ``PIPELINES``.

A run passes when soac-opt exits 0, or 1 with a diagnostic (``error:``). It
fails on a crash (a signal, another exit code, a message of LLVM's crash
handler, an assertion or AddressSanitizer), on exit 1 with no diagnostic, and
on a hang (``--timeout``). Failures are grouped by a signature (the failed
assertion, the fatal error, the sanitizer's report and the first frame of its
stack, or the first frame of the stack dump past the crash handler and libc); the first mutant of each group is reduced (lines
deleted while the signature stays) and saved to ``--out`` with the command
that reproduces it.

    python test/fuzz/ir_fuzz.py --count 10000 --seed 1 --out build/fuzz
    python test/fuzz/ir_fuzz.py --seed 1 --only 4711   # one mutant, printed

The runs are separate soac-opt processes, ``--jobs`` at a time (the threads
of this script only wait for them).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import hashlib
import os
import pathlib
import random
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Named pipelines and the key passes, each after parsing and verification.
PIPELINES: dict[str, tuple[str, ...]] = {
    "verify": (),
    "autodiff": ("--soac-autodiff",),
    "cpu": ("--soac-lower-to-cpu",),
    "nvvm": ("--soac-lower-to-nvvm",),
    "loops": ("--convert-soac-to-loops",),
    "gpu": ("--convert-soac-to-gpu",),
    "flatten": ("--soac-flatten",),
    "fuse": ("--soac-fuse-maps",),
    "canonicalize": ("--canonicalize", "--cse"),
}
# Single-threaded passes: deterministic, and the workers already fill the cores.
COMMON_FLAGS = ("--mlir-disable-threading",)

CRASH_MARKERS = ("PLEASE submit a bug report", "Assertion", "LLVM ERROR", "Stack dump", "AddressSanitizer")


# ---------------------------------------------------------------- seeds


def seed_programs(root: pathlib.Path = ROOT) -> list[tuple[str, str]]:
    """(name, text) of every seed program, in a fixed order."""
    # The known crashes (test/fuzz/known/) are no seeds: their mutants find them again.
    files = sorted(p for p in root.glob("test/**/*.mlir") if "known" not in p.relative_to(root).parts)
    files += sorted(root.glob("examples/*.mlir"))
    seeds = []
    for path in files:
        for part, chunk in enumerate(path.read_text().split("// -----")):
            lines = [line for line in chunk.splitlines() if not line.lstrip().startswith("//")]
            text = "\n".join(lines).strip()
            if text:
                seeds.append((f"{path.relative_to(root)}#{part}", text + "\n"))
    return seeds


# ------------------------------------------------------------ mutations

_INT = re.compile(r"(?<=[\s\[(,=:<])-?\d+(?=[\s\]),}:>])")
_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d*(?:[eE][+-]?\d+)?|\b0x[0-9A-Fa-f]+\b")
_TENSOR = re.compile(r"tensor<([^<>]*)>")
_ELEMENT = re.compile(r"\b(?:bf16|f16|f32|f64|i1|i8|i16|i32|i64|index)\b")
_SSA = re.compile(r"%[\w$.-]+(?:#\d+)?")
_OP_FAMILIES = (
    ("soac.map", "soac.reduce", "soac.scan", "soac.scatter", "soac.reduce_by_index", "soac.iota", "soac.yield",
     "soac.vjp", "soac.jvp"),
    ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf"),
    ("arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi", "arith.divui", "arith.maxsi"),
    ("tensor.extract", "tensor.insert", "tensor.dim", "tensor.extract_slice", "tensor.insert_slice"),
)
_OPS = re.compile("|".join(re.escape(op) + r"\b" for family in _OP_FAMILIES for op in family))

INTEGERS = (0, 1, -1, 2, 3, 7, 2**31 - 1, 2**31, 2**32, 2**62, 2**63 - 1, -(2**63), 2**64)
FLOATS = ("0.0", "-1.0", "1.0e+300", "-3.4e+38", "1.0e-45", "0x7FC00000", "0x7F800000", "0xFFF0000000000000")
DIMS = ("?", "0", "1", "2", "3", "7", "1000", str(2**31), str(2**62))
ELEMENT_KINDS = (("f16", "bf16", "f32", "f64"), ("i1", "i8", "i16", "i32", "i64", "index"))
ELEMENTS = ELEMENT_KINDS[0] + ELEMENT_KINDS[1]

Mutation = Callable[[str, random.Random], "str | None"]


def _replace_match(text: str, pattern: re.Pattern[str], rng: random.Random, new: Callable[[str], str]) -> str | None:
    """``text`` with one random match of ``pattern`` replaced by ``new(match)``."""
    matches = list(pattern.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    return text[: m.start()] + new(m.group()) + text[m.end() :]


def mutate_integer(text: str, rng: random.Random) -> str | None:
    """An integer literal (constant, attribute, position) set to a boundary value or its neighbour."""

    def new(old: str) -> str:
        return str(rng.choice(INTEGERS + (int(old) + 1, int(old) - 1, int(old) * 1000)))

    return _replace_match(text, _INT, rng, new)


def mutate_float(text: str, rng: random.Random) -> str | None:
    """A float literal set to 0, -1, a huge or tiny value, NaN or an infinity (hex of either width)."""
    return _replace_match(text, _FLOAT, rng, lambda _: rng.choice(FLOATS))


_SHAPE = re.compile(r"((?:(?:\d+|\?)x)*)(.*)", re.S)


def _shape_mutation(rng: random.Random, inner: str) -> str:
    shape, element = _SHAPE.fullmatch(inner).groups()
    dims = shape.split("x")[:-1]
    choice = rng.randrange(4)
    if choice == 0 and dims:
        dims.pop(rng.randrange(len(dims)))
    elif choice == 1:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(DIMS))
    elif dims:
        dims[rng.randrange(len(dims))] = rng.choice(DIMS)
    return "tensor<" + "".join(d + "x" for d in dims) + element + ">"


def mutate_shape(text: str, rng: random.Random) -> str | None:
    """One tensor type's dimension changed (static <-> dynamic, 0, huge), dropped or added;
    at one occurrence, or at every occurrence of that type (which keeps more programs valid)."""
    matches = list(_TENSOR.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    new = _shape_mutation(rng, m.group(1))
    if rng.random() < 0.5:
        return text.replace(m.group(), new)
    return text[: m.start()] + new + text[m.end() :]


def mutate_element_type(text: str, rng: random.Random) -> str | None:
    """An element type swapped for another (mostly of its kind: float or integer),
    at one occurrence or all of them."""
    matches = list(_ELEMENT.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    kind = next(k for k in ELEMENT_KINDS if m.group() in k)
    new = rng.choice([e for e in (kind if rng.random() < 0.7 else ELEMENTS) if e != m.group()])
    if rng.random() < 0.5:
        mutated = re.sub(rf"\b{m.group()}\b", new, text)
    else:
        mutated = text[: m.start()] + new + text[m.end() :]
    # MLIR 22's parser asserts on a dense array of index (`array<index: ...>`,
    # an attribute syntax upstream does not support): not soac's to fix.
    return None if "array<index" in mutated and "array<index" not in text else mutated


def mutate_lines(text: str, rng: random.Random) -> str | None:
    """A line deleted, duplicated, or swapped with another."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    choice = rng.randrange(3)
    if choice == 0:
        del lines[i]
    elif choice == 1:
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines) + "\n"


def mutate_ssa_name(text: str, rng: random.Random) -> str | None:
    """One SSA value's occurrence replaced by another value of the program."""
    names = sorted(set(_SSA.findall(text)))
    if len(names) < 2:
        return None
    return _replace_match(text, _SSA, rng, lambda old: rng.choice([n for n in names if n != old]))


def mutate_op_name(text: str, rng: random.Random) -> str | None:
    """An op name replaced by another of its family (the soac ops, arith on floats or
    integers, tensor reads and writes)."""

    def new(old: str) -> str:
        family = next(f for f in _OP_FAMILIES if old in f)
        return rng.choice([op for op in family if op != old])

    return _replace_match(text, _OPS, rng, new)


def truncate(text: str, rng: random.Random) -> str | None:
    """The program cut at a random character."""
    return text[: rng.randrange(len(text))] if text else None


MUTATIONS: tuple[Mutation, ...] = (
    mutate_integer,
    mutate_float,
    mutate_shape,
    mutate_element_type,
    mutate_lines,
    mutate_ssa_name,
    mutate_op_name,
    truncate,
)
# Truncation mostly finds the parser's errors: drawn less often.
WEIGHTS = (3, 2, 4, 3, 2, 2, 3, 1)


def mutant(seeds: Sequence[tuple[str, str]], weights: Sequence[float], seed: int, index: int) -> tuple[str, str]:
    """(seed program's name, mutant text) of mutant ``index`` under ``seed``."""
    rng = random.Random(f"{seed}:{index}")
    name, text = rng.choices(seeds, weights)[0]
    applied = 0
    wanted = rng.choices((1, 2, 3), weights=(7, 2, 1))[0]
    for _ in range(20):
        if applied == wanted:
            break
        changed = rng.choices(MUTATIONS, weights=WEIGHTS)[0](text, rng)
        if changed is not None and changed != text:
            text, applied = changed, applied + 1
    return name, text


# ---------------------------------------------------------------- runs


@dataclasses.dataclass(frozen=True)
class Outcome:
    """One soac-opt run: ``failure`` is None when it passed, else its signature."""

    pipeline: str
    returncode: int | None  # None: timed out
    failure: str | None
    stderr: str


_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in )?(.+?)(?: \(/| /|$)", re.M)
_BORING_FRAME = re.compile(r"llvm::sys::|SignalHandler|__restore_rt|\braise\b|\babort\b|__assert|__pthread_kill|"
                           r"^0x|libc\.so|__asan|__interceptor|llvm::report_fatal_error|reportFatal|"
                           r"llvm::llvm_unreachable_internal")


def signature(returncode: int, stderr: str) -> str | None:
    """None when a run that ended passed; else what identifies its failure."""
    crashed = returncode not in (0, 1) or any(marker in stderr for marker in CRASH_MARKERS)
    if not crashed:
        return None if returncode == 0 or "error:" in stderr else "exit 1 with no diagnostic"
    for pattern in (r"Assertion `.*' failed", r"LLVM ERROR: .*", r"ERROR: AddressSanitizer: [\w-]+", r"UNREACHABLE.*"):
        found = re.search(pattern, stderr)
        if found:
            first = found.group()
            frame = _first_frame(stderr)
            return f"{first} in {frame}" if frame and "AddressSanitizer" in first else first
    frame = _first_frame(stderr)
    return f"signal {-returncode if returncode < 0 else returncode} in {frame or 'unknown frame'}"


def _first_frame(stderr: str) -> str | None:
    """The first frame of the stack dump that is not the crash handler's or libc's."""
    for frame in _FRAME.findall(stderr):
        if not _BORING_FRAME.search(frame):
            return re.sub(r"\(.*", "", frame.replace("(anonymous namespace)", "{anonymous}")).strip()
    return None


def soac_opt_path() -> str:
    """The installed soac-opt binary (not the console script, which starts Python)."""
    from soac._tools import soac_opt_path as installed

    return installed()


def run_environment() -> dict[str, str]:
    """soac-opt's environment: LLVM's crash handler finds the wheel's symbolizer."""
    import llvm

    env = dict(os.environ)
    env.setdefault("LLVM_SYMBOLIZER_PATH", os.path.join(list(llvm.__path__)[0], "bin", "llvm-symbolizer"))
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    return env


def run_once(soac_opt: str, text: str, pipeline: str, timeout: float, env: dict[str, str]) -> Outcome:
    """soac-opt on ``text`` (from stdin) through ``pipeline``."""
    command = [soac_opt, *COMMON_FLAGS, *PIPELINES[pipeline], "-"]
    try:
        done = subprocess.run(command, input=text.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Outcome(pipeline, None, f"hang in {pipeline}", "")
    stderr = done.stderr.decode(errors="replace")
    return Outcome(pipeline, done.returncode, signature(done.returncode, stderr), stderr)


def seed_weights(soac_opt: str, seeds: Sequence[tuple[str, str]], env: dict[str, str], jobs: int) -> list[float]:
    """How often each seed is drawn: the programs that verify four times as often as
    the others (the cases of the verifier's tests), so that more mutants reach the passes."""
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        outcomes = pool.map(lambda seed: run_once(soac_opt, seed[1], "verify", 60, env), seeds)
        return [4.0 if o.returncode == 0 else 1.0 for o in outcomes]


def run_mutant(soac_opt: str, text: str, timeout: float, env: dict[str, str]) -> list[Outcome]:
    """The mutant verified, then, if valid, through every pipeline."""
    outcomes = [run_once(soac_opt, text, "verify", timeout, env)]
    if outcomes[0].returncode == 0:
        outcomes += [run_once(soac_opt, text, p, timeout, env) for p in PIPELINES if p != "verify"]
    return outcomes


def reduce(soac_opt: str, text: str, pipeline: str, failure: str, timeout: float, env: dict[str, str]) -> str:
    """``text`` with lines removed (chunks, then single lines) while ``pipeline``
    still fails with the same signature."""
    lines = text.splitlines()
    chunk = max(1, len(lines) // 2)
    while chunk >= 1:
        i = 0
        while i < len(lines):
            candidate = lines[:i] + lines[i + chunk :]
            if candidate and run_once(soac_opt, "\n".join(candidate) + "\n", pipeline, timeout, env).failure == failure:
                lines = candidate
            else:
                i += chunk
        chunk //= 2
    return "\n".join(lines) + "\n"


@dataclasses.dataclass
class Failure:
    """A distinct failure: its first mutant (reduced) and how many runs hit it."""

    signature: str
    pipeline: str
    index: int
    seed_name: str
    command: str
    hits: int = 1


@dataclasses.dataclass
class Report:
    """What a fuzzing run found."""

    mutants: int
    runs: int
    valid: int  # mutants that parsed and verified
    seconds: float
    failures: dict[str, Failure]

    def summary(self) -> str:
        lines = [
            f"{self.mutants} mutants ({self.valid} valid), {self.runs} soac-opt runs in {self.seconds:.0f} s: "
            f"{len(self.failures)} distinct failures, {sum(f.hits for f in self.failures.values())} failing runs"
        ]
        for f in self.failures.values():
            lines.append(f"FAIL [{f.pipeline}] {f.signature}  ({f.hits} runs; mutant {f.index} of {f.seed_name})")
            lines.append(f"  reproduce: {f.command}")
        return "\n".join(lines)


def fuzz(count: int, seed: int, out: pathlib.Path, *, jobs: int = 2, timeout: float = 20.0,
         soac_opt: str | None = None, reduce_failures: bool = True, start: int = 0, progress: bool = False) -> Report:
    """Runs mutants ``start .. start+count-1`` of ``seed``; saves each distinct failure under ``out``
    (``progress``: a line on stderr every 1000 mutants)."""
    soac_opt = soac_opt or soac_opt_path()
    env = run_environment()
    seeds = seed_programs()
    begin = time.monotonic()
    weights = seed_weights(soac_opt, seeds, env, jobs)
    failures: dict[str, Failure] = {}
    runs = valid = 0

    def job(index: int) -> tuple[int, str, str, list[Outcome]]:
        name, text = mutant(seeds, weights, seed, index)
        return index, name, text, run_mutant(soac_opt, text, timeout, env)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for index, name, text, outcomes in pool.map(job, range(start, start + count)):
            runs += len(outcomes)
            valid += outcomes[0].returncode == 0
            if progress and (index + 1 - start) % 1000 == 0:
                print(f"{index + 1 - start} mutants, {len(failures)} distinct failures", file=sys.stderr, flush=True)
            for outcome in outcomes:
                if outcome.failure is None:
                    continue
                if outcome.failure in failures:
                    failures[outcome.failure].hits += 1
                    continue
                reproducer = text
                if reduce_failures and outcome.returncode is not None:
                    reproducer = reduce(soac_opt, text, outcome.pipeline, outcome.failure, timeout, env)
                digest = hashlib.sha1(outcome.failure.encode()).hexdigest()[:10]
                out.mkdir(parents=True, exist_ok=True)
                path = out / f"{digest}-{outcome.pipeline}-{index}.mlir"
                path.write_text(reproducer)
                (out / f"{path.stem}.stderr").write_text(outcome.stderr)
                command = shlex.join([soac_opt, *COMMON_FLAGS, *PIPELINES[outcome.pipeline], str(path)])
                failures[outcome.failure] = Failure(outcome.failure, outcome.pipeline, index, name, command)
    return Report(count, runs, valid, time.monotonic() - begin, failures)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="number of mutants")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="index of the first mutant")
    parser.add_argument("--out", type=pathlib.Path, default=ROOT / "build" / "fuzz",
                        help="where failing mutants are saved")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a run counts as a hang")
    parser.add_argument("--soac-opt", help="the binary to fuzz (default: the installed one)")
    parser.add_argument("--no-reduce", action="store_true", help="save failing mutants as they are")
    parser.add_argument("--only", type=int, metavar="INDEX", help="print mutant INDEX of --seed and exit")
    args = parser.parse_args(argv)
    if args.only is not None:
        seeds = seed_programs()
        weights = seed_weights(args.soac_opt or soac_opt_path(), seeds, run_environment(), args.jobs)
        name, text = mutant(seeds, weights, args.seed, args.only)
        print(f"// mutant {args.only} of seed {args.seed}, from {name}\n{text}", end="")
        return 0
    report = fuzz(args.count, args.seed, args.out, jobs=args.jobs, timeout=args.timeout, soac_opt=args.soac_opt,
                  reduce_failures=not args.no_reduce, start=args.start, progress=True)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
