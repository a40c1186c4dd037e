"""scene_palette: materials in the colours people expect, every class distinct, one palette per scene."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hsi.scenes import make_palette, make_synthetic_scene, scene_palette
from hsi.scenes.benchmark import SCENES as BENCHMARKS
from hsi.scenes.palette import CLASS_GAP, MATERIALS, material_of
from hsi.scenes.unmixing import SCENES as UNMIXING
from hsi.viz import NODATA_COLOR

REGISTRY_NAMES = {s.name: list(s.class_names) for s in BENCHMARKS} | {s.name: list(s.default_names) for s in UNMIXING}
REGISTRY_NAMES["synthetic"] = make_synthetic_scene(height=48, width=48, bands=4, parcel_size=6.0).class_names


def _colour(names: list[str], name: str) -> np.ndarray:
    return scene_palette(names)[names.index(name) + 1].astype(int)


def _is_blue(rgb: np.ndarray) -> bool:
    return rgb[2] > rgb[1] + 30 and rgb[2] > rgb[0] + 60


def _is_green(rgb: np.ndarray) -> bool:
    return rgb[1] > rgb[0] + 30 and rgb[1] > rgb[2] + 20


@pytest.mark.parametrize("scene", sorted(REGISTRY_NAMES))
def test_registry_palettes_are_distinct_and_avoid_black_and_nodata(scene):
    pal = scene_palette(REGISTRY_NAMES[scene]).astype(float)
    assert pal.shape == (len(REGISTRY_NAMES[scene]) + 1, 3) and tuple(pal[0]) == (0, 0, 0)
    gaps = [np.linalg.norm(pal[i] - pal[j]) for i, j in itertools.combinations(range(len(pal)), 2)]
    assert min(gaps) >= CLASS_GAP
    assert (np.linalg.norm(pal[1:] - np.asarray(NODATA_COLOR), axis=1) >= 50).all()


@pytest.mark.parametrize(("scene", "water", "greens"), [
    ("samson", "Water", ["Tree"]),
    ("jasper_ridge", "Water", ["Tree"]),
    ("pavia_centre", "Water", ["Trees", "Meadows"]),
    ("botswana", "Water", ["Hippo grass", "Acacia woodlands", "Floodplain grasses 1", "Floodplain grasses 2"]),
])
def test_water_is_blue_and_vegetation_green(scene, water, greens):
    names = REGISTRY_NAMES[scene]
    assert _is_blue(_colour(names, water))
    for name in greens:
        assert _is_green(_colour(names, name)), name


def test_materials_get_their_family_shades():
    names = ["Asphalt", "Meadows", "Gravel", "Trees", "Painted metal sheets", "Bare Soil", "Bitumen",
             "Self-Blocking Bricks", "Shadows"]
    assert [material_of(n) for n in names] == ["urban", "vegetation", "rock", "trees", "urban", "soil", "urban",
                                               "brick", "shadow"]
    pal = scene_palette(names).astype(int)
    for k in (1, 5, 7):  # asphalt, metal, bitumen: greys, three different ones
        assert pal[k].max() - pal[k].min() <= 60
    assert len({tuple(pal[k]) for k in (1, 5, 7)}) == 3
    soil, rock, shadow = pal[6], pal[3], pal[9]
    assert soil[0] > soil[1] > soil[2] and rock[0] > rock[2] and shadow.sum() < 200
    assert material_of("Brocoli_green_weeds_1") == "vegetation" and material_of("Lettuce_romaine_4wk") is None
    assert material_of("WATER") == "water" and material_of("class_3") is None


def test_several_classes_of_one_material_get_shades_of_it():
    names = ["Fallow", "Fallow_rough_plow", "Fallow_smooth", "Soil_vinyard_develop"]
    pal = scene_palette(names)
    assert [tuple(row) for row in pal[1:]] == [MATERIALS["soil"][1][k] for k in range(4)]


def test_other_classes_keep_the_distinct_colours_but_not_a_materials():
    plain = [f"class_{v}" for v in range(1, 21)]
    np.testing.assert_array_equal(scene_palette(plain), make_palette(20))
    with_water = scene_palette(["Water", "class_1", "class_2"]).astype(float)
    assert np.linalg.norm(with_water[2] - with_water[1]) >= 60  # tab20's first blue is not used beside water
    many = scene_palette([f"class_{v}" for v in range(120)])
    assert len({tuple(row) for row in many}) == 121


def test_scenes_are_built_with_the_scene_palette():
    s = make_synthetic_scene(height=32, width=32, bands=4, n_classes=5, seed=0)
    np.testing.assert_array_equal(s.palette, scene_palette(s.class_names))


def test_no_data_colour_is_the_one_the_palette_avoids():
    from hsi.scenes.palette import NODATA_RGB

    assert tuple(NODATA_RGB) == tuple(NODATA_COLOR)
