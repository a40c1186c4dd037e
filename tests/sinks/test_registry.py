"""The output-format registry (:mod:`hsi.sinks.registry`): a sink registered from outside the package is a
``--format`` choice of ``hsi infer`` and writes its file, with no change to the option table or any package file."""

from __future__ import annotations

import csv
import re
import io
import json

import numpy as np
import pytest

from hsi.errors import OptionError
from hsi.sinks import (DEFAULT_FORMATS, FinishedMaps, MapLayout, Sink, get_sink, list_sinks, register_sink,
                       unregister_sink)
from tests import helpers

SCENE = {"height": 24, "width": 20, "bands": 8, "n_classes": 3, "seed": 2, "parcel_size": 8.0}


class ClassCounts(Sink):
    """``class_counts.csv``: the pixels of each id of the label map (0: no-data), read strip by strip."""

    def files(self, layout: MapLayout) -> tuple[str, ...]:
        return ("class_counts.csv",)

    def bytes_needed(self, layout: MapLayout) -> int:
        return 64 * (layout.num_classes + 2)

    def write(self, folder, maps: FinishedMaps) -> None:
        counts = np.zeros(len(maps.names), dtype=np.int64)
        for start in range(0, maps.labels.shape[0], 256):
            counts += np.bincount(np.asarray(maps.labels[start:start + 256]).ravel(), minlength=len(maps.names))
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["id", "class", "pixels"])
        writer.writerows([i, name, int(n)] for i, (name, n) in enumerate(zip(maps.names, counts)))
        (folder / "class_counts.csv").write_text(text.getvalue(), encoding="utf-8")


@pytest.fixture
def counts_sink():
    """The toy format ``counts``, registered for one test."""
    register_sink("counts")(ClassCounts)
    yield "counts"
    unregister_sink("counts")


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    dm = helpers.quiet_datamodule(scene="synthetic", scene_options=SCENE, patch_size=5, block_size=8,
                                  fractions=(0.5, 0.25, 0.25), batch_size=64, seed=0)
    return helpers.train_checkpoint(tmp_path_factory.mktemp("sinks") / "cnn.ckpt", dm, "cnn2d")


def _infer(hsi_main, ckpt, cwd, out, *extra):
    code, _, err = hsi_main(["infer", "--checkpoint", str(ckpt), "--out", out, "--accelerator", "cpu",
                             "--no-progress", *extra], cwd)
    assert code == 0, err
    return cwd / out


def test_a_sink_registered_outside_the_package_is_a_format_choice_and_writes_its_file(counts_sink, ckpt, hsi_main,
                                                                                      tmp_path):
    from hsi.transaction import verify_manifest

    default = _infer(hsi_main, ckpt, tmp_path, "default")
    assert "class_counts.csv" not in {p.name for p in default.iterdir()}  # not a default format
    counts = _infer(hsi_main, ckpt, tmp_path, "counts", "--format", "counts")
    assert {p.name for p in counts.iterdir()} == {"class_counts.csv", "metrics.json", "inference.json"}
    with open(counts / "class_counts.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    labels = np.load(default / "labels.npy")
    assert [int(r["pixels"]) for r in rows] == np.bincount(labels.ravel(), minlength=SCENE["n_classes"] + 1).tolist()
    assert rows[0]["class"] == "Unclassified" and len(rows) == SCENE["n_classes"] + 1
    manifest = json.loads((counts / "inference.json").read_text())
    assert manifest["options"]["format"] == ["counts"] and verify_manifest(counts, "inference.json") == {}
    _infer(hsi_main, ckpt, tmp_path, "counts", "--format", "counts", "--overwrite")  # its file is hsi's to replace
    # the command line's choices are the registry's: an unknown format lists the plug-in's
    code, _, err = hsi_main(["infer", "--checkpoint", str(ckpt), "--out", "x", "--format", "tif"], tmp_path)
    assert code == 2 and f"expected one of {', '.join(list_sinks())}" in err and list_sinks()[-1] == "counts"


def test_the_option_table_does_not_list_the_format_choices():
    """So that a plug-in's format needs no regenerated table (the choices are read from the registry at parse time)."""
    from hsi.cli.table import table_specs

    fmt = next(s for s in table_specs("infer.options") if s.param == "format")
    assert fmt.choices is None and fmt.default == DEFAULT_FORMATS


def test_the_registry_refuses_a_taken_name_and_names_unknown_formats(counts_sink):
    assert list_sinks() == [*DEFAULT_FORMATS, "counts"]  # the defaults first, in the order written
    register_sink("counts")(ClassCounts)  # the same class again: no change
    with pytest.raises(ValueError, match="'png' is already registered"):
        register_sink("png")(ClassCounts)
    with pytest.raises(OptionError, match=f"format: 'csv': one or more of {', '.join(list_sinks())}$"):
        get_sink("csv")
    unregister_sink("counts")
    assert "counts" not in list_sinks()


@pytest.mark.parametrize(("probabilities", "rgb"), [(False, False), (True, True)])
def test_each_builtin_sink_lists_the_files_of_its_layout(probabilities, rgb):
    layout = MapLayout((10, 20), 4, np.dtype(np.uint8), probabilities, rgb)
    files = {name: set(get_sink(name).files(layout)) for name in DEFAULT_FORMATS}
    assert files["npy"] == {"labels.npy", "confidence.npy"} | ({"probabilities.npy"} if probabilities else set())
    assert files["envi"] == {"classification.img", "classification.hdr"}
    assert files["gtiff"] == {"labels.tif", "labels.tif.aux.xml", "confidence.tif"} | (
        {"probabilities.tif"} if probabilities else set())
    assert files["png"] == {"map.png", "confidence.png"} | ({"false_color.png"} if rgb else set())


# -- the sink contract, checked where the package calls a sink ----------------------------------------------------

@pytest.mark.parametrize(("name", "message"), [
    ("", "format name '' is not one word"),
    ("two words", "format name 'two words' is not one word"),
    ("../up", "format name '../up' is not one word"),
    ("-x", "format name '-x' is not one word"),
    ("all", "format name 'all' is reserved"),
    ("ALL", "format name 'ALL' is reserved"),
    ("none", "format name 'none' is reserved"),
])
def test_register_sink_refuses_a_name_format_cannot_take(name, message):
    with pytest.raises(ValueError, match=f"register_sink: {message}"):
        register_sink(name)(ClassCounts)
    assert name.lower() not in list_sinks()


def test_register_sink_refuses_a_class_as_its_name_and_a_class_that_is_not_a_sink():
    with pytest.raises(TypeError, match=r"must be a string, got <class .*ClassCounts'>; "
                                        r"write @register_sink\(\"name\"\)"):
        register_sink(ClassCounts)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"register_sink\('plain'\): <class 'object'> is not a subclass of "
                                        r"hsi.sinks.Sink"):
        register_sink("plain")(object)  # type: ignore[type-var]
    assert "plain" not in list_sinks()


def _toy_sink(**methods) -> type[Sink]:
    """A ``ClassCounts`` with some methods replaced."""
    return type("Toy", (ClassCounts,), {"__module__": __name__, **methods})


@pytest.fixture
def toy_sink():
    """``toy_sink(**methods)``: registers a ``ClassCounts`` with those methods as the format ``toy``, for one test."""
    def register(**methods):
        unregister_sink("toy")
        return register_sink("toy")(_toy_sink(**methods))

    yield register
    unregister_sink("toy")


@pytest.mark.parametrize("needed", [-1, None, 2.5, True, "64"])
def test_a_bytes_needed_that_is_not_a_count_of_bytes_is_refused_naming_the_format(toy_sink, needed):
    from hsi.errors import PluginError
    from hsi.infer.write import space_needed

    toy_sink(bytes_needed=lambda self, layout: needed)
    with pytest.raises(PluginError, match=rf"output format 'toy' \(tests.sinks.test_registry.Toy\): bytes_needed "
                                          rf"returned {re.escape(repr(needed))}, expected a whole number of bytes >= 0"):
        space_needed((4, 4), 3, False, formats=("toy",))
    toy_sink(bytes_needed=lambda self, layout: np.int64(64))  # a numpy integer is a count of bytes
    assert space_needed((4, 4), 3, False, formats=("toy",)) - space_needed((4, 4), 3, False, formats=("npy",)) == 64


@pytest.mark.parametrize("declared", [("../escape.csv",), ("/tmp/abs.csv",), ("sub/file.csv",), (".hidden",), ("",),
                                      "class_counts.csv", (1,)])
def test_a_declared_name_outside_the_output_folder_is_refused_before_any_run(toy_sink, declared):
    """A run that chooses the format is refused before the tile pass (``space_needed``); a run that does not choose
    it is not stopped, and its names are none of the files ``overwrite`` may replace (``output_files``)."""
    from hsi.errors import PluginError
    from hsi.infer.write import output_files, space_needed

    toy_sink(files=lambda self, layout: declared)
    with pytest.raises(PluginError, match=r"output format 'toy' \(tests.sinks.test_registry.Toy\): files\(layout\) "):
        space_needed((4, 4), 3, False, formats=("npy", "toy"))
    assert space_needed((4, 4), 3, False, formats=("npy",)) > 0
    names = output_files()
    assert "labels.npy" in names and "metrics.json" in names
    assert not set(names) & ({declared} if isinstance(declared, str) else {str(n) for n in declared})


def _write_extra(self, folder, maps):
    ClassCounts.write(self, folder, maps)
    (folder / "notes.txt").write_text("not declared")


def _write_nothing(self, folder, maps):
    return None


def _write_up(self, folder, maps):
    ClassCounts.write(self, folder, maps)
    (folder / ".." / "escape.csv").write_text("outside")


def _write_own_map(self, folder, maps):
    ClassCounts.write(self, folder, maps)
    np.save(folder / "labels.npy", np.zeros((2, 2)))


TOY = r"output format 'toy' \(tests.sinks.test_registry.Toy\): "
BROKEN = {
    "undeclared": ({"write": _write_extra}, TOY + r"wrote 'notes.txt', which its files\(\) does not declare"),
    "skipped": ({"write": _write_nothing}, TOY + r"did not write 'class_counts.csv', which its files\(\) declares"),
    "outside": ({"write": _write_up}, r"'escape.csv' appeared outside the folders given to the output formats "
                                      r"\(output format 'gtiff' .*; output format 'toy'"),
    "own map": ({"write": _write_own_map, "files": lambda self, layout: ("class_counts.csv", "labels.npy")},
                TOY + "wrote 'labels.npy', which the run writes itself"),
    "metrics": ({"files": lambda self, layout: ("class_counts.csv", "metrics.json")},
                TOY + "declares 'metrics.json', which hsi infer writes itself"),
    "clash": ({"files": lambda self, layout: ("class_counts.csv", "labels.tif")},
              TOY + r"declares 'labels.tif', which output format 'gtiff' \(hsi.sinks.gtiff.GeoTiffSink\) writes too"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_sink_that_breaks_its_contract_is_one_error_line_and_leaves_nothing(toy_sink, ckpt, hsi_main, tmp_path,
                                                                              case):
    methods, message = BROKEN[case]
    toy_sink(**methods)
    code, _, err = hsi_main(["infer", "--checkpoint", str(ckpt), "--out", "maps", "--accelerator", "cpu",
                             "--no-progress", "--format", "toy", "gtiff"], tmp_path)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert re.match(f"error: {message}", lines[0]), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output folder, no staging folder, no escaped file
