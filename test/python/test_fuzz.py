"""The fuzzers of test/fuzz on a fixed budget (``make fuzz`` runs the long IR
fuzz): soac-opt neither crashes nor hangs on mutated programs, and compiled
functions given bad arguments return or raise a soac.Error, never crash."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fuzz"))

import arg_fuzz  # noqa: E402
import ir_fuzz  # noqa: E402

# Seeded and fixed; about a minute each on 2 cores.
IR_MUTANTS = 300
ARGUMENT_CALLS = 1500


def test_ir_mutants_neither_crash_nor_hang_soac_opt(tmp_path):
    report = ir_fuzz.fuzz(IR_MUTANTS, seed=1, out=tmp_path, jobs=2)
    assert report.valid > IR_MUTANTS // 10, f"too few mutants verify to reach the passes: {report.summary()}"
    assert not report.failures, report.summary()


@pytest.fixture(scope="module")
def argument_report() -> arg_fuzz.Report:
    return arg_fuzz.fuzz_arguments(ARGUMENT_CALLS, seed=1)


def test_bad_arguments_do_not_crash_compiled_functions(argument_report):
    assert argument_report.returned and argument_report.raised, argument_report.summary()
    assert not argument_report.crashes(), argument_report.summary()


def test_bad_arguments_raise_soac_errors(argument_report):
    wrong = [f for f in argument_report.failures if f.kind != "crash"]
    assert not wrong, argument_report.summary()
