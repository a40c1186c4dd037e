"""The option table: the generated, checked-in options of ``hsi train``, ``hsi doctor`` and ``hsi infer``.

The options are defined by signatures (``HSIDataModule``, ``HSIClassifier``, ``RunOptions``,
``InferOptions``) whose modules import torch and Lightning. So that ``hsi train --help`` and
a bad option value cost no such import, the specs those signatures give
(:func:`hsi.cli.options.option_specs`) are written once to :mod:`hsi.cli._option_table`
(plain data: annotations and range rules as text, :mod:`hsi._checks`) and the parsers are built
from it (:func:`table_specs`); the rules are applied to the parsed values before any torch import.
``tests/cli/test_option_table.py`` keeps the table equal to the signatures; regenerate it with::

    python -m hsi.cli.table
"""

from __future__ import annotations

import inspect
import os
import pprint
import sys
import types
import typing
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from hsi._checks import Rule, rule_of
from hsi.cli.options import OptionSpec

__all__ = ["REGENERATE", "annotation_text", "live_group", "live_specs", "live_table", "parse_annotation", "registry_constants",
           "render", "table_constant", "table_specs", "write_table"]

#: the command that rewrites the table
REGENERATE = "python -m hsi.cli.table"

TABLE_PATH = Path(__file__).with_name("_option_table.py")

_NAMES: dict[str, Any] = {"int": int, "float": float, "str": str, "bool": bool, "None": None, "Any": Any,
                          "Literal": Literal, "list": list, "tuple": tuple, "dict": dict}


def annotation_text(annotation: Any) -> str:
    """A type hint as text that :func:`parse_annotation` reads back (``int | None``, ``Literal['a', 'b']``)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is type(None) or annotation is None:
        return "None"
    if annotation is Any:
        return "Any"
    if annotation is Ellipsis:
        return "..."
    if origin in (typing.Union, types.UnionType):
        return " | ".join(annotation_text(a) for a in args)
    if origin is Literal:
        return "Literal[" + ", ".join(repr(a) for a in args) + "]"
    if origin in (list, tuple, dict):
        return f"{origin.__name__}[{', '.join(annotation_text(a) for a in args)}]"
    if isinstance(annotation, type) and annotation.__name__ in _NAMES:
        return annotation.__name__
    raise TypeError(f"option table: no text form for the annotation {annotation!r}; extend hsi.cli.table")


def parse_annotation(text: str) -> Any:
    """The type hint of :func:`annotation_text`'s ``text`` (only builtins, ``Literal`` and ``Any``)."""
    parts = [eval(p.strip(), {"__builtins__": {}}, dict(_NAMES)) for p in _split_union(text)]  # noqa: S307
    parts = [type(None) if p is None else p for p in parts]
    return parts[0] if len(parts) == 1 else typing.Union[tuple(parts)]


def _split_union(text: str) -> list[str]:
    """``"int | Literal['a|b'] | None"`` split at its top-level ``|`` (outside brackets and quotes)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def _row(spec: OptionSpec) -> dict[str, Any]:
    row = {"param": spec.param, "name": spec.name, "annotation": annotation_text(spec.annotation), "help": spec.help}
    if spec.default is not inspect.Parameter.empty:
        row["default"] = spec.default
    choices = spec.choices
    if choices is not None:
        row["choices"] = list(choices)
    if spec.check is not None:
        if not isinstance(spec.check, Rule):
            raise TypeError(f"option table: {spec.name}'s check {spec.check!r} is not a rule of hsi._checks, so "
                            "the command line cannot apply it before importing torch")
        row["check"] = spec.check.text
    return row


#: DataModule arguments a training run sets itself (hsi train); the doctor sets only predict_on
TRAIN_DATA_EXCLUDED = ("seed", "predict_on")
DOCTOR_DATA_EXCLUDED = ("predict_on",)
#: task arguments taken from the data and the schedule
MODEL_EXCLUDED = ("num_bands", "num_classes", "patch_size", "class_names", "max_epochs")


def live_specs() -> dict[str, list[OptionSpec]]:
    """Every group of options read from the signatures that define them (imports torch and Lightning)."""
    from hsi.classical import CLASSICAL_MODELS
    from hsi.cli.options import option_specs
    from hsi.data import HSIDataModule
    from hsi.infer import InferOptions
    from hsi.training import HSIClassifier
    from hsi.training.options import RunOptions

    model_specs = option_specs(HSIClassifier, exclude=MODEL_EXCLUDED)
    for i, spec in enumerate(model_specs):
        if spec.name == "model":  # the classical baselines train through the same command
            names = typing.get_args(spec.annotation) + tuple(CLASSICAL_MODELS)
            model_specs[i] = replace(spec, annotation=Literal[names],  # type: ignore[valid-type]
                                     help=spec.help + " or a classical per-pixel baseline: " + ", ".join(CLASSICAL_MODELS),
                                     check=None)  # the registry's check needs torch: these choices stand in
    return {
        "data": option_specs(HSIDataModule),  # each command leaves out what it sets itself (table_specs)
        "train.model": model_specs,
        "train.run": option_specs(RunOptions),
        "infer.options": option_specs(InferOptions),
    }


def live_group(group: str) -> list[OptionSpec]:
    """One group of :func:`table_specs`, read from the signatures instead of the table (imports torch)."""
    specs = live_specs()
    if group in _DATA_GROUPS:
        return [spec for spec in specs["data"] if spec.param not in _DATA_GROUPS[group]]
    return specs[group]


def live_table() -> dict[str, Any]:
    """The table computed from the real classes (imports torch and Lightning)."""
    from hsi.doctor import CHECKS
    from hsi.models.registry import list_models, wavelength_models

    return {"options": {name: [_row(s) for s in specs] for name, specs in live_specs().items()},
            "constants": {"models": list(list_models()), "doctor_checks": list(CHECKS),
                          "wavelength_models": wavelength_models(), **registry_constants()}}


def registry_constants() -> dict[str, list[Any]]:
    """The registries' lists that help texts and early checks show (:mod:`hsi.cli.names` reads them back).

    ``readers``: ``[name, [suffixes]]`` per reader, in the order they are asked; ``formats`` and
    ``probability_formats``: the output formats (all, and those writing probabilities);
    ``classical_models``; ``unit_kinds`` (``--units``).
    """
    from hsi.classical import CLASSICAL_MODELS
    from hsi.io.readers import get_reader, list_readers
    from hsi.io.units import UNIT_KINDS
    from hsi.sinks import list_sinks, probability_sinks

    return {"readers": [[name, sorted(get_reader(name).suffixes)] for name in list_readers()],
            "formats": list(list_sinks()), "probability_formats": list(probability_sinks()),
            "classical_models": list(CLASSICAL_MODELS), "unit_kinds": list(UNIT_KINDS)}


def render(table: dict[str, Any]) -> str:
    """The text of :mod:`hsi.cli._option_table` for ``table``."""
    body = pprint.pformat(table, width=110, sort_dicts=False)
    return (f'"""Generated by ``{REGENERATE}`` from the signatures of the options; do not edit."""\n\n'
            f"TABLE = {body}\n")


def write_table(path: Path = TABLE_PATH) -> Path:
    """Regenerate the checked-in table from the real classes."""
    path.write_text(render(live_table()))
    return path


def _spec(row: dict[str, Any]) -> OptionSpec:
    default = row.get("default", inspect.Parameter.empty)
    if isinstance(default, list) and "tuple[" in row["annotation"]:
        default = tuple(default)
    check = rule_of(row["check"]) if "check" in row else None
    return OptionSpec(row["param"], row["name"], parse_annotation(row["annotation"]), default, row["help"], check)


#: data options each command sets itself, by group name of :func:`table_specs`
_DATA_GROUPS = {"train.data": TRAIN_DATA_EXCLUDED, "doctor.data": DOCTOR_DATA_EXCLUDED}


def table_specs(group: str) -> list[OptionSpec]:
    """The specs of one group (``train.data``, ``train.model``, ``train.run``, ``doctor.data``, ``infer.options``).

    ``train.data`` and ``doctor.data`` are the table's one ``data`` group less the options
    that command sets itself.
    """
    from hsi.cli._option_table import TABLE

    if group in _DATA_GROUPS:
        return [_spec(row) for row in TABLE["options"]["data"] if row["param"] not in _DATA_GROUPS[group]]
    return [_model_choices(_spec(row)) for row in TABLE["options"][group]]


def _model_choices(spec: OptionSpec) -> OptionSpec:
    """``spec``, or for ``--model`` the spec whose choices are :func:`hsi.cli.names.model_names` (networks and
    classical baselines: the one list of models the command line offers)."""
    from hsi.cli.names import model_names

    if spec.param != "model":
        return spec
    return replace(spec, annotation=Literal[tuple(model_names(classical=True))])  # type: ignore[misc]


def table_constant(name: str) -> list[Any]:
    """A list the parsers need beside the options (``models``, ``doctor_checks``, :func:`registry_constants`)."""
    from hsi.cli.names import table_constant as constant

    return constant(name)


if __name__ == "__main__":
    from hsi.plugins import DISABLE

    os.environ[DISABLE] = "1"  # the package's own names: installed plug-ins join them when a command runs
    print(f"wrote {write_table()}", file=sys.stderr)
