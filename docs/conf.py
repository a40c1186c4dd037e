"""Sphinx configuration of the hsi documentation.

Build::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Markdown pages are MyST. The notebooks live in the repository's top-level ``notebooks/``
folder; each ``docs/notebooks/<name>.nblink`` names one, and myst-nb reads the notebook it
names. They are shown with the outputs stored in them: the build executes nothing (a build must
not train), so it takes the same time whatever the machine's load. ``python
notebooks/store_outputs.py`` refreshes the stored outputs; tests/test_notebook.py executes the
notebooks. Nothing is fetched from the internet; tests/test_docs.py runs this same build.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
import warnings
from pathlib import Path

import nbformat

import hsi

# numpydoc drops a section it does not know ("Shapes", "Example") with only a Python
# warning, which -W does not catch: make it stop the build instead.
warnings.filterwarnings("error", category=UserWarning, module="numpydoc")

project = "hsi"
author = "hsi contributors"
copyright = "hsi contributors"  # noqa: A001 - the name Sphinx reads
release = hsi.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "numpydoc",
    "myst_nb",  # loads myst_parser too: Markdown pages and notebooks
]

exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints", ".jupyter_cache", "Thumbs.db", ".DS_Store"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"

# -- MyST ----------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3  # [text](page.md#a-heading) links resolve

# -- Notebooks (myst-nb) -------------------------------------------------------------------------
#: the repository: notebook links name their notebook relative to it
ROOT = Path(__file__).resolve().parents[1]
# shown with their stored outputs, never executed here (python notebooks/store_outputs.py stores them)
nb_execution_mode = "off"
# docs/notebooks/<name>.nblink, {"path": "notebooks/<name>.ipynb"}: read as the notebook it names
nb_custom_formats = {".nblink": ("_hsi_docs_notebooks.read_notebook_link", {}, False)}


def _link_target(text: str) -> Path:
    """The notebook a ``.nblink`` file names (its ``path``, relative to the repository)."""
    try:
        target = ROOT / json.loads(text)["path"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f'a notebook link must be {{"path": "notebooks/<name>.ipynb"}}; found {text.strip()!r}') from exc
    if not target.is_file():
        raise FileNotFoundError(f"a notebook link names {target}, which is not a file")
    return target


def read_notebook_link(text: str) -> nbformat.NotebookNode:
    """myst-nb's reader for ``.nblink`` files: the notebook the link names."""
    return nbformat.read(_link_target(text), as_version=4)


# myst-nb imports a reader by its dotted name; this file is not an importable module
_readers = types.ModuleType("_hsi_docs_notebooks")
_readers.read_notebook_link = read_notebook_link
sys.modules[_readers.__name__] = _readers

# -- API reference (autodoc + numpydoc) ----------------------------------------------------------
autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
    "ignore-module-all": True,  # each object once: on the page of the module that defines it
}
autodoc_typehints = "signature"
autodoc_inherit_docstrings = False  # torch's and Lightning's docstrings use roles this build lacks
autodoc_class_signature = "mixed"
numpydoc_show_class_members = False  # members are documented by autodoc, once
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- HTML ----------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"hsi {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
html_static_path: list[str] = []


def _skip_foreign(app, what, name, obj, skip, options):
    """Leave out module members defined outside ``hsi`` (``from scipy.spatial import cKDTree``).

    Also scikit-learn's metadata-routing setters (``set_fit_request``), which it adds to every estimator.
    """
    module = getattr(obj, "__module__", None)
    if what == "module" and isinstance(module, str) and module != "hsi" and not module.startswith("hsi."):
        return True
    if what == "class" and name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def _strip_annotated(text: str | None) -> str | None:
    """``Annotated[T, Role(...)]`` -> ``T``: the roles are bookkeeping, the type is what readers need."""
    while text and "Annotated[" in text:
        start = text.index("Annotated[")
        depth, comma, end = 0, None, None
        for i in range(start + len("Annotated["), len(text)):
            char = text[i]
            if char in "[(":
                depth += 1
            elif char in "])":
                if depth == 0:
                    end = i
                    break
                depth -= 1
            elif char == "," and depth == 0 and comma is None:
                comma = i
        if end is None or comma is None:
            break
        text = text[:start] + text[start + len("Annotated["):comma] + text[end + 1:]
    return text


def _clean_signature(app, what, name, obj, options, signature, return_annotation):
    return _strip_annotated(signature), _strip_annotated(return_annotation)


def _resolve_reexport(app, env, node, contnode):
    """A reference to a re-exported name (``hsi.io.read_cube``) lands on its entry (``hsi.io.cube.read_cube``).

    Each object is documented once, in the module that defines it; the packages' public
    names are the ones people write.
    """
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith("hsi."):
        return None
    module_name, _, attr = target.rpartition(".")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        return None
    home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
    if home == target or not home.startswith("hsi."):
        return None
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder, node["reftype"], home, node, contnode)


def _note_notebook(app, docname, source):
    """Rebuild a notebook's page when the notebook changes, not only when its link does."""
    if str(app.env.doc2path(docname)).endswith(".nblink"):
        app.env.note_dependency(str(_link_target(source[0])))


def setup(app):
    app.connect("source-read", _note_notebook)
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("autodoc-process-signature", _clean_signature)
    app.connect("missing-reference", _resolve_reexport)
