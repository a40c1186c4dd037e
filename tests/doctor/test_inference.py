"""The doctor's class maps are drawn in the scene's palette, like map.png and split.png."""

from __future__ import annotations

import numpy as np


def test_inference_figure_draws_both_maps_in_the_palette():
    from hsi.doctor.inference import _figure
    from hsi.scenes import scene_palette

    palette = scene_palette(["Rock", "Tree", "Water"])
    whole = np.array([[0, 1], [2, 3]])
    tiled = np.array([[3, 2], [1, 0]])
    fig = _figure(whole, tiled, np.zeros((2, 2)), palette)
    for ax, labels in zip(fig.axes[:2], (whole, tiled)):
        np.testing.assert_array_equal(np.asarray(ax.images[0].get_array())[..., :3], palette[labels])
