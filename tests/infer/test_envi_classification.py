"""ENVI classification files: read back through hsi.io with their names, colours and georeferencing."""

from __future__ import annotations

import numpy as np
import pytest
import spectral.io.envi as spy_envi

from hsi.errors import CubeFormatError, ShapeMismatchError
from hsi.io import read_labels
from hsi.io.writers.envi import read_class_info, write_classification


def test_round_trip_with_reserved_characters_in_names(tmp_path):
    labels = np.random.default_rng(0).integers(0, 4, (7, 5))
    lookup = np.arange(12).reshape(4, 3) * 20
    header = write_classification(tmp_path / "map.hdr", labels, ["Unclassified", "corn, notill", "x{y}", "grass"], lookup)
    assert header == tmp_path / "map.hdr" and (tmp_path / "map.img").stat().st_size == labels.size
    np.testing.assert_array_equal(read_labels(header), labels)
    names, colours = read_class_info(header)
    assert names == ["Unclassified", "corn; notill", "x(y)", "grass"]
    np.testing.assert_array_equal(colours, lookup)
    fields = spy_envi.read_envi_header(str(header))
    assert fields["file type"] == "ENVI Classification" and fields["classes"] == "4"


def test_map_info_is_carried_verbatim_from_the_source_header(shared_data, tmp_path):
    source = shared_data / "envi" / "samson" / "samson_1.img.hdr"
    header = write_classification(tmp_path / "c", np.ones((95, 95), dtype=np.uint8), ["U", "a"],
                                  [[0, 0, 0], [9, 9, 9]], source_header=source)
    ours, theirs = spy_envi.read_envi_header(str(header)), spy_envi.read_envi_header(str(source))
    for key in ("map info", "coordinate system string"):
        assert ours[key] == theirs[key]
    assert 'GEOGCS["GCS_WGS_1984",DATUM' in header.read_text()  # WKT not re-spaced


def test_bad_input_is_refused(tmp_path):
    with pytest.raises(ShapeMismatchError, match=r"0\.\.1"):
        write_classification(tmp_path / "a", np.full((2, 2), 2), ["U", "a"], [[0, 0, 0], [1, 1, 1]])
    with pytest.raises(ShapeMismatchError, match=r"\(2, 3\)"):
        write_classification(tmp_path / "a", np.zeros((2, 2), int), ["U", "a"], [[0, 0, 0]])
    (tmp_path / "plain.hdr").write_text("ENVI\nsamples = 1\nlines = 1\nbands = 1\ndata type = 1\n"
                                        "interleave = bsq\nbyte order = 0\n")
    with pytest.raises(CubeFormatError, match="ENVI Classification"):
        read_class_info(tmp_path / "plain.hdr")
