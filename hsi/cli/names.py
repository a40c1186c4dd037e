"""The names a command offers, by kind: file formats (readers), output formats (sinks) and models.

Help texts, choices and the early checks of the command line take these lists from here, one
function per kind, and never type them again. Each reads the option table
(:mod:`hsi.cli.table`), which ``python -m hsi.cli.table`` generates from the registries
(:mod:`hsi.io.readers`, :mod:`hsi.sinks`, :mod:`hsi.models.registry`) and
``tests/cli/test_option_table.py`` keeps equal to them, so ``--help`` and an option error
import no numpy, h5py or torch. Names that reach the registries another way join the lists
here: those of installed plug-ins (the entry-point names, :func:`hsi.plugins.plugin_names`,
read without importing them) and, once this process has imported a registry, whatever it
registered there (a script's own format before it calls :func:`hsi.cli.main`).
"""

from __future__ import annotations

import sys
from typing import Any

from hsi.plugins import plugin_names

__all__ = ["file_formats", "file_formats_text", "model_names", "output_formats", "probability_formats", "table_constant"]


def table_constant(name: str) -> list[Any]:
    """One of the option table's constants (what :func:`hsi.cli.table.registry_constants` wrote)."""
    from hsi.cli._option_table import TABLE

    return list(TABLE["constants"][name])


def file_formats() -> list[tuple[str, tuple[str, ...]]]:
    """``(reader name, its file suffixes)`` for each registered reader, in the order they are asked."""
    listed = [(name, tuple(suffixes)) for name, suffixes in table_constant("readers")]
    known = {name for name, _ in listed}
    live = sys.modules.get("hsi.io.readers.registry")  # imported: what this process registered, plug-ins included
    if live is not None:
        return listed + [(name, tuple(sorted(live.get_reader(name).suffixes))) for name in live.list_readers()
                         if name not in known]
    return listed + [(name, ()) for name in plugin_names("hsi.readers") if name not in known]  # suffixes: on import


def file_formats_text() -> str:
    """The readable formats for a help text: ``"mat (.mat), hdf5 (.h5 .hdf ...), ..."``."""
    return ", ".join(f"{name} ({' '.join(suffixes)})" if suffixes else name for name, suffixes in file_formats())


def output_formats() -> list[str]:
    """The output formats of ``hsi infer --format``, in the order their files are written."""
    return _joined(table_constant("formats"), "hsi.sinks", "hsi.sinks.registry", "list_sinks")


def probability_formats() -> list[str]:
    """The output formats that write the probabilities (``--probabilities`` needs one of them)."""
    # a plug-in's format is known to write them only once imported: here it passes, and InferOptions decides
    return _joined(table_constant("probability_formats"), "hsi.sinks", "hsi.sinks.registry", "probability_sinks")


def model_names(*, classical: bool = False) -> list[str]:
    """The networks of the model registry, then (``classical``) the classical per-pixel baselines."""
    networks = _joined(table_constant("models"), "hsi.models", "hsi.models.registry", "list_models")
    return networks + (table_constant("classical_models") if classical else [])


def _joined(listed: list[str], group: str, module: str, function: str) -> list[str]:
    """``listed`` (the table's), then the other names of the registry: ``module.function()`` where this process has
    imported ``module`` already (what it registered itself, plug-ins included), else the names the installed
    plug-ins of entry-point ``group`` declare (:func:`hsi.plugins.plugin_names`, nothing imported); each once."""
    live = sys.modules.get(module)
    extra = getattr(live, function)() if live is not None else plugin_names(group)
    return list(dict.fromkeys([*listed, *extra]))
