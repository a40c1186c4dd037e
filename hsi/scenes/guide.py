"""The data guide: where scene files go, the registry, the formats, how downloads are verified.

One text, kept inside the package as ``hsi/scenes/GUIDE.md`` so that a plain (non-editable)
``pip install`` can still print it (``hsi scenes --guide``). A checkout of the repository keeps
the same text as ``data/README.md`` for people browsing the folder; that file is a copy,
written by ``python -m hsi.scenes.guide`` (``--check`` only compares) and kept equal by a test.
Edit ``GUIDE.md``, then regenerate the copy.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

from hsi._atomic import write_bytes_atomic

#: where the copy lives, relative to the repository root
DATA_README = Path("data") / "README.md"


def guide_text() -> str:
    """The data guide shipped with the package (``hsi/scenes/GUIDE.md``).

    Returns
    -------
    str
        The guide as Markdown text.
    """
    return resources.files("hsi.scenes").joinpath("GUIDE.md").read_text(encoding="utf-8")


def copy_is_current(path: str | Path) -> bool:
    """Whether the file at ``path`` holds exactly the guide's text.

    Parameters
    ----------
    path : str or Path
        The copy to compare, usually ``data/README.md``.

    Returns
    -------
    bool
        False when the file is missing or differs from :func:`guide_text`.
    """
    path = Path(path)
    return path.is_file() and path.read_text(encoding="utf-8") == guide_text()


def write_copy(path: str | Path) -> None:
    """Write the guide's text to ``path`` atomically, creating its folder.

    Parameters
    ----------
    path : str or Path
        Where the copy goes, usually ``data/README.md``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, guide_text().encode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    """``python -m hsi.scenes.guide [--out PATH] [--check]``: write or check the copy.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the copy was written or is current, 1 when ``--check`` finds it stale.
    """
    parser = argparse.ArgumentParser(prog="python -m hsi.scenes.guide", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(DATA_README), help=f"the copy to write (default: {DATA_README})")
    parser.add_argument("--check", action="store_true", help="only compare; exit status 1 when it differs")
    args = parser.parse_args(argv)
    if args.check:
        if copy_is_current(args.out):
            return 0
        print(f"error: {args.out}: differs from hsi/scenes/GUIDE.md; run python -m hsi.scenes.guide",
              file=sys.stderr)
        return 1
    write_copy(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
