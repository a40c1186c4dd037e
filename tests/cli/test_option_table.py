"""The checked-in option table equals the signatures, and `--help` / option errors import neither torch nor Lightning."""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any, Literal

import pytest

from hsi.cli import table

from tests.helpers import CHILD_TIMEOUT

REPO = table.TABLE_PATH.parents[2]

HEAVY = ("torch", "lightning")


def imported(args: list[str]) -> tuple[subprocess.CompletedProcess, set[str]]:
    """Run ``python -X importtime -m hsi ARGS``; the top-level packages it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hsi", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT)
    modules = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in proc.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    return proc, modules


def test_table_equals_the_signatures():
    live = table.live_table()
    written = table.TABLE_PATH.read_text()
    assert table.render(live) == written, f"hsi/cli/_option_table.py is stale: run `{table.REGENERATE}`"


@pytest.mark.parametrize("group", ["train.data", "train.model", "train.run", "doctor.data", "infer.options"])
def test_table_specs_read_back_as_the_live_specs(group):
    assert table.table_specs(group) == table.live_group(group), f"hsi/cli/_option_table.py is stale: run `{table.REGENERATE}`"


@pytest.mark.parametrize("annotation", [int, float, str, bool, int | None, int | float | None, list[int] | None,
                                        tuple[float, float, float], dict[str, Any] | None,
                                        Literal["a", "b|c"], typing.Optional[Literal["x", "y"]]])
def test_annotation_text_round_trips(annotation):
    assert table.parse_annotation(table.annotation_text(annotation)) == annotation


@pytest.mark.parametrize("command", ["train", "infer", "doctor"])
def test_help_imports_no_torch(command):
    proc, modules = imported([command, "--help"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout and "--" in proc.stdout
    assert not modules & set(HEAVY), modules & set(HEAVY)


@pytest.mark.parametrize("args, flag", [(["train", "--padding", "mirror"], "--padding"),
                                        (["train", "--epochs", "two"], "--epochs"),
                                        (["doctor", "--checks", "nope"], "--checks"),
                                        (["infer", "--checkpoint", "x", "--out", "o", "--tile", "big"], "--tile")])
def test_option_error_imports_no_torch(args, flag):
    proc, modules = imported(args)
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    assert proc.returncode == 2
    assert len(errors) == 1 and errors[0].startswith(f"error: {flag}"), errors
    assert not modules & set(HEAVY), modules & set(HEAVY)
