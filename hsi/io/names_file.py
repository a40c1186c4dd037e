"""Class names beside a label map: the text file ``<labels file>.names`` (``gt.tif.names``, ``gt.mat.names``).

One ``id name`` line per class (the name is the rest of the line, spaces kept); blank lines
and lines starting with ``#`` are skipped, id 0 (unlabeled) may be named and is ignored.
The file names the label map's own ids, before training renumbers them ``1..K``, and wins
over names the label file stores itself (:func:`hsi.io.readers.class_names_of`). It is one
of the files the label map stands for (:func:`hsi.io.readers.files_of`), so editing it
makes a cached scene stale. Named after the label file, as GDAL names its ``.aux.xml``, so a
``gt.mat`` and a ``gt.tif`` in one folder each keep their own.
"""

from __future__ import annotations

from pathlib import Path

from hsi.errors import CubeFormatError

__all__ = ["NAMES_SUFFIX", "names_file_of", "read_names_file"]

#: appended to the label file's whole name (``gt.tif`` -> ``gt.tif.names``)
NAMES_SUFFIX = ".names"


def names_file_of(path: str | Path) -> Path | None:
    """The names file beside the label map ``path`` (``<path>.names``) when there is one, else None."""
    sidecar = Path(f"{path}{NAMES_SUFFIX}")
    return sidecar if sidecar.is_file() else None


def _parse_line(line: str, where: str) -> tuple[int, str]:
    """``(id, name)`` of one ``id name`` line."""
    head, _, rest = line.strip().partition(" ")
    name = rest.strip()
    if not head.isdigit() or not name:
        raise CubeFormatError(f"{where}: {line.strip()!r} is not an 'id name' line (a label id >= 0, a space, "
                              f"the class name)")
    return int(head), name


def read_names_file(path: str | Path) -> list[str]:
    """Names of ids ``1..max id`` in a names file, ``""`` for an id it leaves out (then called ``class_<id>``).

    Raises
    ------
    CubeFormatError
        Naming the file and line: a line that is not ``id name``, an id or a name given twice,
        or no class named; a file that is not UTF-8 text.
    """
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise CubeFormatError(f"{p}: not a readable UTF-8 class names file ({err})") from err
    named: dict[int, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        value, name = _parse_line(line.replace("\t", " "), f"{p} line {number}")
        if value in named or (value > 0 and name in named.values()):
            twice = f"id {value}" if value in named else f"name {name!r}"
            raise CubeFormatError(f"{p} line {number}: {twice} is given twice; each class needs one id and one name")
        named[value] = name
    named.pop(0, None)
    if not named:
        raise CubeFormatError(f"{p}: names no class (expected 'id name' lines such as '1 water', ids >= 1)")
    return [named.get(i, "") for i in range(1, max(named) + 1)]
