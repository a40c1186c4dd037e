"""``LineProgress`` takes a total known only after the start, as pooch's downloaders set it on a tqdm bar."""

from __future__ import annotations

import io

from hsi._progress import LineProgress


def test_a_total_set_later_spaces_the_lines_and_reset_starts_over():
    out = io.StringIO()
    bar = LineProgress(1, "cube.bin", unit="B", stream=out)
    bar.total = 100  # what pooch does once the server sent Content-Length
    for _ in range(100):
        bar.update(1)
    assert len(out.getvalue().splitlines()) == 10  # one line per tenth, not one per update of a total of 1
    bar.reset()
    bar.update(100)  # pooch fills the bar once more at the end
    lines = out.getvalue().splitlines()
    assert len(lines) == 11 and "100%" in lines[-1] and "100/100" in lines[-1]
