"""Are the labels registered with the cube? Evidence that does not trust the labels.

A quick per-pixel classifier (linear discriminant analysis with a shrunk pooled
covariance) is cross-validated on held-out pixels with the label map as given, and
again with the same map moved against the cube: shifted by a few pixels in each
direction, flipped, and transposed (square scenes). Labels registered with the cube
score best as given, because a moved map pairs boundary pixels with the neighbouring
class; a map shifted, flipped or transposed on the way in scores better moved back
towards where it belongs. Each candidate is compared with the map as given on the
same pixels (a paired difference, with its standard error), so the verdict does not
depend on which pixels were drawn; everything is seeded.

The orientation of a square map is decided only when the data can tell: the map as given
and the same map transposed (scored over :data:`TRANSPOSE_REPEATS` cross-validation splits)
must score apart by :data:`Z_FAIL` standard errors and :data:`MIN_GAIN` accuracy, one way or
the other. A small scene, few labelled pixels (fewer than :data:`MIN_PIXELS` labelled in both
orientations) or parcels that look alike either way cannot show a transposition;
:func:`registration_problems` then says "cannot decide" (the check is UNDECIDED, not PASS)
rather than passing a map it could not have failed, with the way the evidence leans and that
this check cannot see a transposed map in that scene.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Registration", "candidate_maps", "check_registration", "registration_problems", "shift_map"]

#: shifts (pixels) tried in each of the four directions
SHIFTS = (1, 2, 4)
#: a candidate beats the map as given when it is better by this many standard errors...
Z_FAIL = 3.0
#: ...and by at least this much held-out accuracy
MIN_GAIN = 0.005
#: the map as given must recover at least this fraction of the way from chance to perfect
MIN_SKILL = 0.12
#: fewer labelled pixels than this: no verdict
MIN_PIXELS = 60
#: the transposed map's 2-fold cross-validation is repeated on this many random halves, the per-pixel scores
#: averaged: the luck of one split is averaged out of the paired difference, which then shows a transposed map
#: on a 32 x 32 scene (one split left it undecided). The shifts keep one split: twelve subtle alternatives tried at
#: once, where sharper scores would let the mixed boundary pixels of a correct map pass for a one-pixel shift
TRANSPOSE_REPEATS = 5
#: covariance shrinkage towards its mean eigenvalue
SHRINKAGE = 0.1
#: spectra are projected on this many principal components first (a fast, stable LDA)
COMPONENTS = 30


@dataclass
class Registration:
    """The registration evidence of a label map.

    Attributes
    ----------
    accuracy : float
        Held-out accuracy of the classifier with the labels as given.
    chance : float
        Share of the largest class (what guessing it alone scores).
    candidates : dict of str to (gain, z)
        Accuracy gain of each moved map over the map as given, on the same pixels, and
        that gain in paired standard errors.
    pixels : int
        Pixels the classifier was cross-validated on (as given).
    transposable : bool
        True when a transposed map was among the candidates (a square scene), whether or not
        enough pixels were labelled in both orientations to score it.
    """

    accuracy: float
    chance: float
    candidates: dict[str, tuple[float, float]] = field(default_factory=dict)
    pixels: int = 0
    transposable: bool = False

    @property
    def skill(self) -> float:
        """``(accuracy - chance) / (1 - chance)``: 0 is chance, 1 is perfect."""
        return (self.accuracy - self.chance) / max(1.0 - self.chance, 1e-12)

    def best(self) -> tuple[str, float, float] | None:
        """``(name, gain, z)`` of the candidate with the largest z, or None."""
        if not self.candidates:
            return None
        name = max(self.candidates, key=lambda n: self.candidates[n][1])
        return (name, *self.candidates[name])


def shift_map(labels: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """``labels`` moved ``dy`` rows down and ``dx`` columns right; uncovered pixels become 0 (unlabelled)."""
    h, w = labels.shape
    out = np.zeros_like(labels)
    if abs(dy) >= h or abs(dx) >= w:
        return out
    out[max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \
        labels[max(-dy, 0):h - max(dy, 0), max(-dx, 0):w - max(dx, 0)]
    return out


def candidate_maps(labels: np.ndarray) -> dict[str, np.ndarray]:
    """The map moved against the cube: shifted (:data:`SHIFTS`), flipped, and transposed when square."""
    out: dict[str, np.ndarray] = {}
    for d in SHIFTS:
        rows, cols = ("row" if d == 1 else "rows"), ("column" if d == 1 else "columns")
        out[f"moved {d} {rows} down"] = shift_map(labels, d, 0)
        out[f"moved {d} {rows} up"] = shift_map(labels, -d, 0)
        out[f"moved {d} {cols} right"] = shift_map(labels, 0, d)
        out[f"moved {d} {cols} left"] = shift_map(labels, 0, -d)
    out["flipped upside down"] = labels[::-1].copy()
    out["flipped left-right"] = labels[:, ::-1].copy()
    if labels.shape[0] == labels.shape[1]:
        out["transposed"] = labels.T.copy()
    return out


def _lda(x: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Weights ``(C, K)`` and biases ``(K,)`` of a shrunk-covariance LDA fitted on ``x`` (N, C), ``y`` in 0..K-1."""
    counts = np.bincount(y, minlength=k).astype(np.float64)
    means = np.zeros((k, x.shape[1]))
    np.add.at(means, y, x)
    means /= np.maximum(counts, 1.0)[:, None]
    resid = x - means[y]
    cov = resid.T @ resid / max(len(x) - k, 1)
    cov = (1 - SHRINKAGE) * cov + SHRINKAGE * np.trace(cov) / len(cov) * np.eye(len(cov))
    weights = np.linalg.solve(cov, means.T)
    bias = -0.5 * np.sum(means.T * weights, axis=0) + np.log(counts / len(y) + 1e-12)
    bias[counts == 0] = -np.inf  # a class absent from the fold is never predicted
    return weights, bias


def _held_out_correct(x: np.ndarray, y: np.ndarray, k: int, folds: np.ndarray) -> np.ndarray:
    """Per pixel: 1.0 when the LDA fitted on the other folds predicts its label, else 0.0."""
    correct = np.zeros(len(y))
    for f in np.unique(folds):
        test = folds == f
        weights, bias = _lda(x[~test], y[~test], k)
        correct[test] = np.argmax(x[test] @ weights + bias, axis=1) == y[test]
    return correct


def _features(pixels: np.ndarray, labelled: np.ndarray, rng: np.random.Generator,
              max_pixels: int) -> Callable[[np.ndarray], np.ndarray]:
    """``index -> (N, COMPONENTS)`` standardised principal components, fitted on a sample of labelled pixels."""
    sample = pixels[rng.choice(labelled, min(max_pixels, labelled.size), replace=False)]
    mean, std = sample.mean(axis=0), sample.std(axis=0) + 1e-12
    z = (sample - mean) / std
    _, vectors = np.linalg.eigh(z.T @ z)  # ascending eigenvalues: the last columns are the leading components
    basis = vectors[:, ::-1][:, :COMPONENTS]
    return lambda index: ((pixels[index] - mean) / std) @ basis


def _paired(features: Callable[[np.ndarray], np.ndarray], given: np.ndarray, moved: np.ndarray, k: int,
            rng: np.random.Generator, max_pixels: int, repeats: int = 1) -> tuple[np.ndarray, np.ndarray] | None:
    """Held-out correctness of both maps on the same sampled pixels (labelled in both), each averaged over
    ``repeats`` 2-fold splits shared by the two maps, or None when too few pixels."""
    both = np.flatnonzero((given > 0) & (moved > 0))
    if both.size < MIN_PIXELS:
        return None
    both = np.sort(rng.choice(both, min(max_pixels, both.size), replace=False))
    x = features(both)
    as_given, as_moved = np.zeros(both.size), np.zeros(both.size)
    for _ in range(repeats):
        folds = rng.permutation(both.size) % 2
        as_given += _held_out_correct(x, given[both] - 1, k, folds)
        as_moved += _held_out_correct(x, moved[both] - 1, k, folds)
    return as_given / repeats, as_moved / repeats


def check_registration(cube: np.ndarray, labels: np.ndarray, *, seed: int = 0, max_pixels: int = 10_000,
                       candidates: Callable[[np.ndarray], dict[str, np.ndarray]] = candidate_maps,
                       ) -> Registration | None:
    """Score the label map as given against the same map moved against the cube.

    Parameters
    ----------
    cube : (H, W, C) array
        The scene's values (any scale; bands are standardised on the sampled pixels).
    labels : (H, W) int array
        0 unlabelled, classes 1..K.
    seed : int
        Seed of the pixel samples and the folds.
    max_pixels : int
        Pixels sampled per comparison (the cost is linear in it).
    candidates : callable
        ``labels -> {name: moved map}`` (default :func:`candidate_maps`).

    Returns
    -------
    Registration or None
        None when fewer than :data:`MIN_PIXELS` finite pixels are labelled.
    """
    h, w, c = cube.shape
    finite = np.isfinite(cube).all(axis=-1)
    given = np.where(finite, labels, 0).ravel()
    if int((given > 0).sum()) < MIN_PIXELS:
        return None
    k = int(labels.max())
    features = _features(cube.reshape(h * w, c).astype(np.float64), np.flatnonzero(given > 0),
                         np.random.default_rng(seed), max_pixels)
    labelled = np.flatnonzero(given > 0)
    sample = np.sort(np.random.default_rng(seed).choice(labelled, min(max_pixels, labelled.size), replace=False))
    folds = np.random.default_rng(seed).permutation(sample.size) % 2
    correct = _held_out_correct(features(sample), given[sample] - 1, k, folds)
    counts = np.bincount(given[given > 0], minlength=k + 1)[1:]
    result = Registration(float(correct.mean()), float(counts.max() / counts.sum()), pixels=sample.size)
    moved_maps = candidates(labels)
    result.transposable = "transposed" in moved_maps
    for name, moved in moved_maps.items():
        pair = _paired(features, given, np.where(finite, moved, 0).ravel(), k, np.random.default_rng(seed), max_pixels,
                       TRANSPOSE_REPEATS if name == "transposed" else 1)
        if pair is None:
            continue
        diff = pair[1] - pair[0]
        se = float(np.sqrt(np.mean(diff ** 2) / diff.size))
        gain = float(diff.mean())
        result.candidates[name] = (gain, gain / se if se > 0 else 0.0)
    return result


def _orientation_undecided(result: Registration) -> list[str]:
    """What the check could not see of a square map's orientation, and why (empty when it could, or not square).

    The line says which way the evidence leans, so a transposed map and a correct one that are
    both undecided do not read alike, and that this check cannot tell them apart here.
    """
    if not result.transposable:
        return []
    if "transposed" not in result.candidates:
        return [f"whether the label map is transposed: fewer than {MIN_PIXELS} pixels are labelled both as given "
                f"and transposed, so this check cannot see a transposed map here; check the map's orientation by eye "
                f"(its parcels over a false-colour image of the cube)"]
    gain, z = result.candidates["transposed"]
    if abs(z) >= Z_FAIL and abs(gain) >= MIN_GAIN:
        return []
    lean = ("leans towards a transposed map" if gain > 0 else "leans towards the map as given" if gain < 0
            else "leans neither way")
    return [f"whether the label map is transposed: the map scores {gain:+.1%} transposed ({z:+.1f} standard errors, "
            f"{result.pixels} labelled pixels; a verdict needs {Z_FAIL:g} and {MIN_GAIN:.1%} either way), which "
            f"{lean} but does not show it: too few labelled pixels, or classes too alike, to tell the orientation, "
            f"so this check cannot see a transposed map in this scene; check the map's orientation by eye (its "
            f"parcels over a false-colour image of the cube)"]


def registration_problems(result: Registration | None) -> tuple[list[str], list[str], list[str]]:
    """``(evidence, problems, undecided)`` lines of a :class:`Registration`.

    A problem is a moved map that fits better (:data:`Z_FAIL`, :data:`MIN_GAIN`) or labels
    that barely predict the spectra (:data:`MIN_SKILL`); undecided is what the evidence
    cannot settle: registration at all (fewer than :data:`MIN_PIXELS` labelled pixels), or
    the orientation of a square map (:func:`_orientation_undecided`).
    """
    if result is None:
        return [], [], [f"whether the label map is registered with the cube: fewer than {MIN_PIXELS} labelled "
                        f"pixels"]
    evidence = [f"label registration: a per-pixel LDA, 2-fold cross-validated on {result.pixels} labelled pixels, "
                f"scores {result.accuracy:.1%} with the labels as given (largest class {result.chance:.1%})"]
    problems = []
    best = result.best()
    if result.skill < MIN_SKILL:
        problems.append(f"the labels barely predict the spectra ({result.accuracy:.1%} held-out accuracy, "
                        f"{result.chance:.1%} by always guessing the largest class): the label map does not belong "
                        f"to this cube (another scene, or scrambled)")
    if best is not None and best[2] > Z_FAIL and best[1] > MIN_GAIN:
        problems.append(f"the labels fit the cube better {best[0]} (held-out accuracy {best[1] * 100:+.1f} points "
                        f"over the map as given, on the same pixels; {best[2]:.1f} standard errors): the label map is "
                        f"misregistered (shifted, flipped or transposed against the cube)")
        return evidence, problems, []
    if best is not None:
        evidence.append(f"no moved map fits better ({len(result.candidates)} tried: shifts of {SHIFTS} px each way, "
                        f"flips{', transpose' if 'transposed' in result.candidates else ''}; best {best[0]}, "
                        f"{best[1] * 100:+.1f} points, {best[2]:+.1f} standard errors)")
    return evidence, problems, _orientation_undecided(result)
