"""Execute the notebooks and store their outputs in them (the documentation shows the stored outputs).

Run after changing a notebook or what it shows::

    python notebooks/store_outputs.py                # every notebook of this folder
    python notebooks/store_outputs.py quickstart.ipynb

The docs build does not execute the notebooks (``nb_execution_mode = "off"`` in docs/conf.py):
a build must not train. Each notebook runs in a fresh kernel whose working folder is an empty
temporary folder outside the repository, as a reader's would be; a notebook that raises is not
written. Timing metadata is dropped, and ``HSI_SHARED_DATA`` is unset (the quickstart's Samson
section shows its absent-data branch), so that what is stored is the same on every machine and a
rerun changes only what the notebook shows. Needs the ``dev`` extra (nbclient, nbformat, ipykernel).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent
#: seconds one cell may take: a guard against a hang, not a speed check
CELL_TIMEOUT = 1800


def execute(path: Path) -> None:
    """Execute ``path`` in a fresh kernel (working folder: an empty temporary folder) and rewrite it with its outputs."""
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="hsi-notebook-") as cwd:
        nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": cwd}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(nb)
    partial = path.with_name(f".{path.name}.partial")
    nbformat.write(nb, partial)
    os.replace(partial, path)  # never a half-written notebook


def main(names: list[str]) -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.pop("HSI_SHARED_DATA", None)  # no local data, no local paths in what is stored
    for path in [HERE / name for name in names] or sorted(HERE.glob("*.ipynb")):
        print(f"executing {path.name} ...", flush=True)
        execute(path)


if __name__ == "__main__":
    main(sys.argv[1:])
