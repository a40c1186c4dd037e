"""The one YAML reader of the package's input files (``hsi train --config``, collection files).

PyYAML's ``safe_load`` lets the last of two equal keys in a mapping win silently, so a
config file that sets ``epochs`` twice trains with whichever came last. :func:`read_yaml`
refuses it instead, naming the file, the key and both lines. It imports no torch, so the
command line reads these files before any heavy import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hsi.errors import HSIError

__all__ = ["read_yaml"]


class _DuplicateKey(yaml.YAMLError):
    """A mapping gives one key twice (raised inside the loader, reported by :func:`read_yaml`)."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(f"duplicate key {key!r} on line {line} (first on line {first}); give each key once")


class _UniqueKeyLoader(yaml.SafeLoader):
    """``SafeLoader`` whose mappings refuse a key given twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<: *base" merges; its keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise _DuplicateKey(key, line, seen[key])
            except TypeError:  # an unhashable key: SafeLoader's own error says so
                break
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: str | Path, label: str, error: type[HSIError]) -> Any:
    """The data of the YAML file ``path``; a key given twice in one mapping is refused.

    Parameters
    ----------
    path : str or Path
        The file (the caller has checked that it exists, to word that error its own way).
    label : str
        What names the file in messages (``"--config"``, ``"scenes"``).
    error : type
        The :class:`~hsi.errors.HSIError` raised, with one line ``LABEL: 'PATH': ...``.

    Raises
    ------
    HSIError
        ``error``: the file cannot be read, is not YAML, or gives a key twice (naming the key and its lines).
    """
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{label}: {str(path)!r}: not a readable YAML file ({' '.join(str(err).split())})") from None
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except _DuplicateKey as err:
        raise error(f"{label}: {str(path)!r}: {err}") from None
    except yaml.YAMLError as err:
        raise error(f"{label}: {str(path)!r}: not a readable YAML file ({' '.join(str(err).split())})") from None
