"""The disk cache of compiled code (soac.runtime.disk_cache): later processes
load what an earlier one compiled, damaged entries are compiled again,
concurrent processes share it, the environment moves, bounds or disables it."""

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
from soac.runtime import disk_cache

# A gather: a call with a bad index checks that code loaded from the cache
# still stops failed calls with the op's location.
PROGRAM = """
func.func @pick(%x: tensor<?xf32>, %i: tensor<?xindex>) -> tensor<?xf32> {
  %r = soac.map ins(%i : tensor<?xindex>) -> tensor<?xf32> {
  ^bb0(%k: index):
    %v = tensor.extract %x[%k] : tensor<?xf32>
    %w = arith.mulf %v, %v : f32
    soac.yield %w : f32
  }
  return %r : tensor<?xf32>
}
"""

SCRIPT = textwrap.dedent(
    f"""
    import logging, sys
    import numpy as np
    import soac
    logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
    pick = soac.compile({PROGRAM!r}, "pick")
    print("result", pick(np.arange(4, dtype=np.float32), np.array([3, 1], dtype=np.intp)).tolist())
    try:
        pick(np.arange(4, dtype=np.float32), np.array([7], dtype=np.intp))
    except soac.runtime.abi.IndexOutOfRangeError as error:
        print("stopped", error)
    """
)


def run_script(cache: pathlib.Path, **environment: str) -> str:
    env = {**os.environ, "SOAC_CACHE_DIR": str(cache), **environment}
    env.pop("SOAC_CACHE", None) if "SOAC_CACHE" not in environment else None
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "result [9.0, 1.0]" in done.stdout
    assert "stopped" in done.stdout and "out of range" in done.stdout
    return done.stdout


def entries(cache: pathlib.Path) -> list[pathlib.Path]:
    return [path for path in cache.glob("??/*") if "." not in path.name]


def test_a_second_process_loads_the_code_instead_of_compiling(tmp_path):
    first = run_script(tmp_path)
    assert "compiled @pick" in first and "from the disk cache" not in first
    assert len(entries(tmp_path)) == 1
    second = run_script(tmp_path)
    assert "loaded @pick from the disk cache" in second
    assert "compiled @pick" not in second


def test_two_processes_storing_the_same_entry_both_succeed(tmp_path):
    env = {**os.environ, "SOAC_CACHE_DIR": str(tmp_path)}
    env.pop("SOAC_CACHE", None)
    runs = [subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(2)]
    for run in runs:
        stdout, stderr = run.communicate()
        assert run.returncode == 0, stderr
        assert "result [9.0, 1.0]" in stdout
    assert len(entries(tmp_path)) == 1
    assert not any((tmp_path / "tmp").iterdir())
    assert "loaded @pick from the disk cache" in run_script(tmp_path)


def test_soac_cache_off_compiles_in_every_process(tmp_path):
    for _ in range(2):
        assert "compiled @pick" in run_script(tmp_path, SOAC_CACHE="off")
    assert entries(tmp_path) == []


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh disk cache for this test, and an empty in-memory cache, so that
    compile looks on disk."""
    monkeypatch.setenv("SOAC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SOAC_CACHE", raising=False)
    soac.clear_caches()
    yield tmp_path
    soac.clear_caches()


def compile_pick(caplog) -> list[str]:
    """Compiles PROGRAM, checks its result; returns what was logged."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="soac"):
        pick = soac.compile(PROGRAM, "pick")
    np.testing.assert_array_equal(pick(np.arange(4, dtype=np.float32), np.array([2], dtype=np.intp)), [4.0])
    soac.clear_caches()
    return [record.getMessage() for record in caplog.records]


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete", "manifest"])
def test_a_damaged_entry_is_compiled_again_never_loaded(cache_dir, caplog, damage):
    compile_pick(caplog)
    [entry] = entries(cache_dir)
    library = entry / "libpick.so"
    if damage == "truncate":
        library.write_bytes(library.read_bytes()[:100])
    elif damage == "flip":
        data = bytearray(library.read_bytes())
        data[len(data) // 2] ^= 0xFF
        library.write_bytes(bytes(data))
    elif damage == "delete":
        library.unlink()
    else:
        (entry / "manifest.json").write_text("{not json")
    messages = compile_pick(caplog)
    assert any("is damaged" in m for m in messages)
    assert any(m.startswith("compiled @pick") for m in messages)
    assert not any("loaded @pick" in m for m in messages)
    # Stored again, whole.
    assert any(m.startswith("loaded @pick") for m in compile_pick(caplog))


def test_options_and_locations_are_part_of_the_key(cache_dir, caplog):
    compile_pick(caplog)
    soac.compile(PROGRAM, "pick", options=soac.compiler.CpuOptions(openmp=False))
    moved = "\n" + PROGRAM  # the same IR, its ops on other lines
    soac.compile(moved, "pick")
    assert len(entries(cache_dir)) == 3


def test_timing_prints_the_pass_timing_and_compiles(cache_dir, caplog, capfd):
    compile_pick(caplog)
    with caplog.at_level(logging.DEBUG, logger="soac"):
        soac.compile(PROGRAM, "pick", timing=True)
    assert any(r.getMessage().startswith("compiled @pick") for r in caplog.records)
    report = capfd.readouterr().err
    assert "Execution time report" in report and "SoacAutodiff" in report


def test_soac_timing_environment_variable(cache_dir, capfd, monkeypatch):
    monkeypatch.setenv("SOAC_TIMING", "1")
    soac.compile(PROGRAM, "pick")
    assert "Execution time report" in capfd.readouterr().err


def fill_with(size: int):
    return lambda directory: (directory / "code.so").write_bytes(b"x" * size)


def test_eviction_removes_the_least_recently_used_entries(tmp_path):
    cache = disk_cache.DiskCache(tmp_path, max_bytes=2500)
    keys = [f"{n:02x}" * 32 for n in range(3)]
    for age, key in enumerate(keys[:2]):
        cache.store(key, fill_with(1000))
        manifest = cache.lookup(key) / "manifest.json"
        os.utime(manifest, (1000.0 + age, 1000.0 + age))  # key 0 older than key 1
    assert cache.lookup(keys[0]) is not None  # now the most recently used
    cache.store(keys[2], fill_with(1000))
    assert cache.lookup(keys[1]) is None
    assert cache.lookup(keys[0]) is not None and cache.lookup(keys[2]) is not None


def test_settings_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("SOAC_CACHE_DIR", raising=False)
    monkeypatch.delenv("SOAC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("SOAC_CACHE_MAX_SIZE", "500M")
    assert disk_cache.settings() == disk_cache.Settings(tmp_path / "soac", 500 << 20)
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SOAC_CACHE_MAX_SIZE", "12345")
    assert disk_cache.settings() == disk_cache.Settings(tmp_path / ".cache" / "soac", 12345)
    monkeypatch.setenv("SOAC_CACHE", "off")
    assert disk_cache.settings().directory is None and disk_cache.open_from_environment() is None
    monkeypatch.setenv("SOAC_CACHE_MAX_SIZE", "lots")
    with pytest.raises(soac.Error, match="SOAC_CACHE_MAX_SIZE"):
        disk_cache.settings()


def test_an_unwritable_cache_only_costs_the_storing(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SOAC_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot be created
    monkeypatch.delenv("SOAC_CACHE", raising=False)
    soac.clear_caches()
    with caplog.at_level(logging.WARNING, logger="soac"):
        pick = soac.compile(PROGRAM, "pick")
    soac.clear_caches()
    np.testing.assert_array_equal(pick(np.arange(4, dtype=np.float32), np.array([1], dtype=np.intp)), [1.0])
    assert any("could not store" in r.getMessage() for r in caplog.records)


def test_code_calling_no_runtime_function_loads_from_disk(cache_dir, caplog):
    # Nothing allocated, no check: the library must still link the runtime,
    # whose checked calls the loader takes from it.
    double = "func.func @double(%x: f64) -> f64 {\n  %y = arith.addf %x, %x : f64\n  return %y : f64\n}"
    assert soac.compile(double, "double")(1.5) == 3.0
    soac.clear_caches()
    with caplog.at_level(logging.DEBUG, logger="soac"):
        assert soac.compile(double, "double")(2.5) == 5.0
    assert any(r.getMessage().startswith("loaded @double") for r in caplog.records)
