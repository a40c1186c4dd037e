"""``hsi inspect`` on a file whose reader (a plug-in's) raises ``OSError``: one ``error:`` line naming the file, exit 2."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from hsi.io.readers import Reader, register_reader, unregister_reader
from hsi.io.source import RawSource


class FailingReader(Reader):
    """``.oserr`` files: ``open`` or ``list_arrays`` raises what ``error`` holds (the test sets it)."""

    name = "oserr"
    description = "toy .oserr files"
    suffixes = frozenset({".oserr"})
    error: OSError = OSError(errno.EIO, "Input/output error")
    in_list_arrays = False

    def open(self, path: Path, key: str | None, georef: str) -> RawSource:
        raise self.error

    def list_arrays(self, path: Path) -> list:
        if self.in_list_arrays:
            raise self.error
        return super().list_arrays(path)


@pytest.fixture
def failing():
    register_reader(FailingReader)
    yield FailingReader
    unregister_reader(FailingReader.name)
    FailingReader.in_list_arrays = False


@pytest.mark.parametrize("in_list_arrays", [False, True])
@pytest.mark.parametrize(("error", "reason"), [(OSError(errno.EIO, "Input/output error"), "Input/output error"),
                                               (PermissionError(errno.EACCES, "Permission denied"),
                                                "Permission denied"),
                                               (OSError("the tape is not mounted"), "the tape is not mounted")])
def test_an_os_error_of_a_reader_is_one_error_line(failing, hsi_main, tmp_path, in_list_arrays, error, reason):
    failing.error, failing.in_list_arrays = error, in_list_arrays
    (tmp_path / "scene.oserr").write_text("x")
    code, out, err = hsi_main(["inspect", "scene.oserr"], tmp_path)
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith("error: scene.oserr: cannot read") and reason in lines[0], err
