"""manifest.json: every file of the bundle with its sha256, what built it,
and the programs (library, function, host accesses to buffers, runs).

The build writes it (tools/gpu_bundle/build.py); the runner checks the files
against it before it trusts any of them.
"""

from __future__ import annotations

import hashlib
import json
import pathlib

NAME = "manifest.json"
# Written by Python at run time, not part of the bundle.
_IGNORED = {"__pycache__"}


def sha256(path: pathlib.Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _files(directory: pathlib.Path) -> list[pathlib.Path]:
    return sorted(
        p for p in directory.rglob("*")
        if p.is_file() and p.name != NAME and not _IGNORED.intersection(p.relative_to(directory).parts)
    )


def write(directory: pathlib.Path, built: dict, programs: list[dict]) -> dict:
    files = {str(p.relative_to(directory)): sha256(p) for p in _files(directory)}
    data = {
        "format": 1,
        "built": built,
        "bytes": sum(p.stat().st_size for p in _files(directory)),
        "files": files,
        "programs": programs,
    }
    (directory / NAME).write_text(json.dumps(data, indent=1) + "\n")
    return data


def read(directory: pathlib.Path) -> dict:
    return json.loads((directory / NAME).read_text())


def verify(directory: pathlib.Path, data: dict) -> list[str]:
    """What does not match the manifest: files missing, changed or extra."""
    problems = []
    listed = data["files"]
    present = {str(p.relative_to(directory)) for p in _files(directory)}
    for path, digest in sorted(listed.items()):
        if path not in present:
            problems.append(f"{path}: missing")
        elif sha256(directory / path) != digest:
            problems.append(f"{path}: sha256 differs from the manifest")
    problems += [f"{path}: not in the manifest" for path in sorted(present - set(listed))]
    return problems
