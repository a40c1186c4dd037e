"""The run options a deep run checks before any work (:func:`hsi.training.deep_run.check_devices`): precision and
compile where they cannot run are refused naming the option."""

from __future__ import annotations

import pytest

from hsi.errors import OptionError
from hsi.training.deep_run import check_devices
from hsi.training.options import RunOptions


def test_precisions_the_cpu_runs_pass_and_16_mixed_is_refused():
    check_devices(RunOptions(accelerator="cpu", devices="1", precision="bf16-mixed"))
    with pytest.raises(OptionError, match="precision: '16-mixed': 32-true or bf16-mixed on the CPU") as err:
        check_devices(RunOptions(accelerator="cpu", devices="1", precision="16-mixed"))
    assert err.value.option == "precision"


def test_compile_without_a_cpp_compiler_is_refused_naming_compile(monkeypatch):
    import torch._inductor.config as inductor

    monkeypatch.setattr(inductor.cpp, "cxx", ("no-such-c++-compiler",))
    with pytest.raises(OptionError, match="compile: True: needs a C.. compiler") as err:
        check_devices(RunOptions(accelerator="cpu", devices="1", compile=True))
    assert err.value.option == "compile"
    check_devices(RunOptions(accelerator="cpu", devices="1", compile=False))  # nothing to compile: nothing needed


@pytest.mark.parametrize(("field", "value"), [("accumulate_grad_batches", 0), ("compile", "yes"), ("precision", "16")])
def test_run_options_refuse_bad_values(field, value):
    with pytest.raises(OptionError) as err:
        RunOptions(**{field: value})
    assert err.value.option == field
