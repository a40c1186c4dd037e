"""Sphinx configuration of the hsi documentation.

Build::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Markdown pages are MyST; notebooks under ``notebooks/`` are executed at build time by
myst-nb and the build fails when a cell raises. Nothing is fetched from the internet.
tests/test_docs.py runs the same build with ``-D nb_execution_mode=off`` (tests/test_notebook.py
executes the notebooks).
"""

from __future__ import annotations

import importlib
import warnings

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
# run a notebook when its code changed; the cache lies beside the output folder
# (docs/_build/.jupyter_cache). It does not see changes in hsi: -D nb_execution_mode=force reruns all.
nb_execution_mode = "cache"
nb_execution_timeout = 300  # seconds per cell
nb_execution_raise_on_error = True  # a failing cell fails the build
nb_execution_show_tb = True  # ... and the log shows its traceback

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


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign)
    app.connect("autodoc-process-signature", _clean_signature)
    app.connect("missing-reference", _resolve_reexport)
