"""A plug-in reader is checked where the package calls it: what its ``open``, ``label_array`` and
``list_arrays`` return, its suffixes, and the ``OSError`` it raises, each one clear error naming the reader."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hsi.errors import CubeFormatError, FileAccessError
from hsi.io import list_arrays, open_cube, read_cube, read_labels
from hsi.io.discovery import ArrayInfo
from hsi.io.labels import to_label_map
from hsi.io.readers import Reader, find_reader, list_readers, register_reader, unregister_reader
from hsi.io.source import RawSource

NAME = "toyplug"
GOOD = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


class ToyReader(Reader):
    """Opens any ``.toyplug`` file as whatever ``returned`` holds (the test sets it)."""

    name = NAME
    description = "toy .toyplug files"
    suffixes = frozenset({".toyplug"})
    returned: object = None

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        if isinstance(self.returned, BaseException):
            raise self.returned
        return self.returned  # type: ignore[return-value]


@pytest.fixture
def toy(tmp_path):
    """``(reader class, file)``: the toy reader registered for one test, and forgotten after it."""
    register_reader(ToyReader)
    path = tmp_path / "scene.toyplug"
    path.write_text("not read")
    yield ToyReader, path
    unregister_reader(NAME)
    ToyReader.returned = None


def _source(path: Path, array: object, **kw) -> RawSource:
    return RawSource(path, NAME, array, **kw)


BAD = {
    "objects": (np.array([[[object()]]], dtype=object), "an array of dtype object, expected real numbers"),
    "text": ("a cube", "an array of type str, expected an array-like"),
    "text array": (np.full((2, 2, 2), "a"), "an array of dtype <U1, expected real numbers"),
    "complex": (np.ones((2, 2, 3), complex), "an array of dtype complex128, expected real numbers"),
    "a list": ([[[1.0, 2.0]]], "an array of type list, expected an array-like"),
    "empty": (np.zeros((0, 2, 3), np.float32), r"an empty array \(shape \(0, 2, 3\)\)"),
    "None": (None, "an array of type NoneType"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_an_array_that_is_not_real_numbers_is_one_error_naming_the_reader_at_every_entry_point(toy, case):
    cls, path = toy
    array, found = BAD[case]
    cls.returned = _source(path, array)
    for read in (read_cube, open_cube, read_labels, list_arrays):
        with pytest.raises(CubeFormatError, match=rf"scene.toyplug: the 'toyplug' reader returned {found}"):
            read(path)


def test_not_a_raw_source_or_an_unknown_layout_is_refused(toy):
    cls, path = toy
    cls.returned = GOOD
    with pytest.raises(CubeFormatError, match="the 'toyplug' reader returned ndarray, expected a RawSource"):
        read_cube(path)
    cls.returned = _source(path, GOOD, layout="hwc")
    with pytest.raises(CubeFormatError, match="returned layout 'hwc', expected None .detect it. or one of HWC, CHW"):
        read_cube(path)
    cls.returned = _source(path, GOOD, layout="HWC")  # the right contract: read as it says
    np.testing.assert_array_equal(read_cube(path).data, GOOD)


def test_an_os_error_of_a_reader_is_a_file_access_error_naming_the_file_and_the_reader(toy):
    cls, path = toy
    cls.returned = OSError(5, "Input/output error")
    with pytest.raises(FileAccessError, match=r"scene.toyplug: cannot read it \(reader 'toyplug'\): Input/output"):
        read_cube(path)
    cls.returned = PermissionError(13, "Permission denied")
    with pytest.raises(FileAccessError, match="Permission denied"):
        list_arrays(path)


def test_what_label_array_and_list_arrays_return_is_checked(toy):
    cls, path = toy

    class Labels(cls):
        def label_array(self, path, key, prefer):
            return self.label_result

        def list_arrays(self, path):
            return {"cube": (2, 3)}

    unregister_reader(NAME)
    register_reader(Labels)
    for result, found in [(np.zeros((2, 2)), "returned ndarray, expected .name or None, array"),
                          ((None, np.array([], np.uint8), None), r"returned an empty array \(shape \(0,\)\)"),
                          ((None, np.ones((2, 2), complex), None), "returned an array of dtype complex128"),
                          ((None, [[1, 2], [3]], None), "returned list, not an array"),
                          ((None, np.ones((2, 2), np.uint8), -3), "returned the class limit -3")]:
        Labels.label_result = result
        with pytest.raises(CubeFormatError, match=f"scene.toyplug: the 'toyplug' reader's label_array {found}"):
            read_labels(path)
    Labels.label_result = ("gt", [[0, 1], [2, 2]], None)  # a list is an array: the right result
    np.testing.assert_array_equal(read_labels(path), [[0, 1], [2, 2]])
    with pytest.raises(CubeFormatError, match="the 'toyplug' reader's list_arrays returned dict, expected a list"):
        list_arrays(path)


def test_an_empty_label_array_is_a_clear_error():
    with pytest.raises(CubeFormatError, match=r"gt.mat: an empty array \(shape \(0, 5\)\)"):
        to_label_map(np.zeros((0, 5), np.uint8), "gt.mat")


def test_an_upper_case_suffix_is_stored_in_lower_case_and_matches_any_case(tmp_path):
    class Upper(ToyReader):
        name = "upper"
        suffixes = frozenset({".TOYUP"})

    register_reader(Upper)
    try:
        assert Upper.suffixes == frozenset({".toyup"})
        for name in ("a.toyup", "b.TOYUP", "c.ToyUp"):
            (tmp_path / name).write_text("x")
            assert isinstance(find_reader(tmp_path / name), Upper)
    finally:
        unregister_reader("upper")


@pytest.mark.parametrize(("suffixes", "error", "message"), [
    (frozenset({"toy"}), ValueError, "suffix 'toy' is not a file suffix"),
    (frozenset({".tar.gz"}), ValueError, "suffix '.tar.gz' is not a file suffix"),
    (frozenset({"."}), ValueError, "suffix '.' is not a file suffix"),
    (frozenset({" .x"}), ValueError, "suffix ' .x' is not a file suffix"),
    (frozenset({".a/b"}), ValueError, "suffix '.a/b' is not a file suffix"),
    (".toy", TypeError, "suffixes '.toy' must be a set of strings"),
    (frozenset({1}), TypeError, r"suffixes frozenset\(\{1\}\) must be a set of strings"),
])
def test_a_suffix_that_could_never_match_is_refused(suffixes, error, message):
    bad = type("Bad", (ToyReader,), {"name": "badsuffix", "suffixes": suffixes})
    with pytest.raises(error, match=f"register_reader: 'badsuffix': {message}"):
        register_reader(bad)
    assert "badsuffix" not in list_readers()


def test_the_built_in_readers_pass_the_contract_they_are_held_to(tmp_path):
    """The checks refuse nothing a built-in reader returns (an .npy cube, read every way)."""
    path = tmp_path / "cube.npy"
    np.save(path, GOOD)
    np.testing.assert_array_equal(read_cube(path).data, GOOD)
    assert list_arrays(path) == [ArrayInfo("cube.npy", (2, 3, 4), "float32")]
