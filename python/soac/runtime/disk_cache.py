"""Compiled code kept on disk, so that a later process loads a function
compiled before in milliseconds instead of compiling it again.

Where and how much (read at each compilation, so a test or a script may set
them at any time):

``SOAC_CACHE_DIR``
    the cache's directory; by default ``$XDG_CACHE_HOME/soac``, or
    ``~/.cache/soac`` where ``XDG_CACHE_HOME`` is not set.
``SOAC_CACHE``
    ``off`` (or ``0``, ``false``, ``no``) turns the cache off: every new
    process compiles again. Anything else, or nothing, leaves it on.
``SOAC_CACHE_MAX_SIZE``
    the most the entries may take, in bytes or with a suffix (``500M``,
    ``2G``); 1 GiB by default. Past it, the least recently used entries are
    removed.

An entry is a directory named by a key (a SHA-256 of what determines the
code: the IR with its locations, the function, the pipeline's options, soac's
version, a hash of soac's native libraries, so that a rebuild invalidates,
MLIR's version and the machine's architecture and CPU). It holds the files of
a shared library (:mod:`soac.runtime.aot`) and ``manifest.json``, the SHA-256
of each of them: an entry whose files do not match (truncated by a crash,
altered) is removed and compiled again, never loaded.

Processes share the cache safely: an entry is written in a private temporary
directory and renamed into place in one step, so readers see a whole entry or
none; when two processes store the same entry, the first rename wins and the
second process keeps its own code. Using an entry updates its time, which
eviction orders by.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import pathlib
import platform
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..errors import Error
from .flags import flag

_log = logging.getLogger("soac")

# Part of every key: a change in how entries are laid out or what their code
# assumes makes older entries unreachable rather than misread.
_FORMAT = "soac-disk-cache-1"
_MANIFEST = "manifest.json"
_DEFAULT_MAX_BYTES = 1 << 30
_SUFFIXES = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
# Temporary directories older than this were left by a process that died
# while writing; eviction removes them.
_STALE_SECONDS = 3600.0


@dataclass(frozen=True)
class Settings:
    """Where the cache is (``None``: turned off) and its size limit in bytes."""

    directory: pathlib.Path | None
    max_bytes: int


def settings() -> Settings:
    """The cache's settings from the environment (see the module docstring)."""
    max_bytes = _parse_size(os.environ.get("SOAC_CACHE_MAX_SIZE"))
    if not flag("SOAC_CACHE", default=True):
        return Settings(None, max_bytes)
    directory = os.environ.get("SOAC_CACHE_DIR")
    if not directory:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        directory = os.path.join(base, "soac")
    return Settings(pathlib.Path(directory), max_bytes)


def _parse_size(text: str | None) -> int:
    if text is None or not text.strip():
        return _DEFAULT_MAX_BYTES
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = _SUFFIXES.get(value[-1:], 1)
    if scale != 1:
        value = value[:-1]
    try:
        size = int(float(value) * scale)
    except ValueError:
        size = -1
    if size < 0:
        raise Error(f"SOAC_CACHE_MAX_SIZE must be a size in bytes such as 1000000, 500M or 2G; got {text!r}")
    return size


def key(parts: Iterable[str]) -> str:
    """The key of the entry for ``parts`` (what the caller's code depends
    on: IR, function, options), compiled by this soac on this machine."""
    digest = hashlib.sha256()
    for part in (_FORMAT, *_environment(), *parts):
        data = part.encode()
        digest.update(len(data).to_bytes(8, "little"))  # no two lists of parts hash alike
        digest.update(data)
    return digest.hexdigest()


@functools.cache
def _environment() -> tuple[str, ...]:
    """What compiled code depends on besides its IR: soac and its native
    libraries, MLIR, and the machine (code is compiled for the host CPU)."""
    return (
        _version("soac"),
        _version("xtc-mlir-python-bindings"),
        _native_libraries_hash(),
        platform.machine(),
        _host_cpu(),
    )


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _native_libraries_hash() -> str:
    """SHA-256 of soac's built native code: the extension (dialect, passes,
    pipelines) and the runtime libraries compiled code links to."""
    from .. import _soac

    package = pathlib.Path(_soac.__file__).parent
    digest = hashlib.sha256()
    for path in sorted([pathlib.Path(_soac.__file__), *package.glob("lib/*.so*")]):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _host_cpu() -> str:
    """The CPU's model and features (code is compiled for the host CPU)."""
    try:
        with open("/proc/cpuinfo") as info:
            fields = {}
            for line in info:
                name, _, value = line.partition(":")
                fields.setdefault(name.strip(), value.strip())
                if not line.strip():  # the first processor's block is enough
                    break
        return f"{fields.get('model name', '')}|{fields.get('flags', '')}"
    except OSError:
        return platform.processor()


class DiskCache:
    """The entries under ``directory``, at most ``max_bytes`` in all."""

    def __init__(self, directory: pathlib.Path, max_bytes: int):
        self.directory = directory
        self.max_bytes = max_bytes

    def lookup(self, entry_key: str) -> pathlib.Path | None:
        """The directory of the entry ``entry_key`` if it is whole (its
        files match the manifest), now the most recently used; None if there
        is none. A damaged entry is removed (and logged)."""
        entry = self._entry(entry_key)
        try:
            manifest = json.loads((entry / _MANIFEST).read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return self._discard(entry, "its manifest cannot be read")
        problem = _mismatch(entry, manifest)
        if problem is not None:
            return self._discard(entry, problem)
        try:
            os.utime(entry / _MANIFEST)  # the time eviction orders by
        except OSError:
            pass  # a read-only cache still serves its entries
        return entry

    def store(self, entry_key: str, fill: Callable[[pathlib.Path], None]) -> pathlib.Path | None:
        """Stores the entry ``entry_key``: ``fill(directory)`` writes its
        files into an empty directory, which then becomes the entry at once.
        Returns the entry, or None where it could not be written (the cache's
        directory is not writable, the disk is full: logged, not raised,
        since the caller has its code anyway)."""
        entry = self._entry(entry_key)
        scratch = None
        try:
            scratch = self._scratch()
            os.makedirs(entry.parent, exist_ok=True)
            fill(scratch)
            manifest = {path.name: _file_hash(path) for path in sorted(scratch.iterdir()) if path.is_file()}
            (scratch / _MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
            try:
                os.rename(scratch, entry)
                scratch = None
            except OSError:
                # Another process stored it first (the target is not empty):
                # its entry is as good as ours.
                if not (entry / _MANIFEST).exists():
                    raise
        except OSError as error:
            _log.warning("soac: could not store compiled code in the disk cache %s: %s", self.directory, error)
            return None
        finally:
            if scratch is not None:  # not renamed into place: ours, unused
                shutil.rmtree(scratch, ignore_errors=True)
        self.evict()
        return entry

    def evict(self) -> None:
        """Removes the least recently used entries until the rest fit in
        ``max_bytes``, and temporary directories left by dead processes."""
        entries = []
        for entry in self._entries():
            try:
                used = (entry / _MANIFEST).stat().st_mtime
                size = sum(path.stat().st_size for path in entry.iterdir())
            except OSError:
                continue  # removed meanwhile, or not written yet
            entries.append((used, size, entry))
        entries.sort()
        total = sum(size for _, size, _ in entries)
        for _, size, entry in entries:
            if total <= self.max_bytes:
                break
            _remove(entry)
            total -= size
        now = time.time()
        for scratch in self.directory.glob("tmp/*"):
            try:
                if now - scratch.stat().st_mtime > _STALE_SECONDS:
                    shutil.rmtree(scratch, ignore_errors=True)
            except OSError:
                continue

    def clear(self) -> None:
        """Removes every entry."""
        for entry in self._entries():
            _remove(entry)

    def _entries(self) -> list[pathlib.Path]:
        # Entries being removed by another process have a dot in their name.
        return [path for path in self.directory.glob("??/*") if "." not in path.name]

    def _entry(self, entry_key: str) -> pathlib.Path:
        # Two levels, as git's objects: no directory grows too large to list.
        return self.directory / entry_key[:2] / entry_key[2:]

    def _scratch(self) -> pathlib.Path:
        parent = self.directory / "tmp"
        parent.mkdir(parents=True, exist_ok=True)
        return pathlib.Path(tempfile.mkdtemp(dir=parent))

    def _discard(self, entry: pathlib.Path, why: str) -> None:
        _log.warning("soac: the disk cache entry %s is damaged (%s); compiling again", entry, why)
        _remove(entry)
        return None


def _mismatch(entry: pathlib.Path, manifest: object) -> str | None:
    """Why the files of ``entry`` do not match ``manifest``, or None."""
    if not isinstance(manifest, dict) or not manifest:
        return "its manifest lists no files"
    for name, expected in manifest.items():
        try:
            if _file_hash(entry / name) != expected:
                return f"{name} does not match its checksum"
        except OSError:
            return f"{name} is missing"
    return None


def _file_hash(path: pathlib.Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _remove(entry: pathlib.Path) -> None:
    """Removes ``entry`` so that no reader sees part of it: renamed away in
    one step, then deleted. A process that loaded its library keeps the
    code (the mapping outlives the file)."""
    doomed = entry.with_name(f"{entry.name}.removed-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(entry, doomed)
    except OSError:
        return  # already removed by another process
    shutil.rmtree(doomed, ignore_errors=True)


def open_from_environment() -> DiskCache | None:
    """The cache the environment asks for, or None when it is turned off."""
    current = settings()
    if current.directory is None:
        return None
    return DiskCache(current.directory, current.max_bytes)
