"""Runs the soac GPU check bundle (needs python3 and numpy; JAX and PyTorch
are timed where installed):

    python3 run.py OUTDIR           # everything, on a GPU machine: OUTDIR/results.{json,md}
    python3 run.py --check [OUTDIR] # the bundle's integrity, no GPU needed; a missing driver is a skip
    python3 run.py OUTDIR --only adbench/GMM --elements 10000000
    python3 run.py OUTDIR --skip peers,arrays   # leave sections out

Exit status: 0 when everything ran and passed (--check: the bundle is
intact), 1 when something failed, 2 when no GPU is here to run on.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

BUNDLE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(BUNDLE))

from gpu_runner import manifest, report, session  # noqa: E402


def child(arguments: list[str]) -> None:
    """What one child process runs (gpu_runner/children.py starts them)."""
    data = manifest.read(BUNDLE)
    programs = {p["name"]: p for p in data["programs"]}
    what, *rest = arguments
    if what == "copy":
        from gpu_runner import bandwidth

        import json

        print(json.dumps(bandwidth.copy_bandwidth(int(rest[0]))), flush=True)
    elif what == "program" and programs[rest[0]]["kind"] == "failure":
        from gpu_runner import failures

        failures.run(str(BUNDLE), programs[rest[0]], int(rest[2]))
    elif what == "program":
        from gpu_runner import programs as runs

        runs.run(str(BUNDLE), programs[rest[0]], rest[1], int(rest[2]))
    elif what == "bandwidth":
        from gpu_runner import bandwidth

        bandwidth.run(str(BUNDLE), programs[rest[0]], rest[1], int(rest[2]))
    elif what == "arrays":
        from gpu_runner import arrays

        library, start, only = rest
        selected = [p for p in data["programs"] if not only or only in p["name"]]
        arrays.run(str(BUNDLE), selected, library, int(start))
    elif what == "peer":
        from gpu_runner import peers

        peers.run(str(BUNDLE), programs[rest[0]], rest[1])
    else:
        raise SystemExit(f"unknown child {what!r}")


def passed(results: dict) -> bool:
    runs = [r for e in results.get("programs", []) for rs in e["modes"].values() for r in rs]
    runs += results.get("bandwidth", []) + results.get("arrays", [])
    runs += [r for e in results.get("peers", []) for r in e["runs"]]
    built = not results["check"].get("not_built")
    return results["check"]["integrity"] == "passed" and built and all(r.get("passed") for r in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("outdir", nargs="?", help="where results.json and results.md go")
    parser.add_argument("--check", action="store_true", help="only the bundle's integrity (no GPU needed)")
    parser.add_argument("--only", help="run only the programs whose name contains this")
    parser.add_argument("--elements", type=int, default=100_000_000, help="elements of the bandwidth kernels")
    parser.add_argument("--budget", type=float, default=450, help="seconds for all the runs together")
    parser.add_argument("--skip", default="", metavar="SECTIONS",
                        help=f"sections not to run, comma-separated: {', '.join(session.SECTIONS)}")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child)
        return 0
    if options.outdir is None and not options.check:
        parser.error("OUTDIR is needed (or --check)")
    skipped = {section for section in options.skip.split(",") if section}
    if skipped - set(session.SECTIONS):
        parser.error(f"--skip takes {', '.join(session.SECTIONS)}, not {', '.join(sorted(skipped - set(session.SECTIONS)))}")
    if options.check:
        results = {"check": session.check(BUNDLE)}
    else:
        results = session.run(BUNDLE, manifest.read(BUNDLE), options.only, options.elements, options.budget,
                              skipped)
    if options.outdir:
        report.write(pathlib.Path(options.outdir), results)
    print(report.markdown(results))
    if results["check"]["integrity"] != "passed":
        return 1
    if options.check:
        return 0
    if results["check"]["gpu"] != "ready":
        return 2
    return 0 if passed(results) else 1


if __name__ == "__main__":
    sys.exit(main())
