"""What the commands check right after parsing, before torch or Lightning is imported.

Every value of an option goes through the rule its signature declares (:mod:`hsi._checks`,
carried by the option table), the combinations that need no data go through the library's
own checks (:mod:`hsi._combinations`), and every input file named by an option, on the
command line or in a ``--config`` file, must exist. Each refusal is the library's own
:class:`~hsi.errors.HSIError`, so the command line shows the message a script would get,
as one ``error:`` line, in well under a second instead of after the torch import.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hsi._checks import did_you_mean
from hsi._combinations import check_combinations
from hsi._paths import check_checkpoint_file, check_input_file
from hsi.cli.options import OptionSpec, check_values, yaml_value
from hsi.errors import UsageError

__all__ = ["DATA_FILES", "check_data", "check_files", "check_models_pca", "read_config"]

#: data options that name input files (a ``scenes`` text is a collection YAML or pack file)
DATA_FILES = ("cube_path", "labels_path", "test_labels_path", "scenes")


def read_config(path: Path, specs: dict[str, OptionSpec]) -> dict[str, Any]:
    """Option values from a YAML file, checked and converted like the command line's.

    A key given twice, an unknown option (with the closest one) and a value of the wrong type
    are refused, naming the file.
    """
    from hsi._yaml import read_yaml

    if not Path(path).is_file():
        raise UsageError(f"--config: {str(path)!r}: no such file")
    data = read_yaml(path, "--config", UsageError) or {}
    if not isinstance(data, dict):
        raise UsageError(f"--config: {str(path)!r}: expected a mapping of option names to values, found {type(data).__name__}")
    by_param = {s.param: s for s in specs.values()}
    values = {}
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        spec = specs.get(key) or by_param.get(key)
        if spec is None:
            hint = did_you_mean(key, sorted(specs))
            raise UsageError(f"--config: {str(path)!r}: unknown option {raw_key!r}{hint} (options: {', '.join(sorted(specs))})")
        try:
            values[spec.name] = yaml_value(spec, value)
        except argparse.ArgumentTypeError as err:
            raise UsageError(f"{path}: {spec.name}: {err}") from None
    return values


def given_values(args: argparse.Namespace, specs: dict[str, OptionSpec]) -> tuple[dict[str, Any], set[str]]:
    """``(values, from_config)``: the options given, those of ``--config`` underneath the command line's, and the
    names whose value came from the file."""
    given = {name: getattr(args, name) for name in specs if hasattr(args, name)}
    config = getattr(args, "config", None)
    if config is None:
        return given, set()
    from_file = read_config(config, specs)
    return {**from_file, **given}, set(from_file) - set(given)


def check_files(values: dict[str, Any], specs: dict[str, OptionSpec], from_config: set[str] = frozenset(),
                config: Any = None) -> None:
    """Every input file named in ``values`` (keyed by option name) exists; ``--resume`` is a checkpoint file.

    Raises
    ------
    DatasetNotFoundError
        Naming the option (or the ``--config`` file and its key) and the path.
    CheckpointError
        ``--resume`` names a folder or no file.
    """
    for name, value in values.items():
        spec = specs[name]
        where = f"--config {str(config)!r}: {name}" if name in from_config else spec.flag
        if spec.param in DATA_FILES and isinstance(value, (str, Path)):
            check_input_file(value, where)
        elif spec.param in ("resume", "init") and value is not None:
            check_checkpoint_file(value, where)


def check_data(specs: list[OptionSpec], values: dict[str, Any], *, resuming: bool = False,
               set_here: dict[str, Any] | None = None) -> None:
    """The data options' rules, then (unless ``resuming``: the checkpoint holds the data options) their combinations.

    Parameters
    ----------
    specs : list of OptionSpec
        The command's data options (what their defaults are).
    values : dict
        The given values, keyed by option name.
    resuming : bool
        A resumed run takes the data options from its checkpoint: only each given value is checked.
    set_here : dict, optional
        Data arguments the command sets itself (``hsi evaluate``'s ``fold``), by parameter name.
    """
    check_values(specs, values)
    if resuming:
        return
    arguments = {s.param: values.get(s.name, s.default) for s in specs}
    check_combinations({**arguments, **(set_here or {})})


def check_models_pca(models: Any, pca: Any) -> None:
    """Refuse ``pca`` when one of ``models`` reads band wavelengths (the option table's ``wavelength_models``, so
    the command line checks it without torch)."""
    from hsi._combinations import refuse_pca_for
    from hsi.cli.table import table_constant

    refuse_pca_for(models, pca, table_constant("wavelength_models"))
