"""Child processes: each program, kernel or peer runs in its own, with a
timeout, so that a crash (a kernel fault aborts the process) or a hang is
one failed entry and the rest still run. A child prints one JSON line per
finished run; what it printed before dying is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

RUN_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run.py")


class Deadline:
    """The runner's whole budget: children get at most what is left."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


def run_child(arguments: list[str], timeout: float, deadline: Deadline, env: dict | None = None) -> dict:
    """Runs ``run.py --child <arguments>``; returns its JSON lines
    (``lines``), and ``failure`` (None, "crashed: ...", "timed out ...",
    "skipped: ...")."""
    limit = min(timeout, deadline.left())
    if limit < 5:
        return {"lines": [], "failure": "skipped: the runner's time budget is spent"}
    command = [sys.executable, RUN_PY, "--child", *arguments]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit,
                              env={**os.environ, **(env or {})})
        stdout, stderr, code = done.stdout, done.stderr, done.returncode
        failure = None if code == 0 else f"crashed (exit status {code}): {_tail(stderr)}"
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        failure = f"timed out after {limit:.0f} s"
    lines = []
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return {"lines": lines, "failure": failure}


def _tail(text: str, limit: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
