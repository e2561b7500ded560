"""Builds the GPU check bundle: every GPU program of the test suite, every
ADBench objective and gradient and the bandwidth kernels, compiled here (no
GPU needed) into shared libraries with their kernels embedded for sm_90, with
their inputs, the CPU build's outputs, the JAX/PyTorch twins and the runner
(run.py: python3 and numpy only). docs/gpu.md says how to run it.

    .venv/bin/python tools/gpu_bundle/build.py                 # build/gpu-bundle (make gpu-bundle)
    .venv/bin/python tools/gpu_bundle/build.py --subset OUT    # a few programs, for the tests
    .venv/bin/python tools/gpu_bundle/build.py OUT --adbench lstm,gmm --static-inner-sizes-up-to 16
                                        # only these ADBench programs, traced with another bound
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import time

import numpy as np
from mlir import ir

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bundle"))

import catalog  # noqa: E402
from gpu_runner import manifest  # noqa: E402
from host_accesses import host_buffer_accesses  # noqa: E402

import soac  # noqa: E402
from soac import ptx  # noqa: E402
from soac.compiler import GpuOptions, lower, public_functions, signature  # noqa: E402
from soac.frontend import tracing  # noqa: E402
from soac.runtime import aot  # noqa: E402

# What one device machine may receive.
BUNDLE_LIMIT_BYTES = 64 << 20
SUBSET = {"suite": {"saxpy", "sum", "cumsum", "histogram", "softmax_rows"}, "suite_sizes": [7, 1003]}


def compile_program(program: catalog.Program, directory: pathlib.Path, options: GpuOptions) -> list[str]:
    """Writes the library of ``program``'s function into ``directory``;
    returns its host code's accesses to buffers (host_accesses.py)."""
    module = program.module
    with module.context:
        entry = signature(program.function, public_functions(module)[program.function])
        lowered = lower(module, options=options, only=program.function)
        aot.write_shared_library(lowered, [entry], directory, options)
        return host_buffer_accesses(lowered)


def write_run(run: catalog.Run, program: catalog.Program, out: pathlib.Path) -> dict:
    """The run's arguments and expected outputs as .npz files (arguments
    shared by the runs of one ``args_key`` written once); their paths, and
    the error a failing run must raise."""
    args = pathlib.Path("data", run.args_key or program.directory, f"{run.label}-args.npz")
    expected = pathlib.Path("data", program.directory, f"{run.label}-expected.npz")
    for path, prefix, values in ((args, "arg", run.args), (expected, "expected", run.expected)):
        if not (out / path).exists():
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            np.savez_compressed(out / path, **{f"{prefix}{i}": np.asarray(v) for i, v in enumerate(values)})
    spec = {"label": run.label, "args": str(args), "expected": str(expected), "expected_from": "cpu build"}
    if run.error is not None:
        spec.update(expected_from="an error", error=run.error)
    return spec


def copy_runner(out: pathlib.Path) -> None:
    """run.py and its package, the standalone loader, the ADBench twins."""
    shutil.copytree(HERE / "bundle", out, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    aot.copy_loader(out)
    twins = out / "adbench"
    twins.mkdir()
    for name in (*catalog.ADBENCH, "peers"):
        shutil.copy2(catalog.ROOT / "bench" / "adbench" / f"{name}.py", twins / f"{name}.py")


def git_commit() -> str | None:
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=catalog.ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def build(out: pathlib.Path, subset: bool, chip: str, adbench: tuple[str, ...] | None = None,
          static_inner_sizes_up_to: int = tracing.GPU_SMALL_INNER_SIZE, flatten: bool = False,
          tensor_cores: bool = True) -> dict:
    start = time.perf_counter()
    # Cubin and PTX where ptxas is here (the driver then loads without JIT), PTX alone otherwise;
    # host code reading buffers by copies, so that the runner may try device memory.
    # flatten: nested parallelism flattened first (GpuOptions(flatten=True)), to time against a bundle without;
    # tensor_cores=False: float64 products on the ordinary cores, to time against a bundle with.
    options = GpuOptions(chip=chip, format="fatbin" if ptx.ptxas_path() else "isa", device_memory=True,
                         flatten=flatten, tensor_cores=tensor_cores)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    context = ir.Context()
    if adbench is not None:
        selected = catalog.adbench_programs(adbench, ("small", "large"), (False, True), static_inner_sizes_up_to)
    elif subset:
        selected = catalog.suite_programs(context, SUBSET["suite"], SUBSET["suite_sizes"])
        selected += catalog.adbench_programs(("kmeans",), ("small",), (False,))
        selected += catalog.failure_programs(context, ("gather",))
    else:
        selected = catalog.suite_programs(context, None, catalog.SUITE_SIZES)
        selected += catalog.adbench_programs(catalog.ADBENCH, ("small", "large"), (False, True))
        selected += catalog.failure_programs(context)
    selected += catalog.bandwidth_programs(context)
    programs = []
    for program in selected:
        began = time.perf_counter()
        directory = out / "libraries" / program.directory
        try:
            accesses = compile_program(program, directory, options)
        except soac.Error as error:
            # Listed with the reason, so that the runner's table shows it failed.
            shutil.rmtree(directory, ignore_errors=True)
            lines = str(error).strip().splitlines()
            reason = next((line for line in lines if "error:" in line), lines[-1])
            programs.append({"name": program.name, "kind": program.kind, "function": program.function,
                             "build_error": reason, "runs": [], "details": program.details})
            print(f"  {program.name}: NOT BUILT: {programs[-1]['build_error']}", flush=True)
            continue
        for name in aot.LOADER_FILES:  # the bundle's root holds the one copy
            (directory / name).unlink()
        runs = [write_run(run, program, out) for run in program.runs]
        programs.append({
            "name": program.name,
            "kind": program.kind,
            "library": str((directory / f"lib{program.function}.so").relative_to(out)),
            "function": program.function,
            "host_accesses": accesses,
            "runs": runs,
            "details": program.details,
        })
        print(f"  {program.name} ({time.perf_counter() - began:.1f} s)", flush=True)
    copy_runner(out)
    built = {
        "commit": git_commit(),
        "chip": options.chip,
        "kernels": "cubin and PTX (fatbin)" if options.format == "fatbin" else "PTX",
        "pipeline": options.pipeline(),
        "subset": subset or adbench is not None,
        "static_inner_sizes_up_to": static_inner_sizes_up_to,
        "flatten": flatten,
        "tensor_cores": tensor_cores,
        "seconds": round(time.perf_counter() - start, 1),
    }
    written = manifest.write(out, built, programs)
    if written["bytes"] > BUNDLE_LIMIT_BYTES:
        raise SystemExit(f"the bundle takes {written['bytes'] / 2**20:.1f} MiB, over the {BUNDLE_LIMIT_BYTES >> 20} MiB a device machine receives")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", default=str(catalog.ROOT / "build" / "gpu-bundle"))
    parser.add_argument("--subset", action="store_true", help="a few programs of each kind (for the tests)")
    parser.add_argument("--chip", default="sm_90")
    parser.add_argument("--adbench", metavar="NAMES",
                        help=f"only these ADBench programs, comma-separated (of {', '.join(catalog.ADBENCH)})")
    parser.add_argument("--static-inner-sizes-up-to", type=int, default=tracing.GPU_SMALL_INNER_SIZE, metavar="N",
                        help="trace the ADBench programs with inner sizes up to N static (default: %(default)s)")
    parser.add_argument("--flatten", action="store_true",
                        help="flatten nested parallelism first (GpuOptions(flatten=True)), to compare with a bundle without")
    parser.add_argument("--no-tensor-cores", dest="tensor_cores", action="store_false",
                        help="float64 products on the ordinary cores (GpuOptions(tensor_cores=False)), to compare with "
                             "a bundle whose products run on the tensor cores (the default for sm_80 and later)")
    options = parser.parse_args()
    adbench = tuple(options.adbench.split(",")) if options.adbench else None
    if adbench and set(adbench) - set(catalog.ADBENCH):
        parser.error(f"--adbench takes {', '.join(catalog.ADBENCH)}")
    written = build(pathlib.Path(options.out), options.subset, options.chip, adbench, options.static_inner_sizes_up_to,
                    options.flatten, options.tensor_cores)
    failed = [p["name"] for p in written["programs"] if "build_error" in p]
    if failed:
        print(f"not built (listed as failed in the manifest): {', '.join(failed)}")
    print(f"{options.out}: {len(written['programs'])} programs, {len(written['files'])} files, "
          f"{written['bytes'] / 2**20:.1f} MiB, built in {written['built']['seconds']} s")


if __name__ == "__main__":
    main()
