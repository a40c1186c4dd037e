"""Plug-ins of installed packages (:mod:`hsi.plugins`): the entry points' names read without importing them, each
plug-in loaded once into its registry the first time the registry is asked, and a failing one named in one
:class:`~hsi.errors.PluginWarning` while the others load.

A package is "installed" here by a ``.dist-info`` folder on ``sys.path`` (what ``pip install`` leaves for the entry
points to be found); each test works on copies of the three registries, so nothing it registers outlives it.
``tests/test_extending_guide.py`` runs the commands with a plug-in package in a child process.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

import hsi.io.readers.registry as readers
import hsi.models.registry as models
import hsi.sinks.registry as sinks
from hsi import plugins
from hsi.errors import PluginWarning

PACKAGE = "hsi_plugtest"

MODULES = {
    "models": '''
from torch import nn

from hsi.models import register_model

IMPORTS = []


class Lin(nn.Module):
    def __init__(self, num_bands, num_classes, patch_size):
        super().__init__()
        self.linear = nn.Linear(num_bands, num_classes)


class NotAModule:
    pass


@register_model("plugtest_self")
class SelfRegistered(Lin):
    pass


IMPORTS.append(1)
''',
    "sinks": '''
from hsi.sinks import Sink, register_sink


class Plain(Sink):
    def files(self, layout):
        return ("plain.txt",)

    def bytes_needed(self, layout):
        return 0

    def write(self, folder, maps):
        (folder / "plain.txt").write_text("x")


@register_sink("plugtest_decorated")
class Decorated(Plain):
    pass
''',
    "readers": '''
from hsi.io.readers import Reader


class Toy(Reader):
    name = "plugtest_reader"
    description = "toy"
    suffixes = frozenset({".plugtest"})

    def open(self, path, key, georef):
        raise NotImplementedError


class Misnamed(Toy):
    name = "another_name"
    suffixes = frozenset({".plugtest2"})
''',
    "nothing": "# registers nothing\n",
}

ENTRY_POINTS = {
    "hsi.models": {"plugtest_lin": "hsi_plugtest.models:Lin", "plugtest_self": "hsi_plugtest.models",
                   "plugtest_missing": "hsi_plugtest.absent:Model", "plugtest_type": "hsi_plugtest.models:NotAModule",
                   "ssnet": "hsi_plugtest.models:Lin", "plugtest_none": "hsi_plugtest.nothing",
                   "plugtest_object": "hsi_plugtest.models:IMPORTS"},
    "hsi.sinks": {"plugtest_plain": "hsi_plugtest.sinks:Plain", "plugtest_decorated": "hsi_plugtest.sinks",
                  "plugtest_bad": "hsi_plugtest.models:Lin"},
    "hsi.readers": {"plugtest_reader": "hsi_plugtest.readers:Toy", "plugtest_misnamed": "hsi_plugtest.readers:Misnamed"},
}


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """The package ``hsi_plugtest`` installed on ``sys.path``, with fresh registries and nothing loaded yet."""
    (tmp_path / PACKAGE).mkdir()
    (tmp_path / PACKAGE / "__init__.py").write_text("")
    for name, code in MODULES.items():
        (tmp_path / PACKAGE / f"{name}.py").write_text(code)
    info = tmp_path / "hsi_plugtest-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hsi-plugtest\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("\n".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items())
        for group, names in ENTRY_POINTS.items()))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv(plugins.DISABLE, raising=False)
    monkeypatch.setattr(plugins, "_LOADED", set())
    for registry in (models, sinks, readers):
        monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield tmp_path
    for module in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[module]


def _plugin_warnings(call) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def test_the_names_are_read_without_importing_the_plugins(installed):
    assert plugins.plugin_names("hsi.models") == list(ENTRY_POINTS["hsi.models"])
    assert plugins.plugin_names("hsi.sinks") == list(ENTRY_POINTS["hsi.sinks"])
    assert PACKAGE + ".models" not in sys.modules and PACKAGE + ".sinks" not in sys.modules
    with pytest.raises(ValueError, match="unknown plug-in group 'hsi.other'"):
        plugins.plugin_names("hsi.other")


def test_models_load_once_and_each_failure_is_one_warning_naming_group_name_package_and_error(installed):
    names, messages = _plugin_warnings(models.list_models)
    assert {"plugtest_lin", "plugtest_self"} <= set(names)  # a class, and a module whose import registers it
    assert models.get_model_class("plugtest_lin").__module__ == PACKAGE + ".models"
    assert models.get_model_class("ssnet").__module__ == "hsi.models.ssnet"  # a clash leaves the built-in as it was
    failed = {name: next(m for m in messages if f"'{name}'" in m)
              for name in ("plugtest_missing", "plugtest_type", "ssnet", "plugtest_none", "plugtest_object")}
    assert len(messages) == len(failed)  # one line each
    for name, message in failed.items():
        assert message.startswith(f"model plug-in {name!r} (hsi.models entry point ") and \
            "package hsi-plugtest 1.2" in message and "\n" not in message
    assert "ModuleNotFoundError: No module named 'hsi_plugtest.absent'" in failed["plugtest_missing"]
    assert "TypeError: hsi_plugtest.models.NotAModule is not a torch.nn.Module subclass" in failed["plugtest_type"]
    assert "ValueError: register_model: name 'ssnet' is already registered to hsi.models.ssnet.SSNet" in failed["ssnet"]
    assert "registered nothing named 'plugtest_none'" in failed["plugtest_none"]
    assert "is a list, expected a class or a module" in failed["plugtest_object"]
    again, messages = _plugin_warnings(models.list_models)
    assert again == names and messages == [] and sys.modules[PACKAGE + ".models"].IMPORTS == [1]  # loaded once


def test_sinks_and_readers_load_on_first_need(installed):
    formats, messages = _plugin_warnings(sinks.list_sinks)
    assert set(formats[-2:]) == {"plugtest_plain", "plugtest_decorated"} and formats[:4] == list(sinks.DEFAULT_FORMATS)
    (message,) = messages
    assert "output format plug-in 'plugtest_bad'" in message and "not a subclass of hsi.sinks.Sink" in message
    assert type(sinks.get_sink("plugtest_plain")).__name__ == "Plain"
    found, messages = _plugin_warnings(readers.known_suffixes)
    assert ".plugtest" in found and ".plugtest2" not in found
    (message,) = messages
    assert "reader plug-in 'plugtest_misnamed'" in message and "named 'another_name', not 'plugtest_misnamed'" in message


def test_no_plugin_is_listed_or_loaded_when_they_are_turned_off(installed, monkeypatch):
    monkeypatch.setenv(plugins.DISABLE, "1")
    assert plugins.plugin_names("hsi.models") == []
    names, messages = _plugin_warnings(models.list_models)
    assert "plugtest_lin" not in names and messages == [] and PACKAGE + ".models" not in sys.modules


def test_the_command_lines_names_join_the_plugins(installed, monkeypatch):
    """Before a registry is imported, the entry points' names; once it is, what it holds (plug-ins and a script's own
    registrations)."""
    from hsi.cli import names

    table = names.table_constant("models")
    monkeypatch.delitem(sys.modules, "hsi.models.registry")
    assert names.model_names() == table + [n for n in ENTRY_POINTS["hsi.models"] if n not in table]
    monkeypatch.setitem(sys.modules, "hsi.models.registry", models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        live = names.model_names()
    assert "plugtest_lin" in live and "plugtest_missing" not in live  # what loaded
    monkeypatch.delitem(sys.modules, "hsi.sinks.registry")
    assert names.output_formats()[-3:] == list(ENTRY_POINTS["hsi.sinks"])
    assert names.probability_formats()[-3:] == list(ENTRY_POINTS["hsi.sinks"])  # InferOptions decides, once loaded
    monkeypatch.delitem(sys.modules, "hsi.io.readers.registry", raising=False)
    assert ("plugtest_reader", ()) in names.file_formats()
