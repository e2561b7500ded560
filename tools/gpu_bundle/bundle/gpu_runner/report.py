"""The runner's results as results.json (everything) and results.md (the
tables: programs pass/fail, bandwidth against the copy, ADBench against
JAX and PyTorch)."""

from __future__ import annotations

import json
import pathlib


def _cell(runs: list[dict] | None) -> str:
    if runs is None:
        return "not run"
    passed = sum(r["passed"] for r in runs)
    return f"{passed}/{len(runs)} passed" if passed == len(runs) else f"**{passed}/{len(runs)} passed**"


def _problems(entry: dict) -> str:
    if "build_error" in entry:
        return f"not built: {entry['build_error']}".replace("|", "\\|")
    found = [f"{mode} {r['label']}: {r['problem']}" for mode, runs in entry["modes"].items() for r in runs if not r["passed"]]
    if "device" not in entry["modes"] and entry["host_accesses"]:
        found.append(f"device memory not tried: host code touches buffers in {len(entry['host_accesses'])} place(s), "
                     f"first {entry['host_accesses'][0]}")
    return "; ".join(found).replace("|", "\\|").replace("\n", " ")


def check_section(check: dict) -> list[str]:
    built = check["built"]
    lines = [
        "## Bundle",
        "",
        f"{check['programs']} programs in {check['libraries']} libraries, {check['files']} files, "
        f"{check['bytes'] / 2**20:.1f} MiB; kernels as {built['kernels']} for {built['chip']}; built from commit "
        f"{built['commit']}{' (subset)' if built['subset'] else ''}; ADBench traced with inner sizes up to "
        # Bundles built before the bound was recorded used 4.
        f"{built.get('static_inner_sizes_up_to', 4)} static"
        f"{'; nested parallelism flattened (flatten=true)' if built.get('flatten') else ''}"
        # Bundles built before the choice was recorded had no tensor cores.
        f"; tensor-cores={'true' if built.get('tensor_cores') else 'false'} (float64 products by mma.sync from sm_80).",
        "",
        f"- integrity (sha256 of every file, libraries load and export their functions, data match the signatures): "
        f"**{check['integrity']}**",
    ]
    lines += [f"  - {p}" for p in check["problems"]]
    if check.get("not_built"):
        lines.append(f"- not built (failed in the tables): {', '.join(check['not_built'])}")
    lines.append(f"- GPU: {check['gpu']}")
    if check["device"]:
        d = check["device"]
        lines.append(f"- device: {d['name']} (compute capability {d['compute_capability']}, {d['memory_gib']} GiB), "
                     f"driver {d['driver_version']}")
    return lines


def programs_section(report: dict) -> list[str]:
    lines = ["", "## Programs against the CPU build's outputs", "",
             "| program | managed memory | device memory | problems |", "|---|---|---|---|"]
    for entry in report["programs"]:
        managed, device = (("**not built**",) * 2 if "build_error" in entry
                           else (_cell(entry["modes"].get("managed")), _cell(entry["modes"].get("device"))))
        lines.append(f"| {entry['name']} | {managed} | {device} | {_problems(entry)} |")
    return lines


def bandwidth_section(report: dict) -> list[str]:
    copy = report.get("copy", {})
    copy_gb_s = copy.get("gb_s")
    lines = ["", "## Bandwidth", ""]
    if copy_gb_s is None:
        lines.append(f"copy bandwidth not measured: {copy.get('failure')}")
    else:
        lines.append(f"cuMemcpyDtoD of {copy['bytes'] // 2 / 1e6:.1f} MB: {copy['ms']:.3f} ms, {copy_gb_s:.0f} GB/s "
                     "(read + write). Kernels: the least bytes they must move over the median of 10 calls "
                     "(allocating their results included), timed by CUDA events.")
    lines += ["", "| kernel | memory | elements | ms | GB/s | / copy | check |", "|---|---|---:|---:|---:|---:|---|"]
    for b in report["bandwidth"]:
        if "gb_s" not in b:
            lines.append(f"| {b['kernel']} | {b['mode']} | | | | | {b['problem']} |")
            continue
        ratio = f"{b['gb_s'] / copy_gb_s:.2f}" if copy_gb_s else "–"
        check = "passed" if b["passed"] else f"**{b['problem']}**"
        lines.append(f"| {b['kernel']} | {b['mode']} | {b['elements']:,} | {b['ms']:.3f} | {b['gb_s']:.0f} | {ratio} | {check} |")
    return lines


def arrays_section(report: dict) -> list[str]:
    """The suite programs on GPU arrays of CuPy and PyTorch (soac's loader)."""
    libraries = report.get("array_libraries", [])
    lines = ["", "## GPU arrays in and out (soac's Python loader)", ""]
    if not libraries:
        return lines + ["Not run: neither CuPy nor PyTorch is installed."]
    lines += [f"Arguments made by {' and '.join(libraries)} on the GPU, passed by their pointer; results as "
              "DeviceArrays taken back by the library (CuPy: `__cuda_array_interface__`, PyTorch: DLPack); on the "
              "library's stream, each call timed by CUDA events.", "",
              "| library | program | run | ms | check |", "|---|---|---|---:|---|"]
    for r in report.get("arrays", []):
        check = "passed" if r["passed"] else f"**{r['problem']}**".replace("|", "\\|").replace("\n", " ")
        ms = f"{r['ms']:.3f}" if r.get("ms") is not None else "–"
        lines.append(f"| {r['library']} | {r['name']} | {r['label']} | {ms} | {check} |")
    return lines


def adbench_section(report: dict) -> list[str]:
    """Ours (managed and device memory) against each peer, per objective and size."""
    ours: dict = {}
    for entry in (e for e in report["programs"] if e["kind"] == "adbench"):
        for mode, runs in entry["modes"].items():
            for r in runs:
                ours.setdefault((entry["name"], r["label"]), {})[mode] = r
    peers: dict = {}
    failures: dict = {}
    for entry in report["peers"]:
        for r in entry["runs"]:
            peers[(entry["name"], r["label"], entry["tool"])] = r
        if entry["failure"]:
            failures[(entry["name"], entry["tool"])] = entry["failure"]
    tools = report.get("peer_tools", [])
    # The versions and the platform each peer ran on, as the peers reported them.
    versions = sorted({r["tool"] for entry in report["peers"] for r in entry["runs"]})
    lines = ["", "## ADBench (and MLP, attention) on the GPU: ours against JAX (jax.jit) and PyTorch (CUDA)", "",
             "Median wall time of synchronized calls on inputs already on the GPU (float64); *gradient* is value and "
             "gradient together; ours in managed memory and, where its host code reads no buffer, in device memory; "
             f"the ratios take our faster one. Peers installed: {', '.join(tools) or 'none'}; ran as: "
             f"{', '.join(versions) or 'none'}.", "",
             "| program | size | ours, managed (ms) | ours, device (ms) | JAX (ms) | PyTorch (ms) | ours / JAX "
             "| ours / PyTorch | problems |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]

    def ms(r):
        return f"{r['ms']:.3f}" if r and r.get("ms") is not None else "–"

    # Rows of peers whose programs did not run here (`--skip programs`) too.
    rows = list(ours) + [key for key in dict.fromkeys((n, l) for n, l, _ in peers) if key not in ours]
    for name, label in rows:
        mine = ours.get((name, label), {})
        times = [r["ms"] for r in mine.values() if r.get("ms") is not None]
        best = min(times) if times else None
        problems = [f"ours ({mode}): {r['problem']}" for mode, r in mine.items() if not r["passed"]]
        row = []
        for tool, key in (("JAX", "jax"), ("PyTorch", "torch")):
            r = peers.get((name, label, key), {})
            if r and not r.get("passed", False):
                problems.append(f"{tool}: {r.get('problem')}")
            if (name, key) in failures:
                problems.append(f"{tool}: {failures[(name, key)]}")
            row.append((ms(r), f"{best / r['ms']:.2f}" if best and r.get("ms") else "–"))
        text = "; ".join(problems).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {name} | {label} | {ms(mine.get('managed'))} | {ms(mine.get('device'))} | {row[0][0]} "
                     f"| {row[1][0]} | {row[0][1]} | {row[1][1]} | {text} |")
    return lines


def markdown(report: dict) -> str:
    lines = ["# soac GPU bundle: results", ""] + check_section(report["check"])
    if "programs" in report:
        lines += programs_section(report) + arrays_section(report) + bandwidth_section(report) + adbench_section(report)
        lines += ["", f"The run took {report['seconds']} s."]
        if report.get("skipped_sections"):
            lines += [f"Sections left out (--skip): {', '.join(report['skipped_sections'])}."]
    return "\n".join(lines) + "\n"


def write(outdir: pathlib.Path, report: dict) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "results.json").write_text(json.dumps(report, indent=1) + "\n")
    (outdir / "results.md").write_text(markdown(report))
