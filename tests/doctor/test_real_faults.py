"""The doctor on the real Samson scene: each fault it names fails its check; the intact copy passes.

The copies are written into a temporary folder by :mod:`tests.doctor.samson_copies`
(``../shared`` is only read); every test skips when the shared data are absent.
"""

from __future__ import annotations

import pytest

from hsi.doctor import check_batches, check_overfit, check_spectra, default_model_factory

from .samson_copies import copy_datamodule

pytestmark = pytest.mark.shared

FCN = default_model_factory("fcn")


@pytest.fixture(scope="module")
def samson_copy(shared_data, tmp_path_factory):
    """``fault -> set-up DataModule`` of that copy of Samson (each written and set up once)."""
    folder = tmp_path_factory.mktemp("samson_copies")
    made = {}

    def get(fault: str):
        if fault not in made:
            made[fault] = copy_datamodule(shared_data, folder, fault)
        return made[fault]

    return get


def test_the_intact_copy_passes_and_its_evidence_is_clear_cut(samson_copy):
    dm = samson_copy("intact")
    batches, spectra, overfit = check_batches(dm), check_spectra(dm), check_overfit(dm, FCN)
    for result in (batches, spectra, overfit):
        assert result.passed, result.format()
    assert spectra.values["roughness"] < 0.1  # smooth: a few hundredths of a random band order's roughness
    as_stored, reversed_ = spectra.values["vegetation"]
    assert as_stored > 0.1 and reversed_ < 0.01
    registration = overfit.values["registration"]
    assert registration["accuracy"] > 0.9 and max(z for _, z in registration["candidates"].values()) < 0
    assert min(overfit.values["control_losses"]) > 3 * overfit.values["final_loss"]
    assert "not undivided reflectance x 10000" in batches.format()


@pytest.mark.parametrize("fault, verdict", [("labels_transposed", "transposed"),
                                            ("labels_down_1", "moved 1 row up"),
                                            ("labels_down_5", "moved 4 rows up")])
def test_misregistered_labels_fail_the_overfit_check(samson_copy, fault, verdict):
    # one step: the registration evidence needs no training (the loss target is then missed too)
    result = check_overfit(samson_copy(fault), FCN, steps=1)
    assert not result.passed
    assert f"the labels fit the cube better {verdict} (" in result.format()
    assert "labels equal the label map at every patch centre" in result.format()  # the pipeline pairs them right


def test_reversed_bands_fail_the_spectra_check_by_the_red_edge(samson_copy):
    result = check_spectra(samson_copy("bands_reversed"))
    assert not result.passed
    assert "with the bands reversed: the band axis is reversed against the wavelengths" in result.format()
    assert result.values["roughness"] < 0.1  # as smooth as the right order: smoothness alone cannot see it
    assert result.values["error"] < 1e-6  # and the pipeline is faithful to the (wrong) file


def test_shuffled_bands_fail_the_spectra_check_by_their_roughness(samson_copy):
    result = check_spectra(samson_copy("bands_shuffled"))
    assert not result.passed
    assert "the bands are not in wavelength order (shuffled?)" in result.format()
    assert result.values["roughness"] > 0.5


def test_undivided_integer_reflectance_fails_the_batches_check(samson_copy):
    result = check_batches(samson_copy("scaled_int16"))
    assert not result.passed
    text = result.format()
    assert "look like reflectance x 10000 that was never divided by its scale" in text
    assert text.count(" - ok") == 3  # the batches themselves are fine: min-max scaling hides the fault


def test_the_evidence_is_the_same_on_a_second_run(samson_copy):
    from hsi.data.scene_source import load_source
    from hsi.doctor.band_order import check_band_order
    from hsi.doctor.registration import check_registration

    src = load_source(samson_copy("labels_down_1").source)
    first, second = (check_registration(src.cube, src.labels, seed=0) for _ in range(2))
    assert first == second and first.best()[0] == "moved 1 row up"
    assert check_registration(src.cube, src.labels, seed=1) != first  # the seed is what fixes the samples
    assert check_band_order(src.cube, src.labels, src.wavelengths) == check_band_order(src.cube, src.labels,
                                                                                       src.wavelengths)
