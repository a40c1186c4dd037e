"""AnyBand: a network that reads each band together with its wavelength, so one checkpoint takes any band set.

The first layer is a bank of learned *continuous* spectral filters ``f_d(lambda)``, each a
sum of Gaussian bumps spread over the trained wavelength range. A cube's bands are read by
quadrature: filter ``d`` gives ``sum_c x_c f_d(lambda_c) w_c``, with ``w_c`` the stretch of
spectrum band ``c`` stands for (half the distance between its neighbours) over the trained
range's width. Two sensors that sample the same spectrum at other centres give nearly the same
filter outputs, so the rest of the network (ssnet's) sees the same features either way.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from hsi.errors import ModelSizeError, ShapeMismatchError, WavelengthError
from hsi.models.base import PatchClassifier, check_dropout, check_size
from hsi.models.registry import register_model
from hsi.models.ssnet import SSNet

__all__ = ["AnyBandNet", "band_quadrature"]


def _check_centres(name: str, centres: np.ndarray) -> None:
    """Refuse band centres that are not finite, positive (nm) and strictly increasing, naming the first bad one."""
    shown = np.array2string(centres, threshold=12, precision=6)
    if len(centres) == 0:
        raise WavelengthError(f"{name}.set_bands: no band centre given; give one wavelength (nm) per band of the cube")
    bad = np.flatnonzero(~np.isfinite(centres) | (centres <= 0))
    if bad.size:
        i = int(bad[0])
        raise WavelengthError(f"{name}.set_bands: band centres must be finite wavelengths > 0 (nm); band {i} is "
                              f"{centres[i]:g} in {shown}")
    steps = np.flatnonzero(np.diff(centres) <= 0)
    if steps.size:
        i = int(steps[0]) + 1
        what = "repeats" if centres[i] == centres[i - 1] else "is below"
        raise WavelengthError(f"{name}.set_bands: band centres must be strictly increasing (one distinct wavelength "
                              f"per band); band {i} ({centres[i]:g} nm) {what} band {i - 1} ({centres[i - 1]:g} nm) "
                              f"in {shown}")


def band_quadrature(centres: np.ndarray) -> np.ndarray:
    """Each band's share of the spectrum (nm): half the distance between its neighbours, a full gap at the ends."""
    order = np.argsort(centres)
    ordered = centres[order]
    if len(ordered) == 1:
        return np.ones(1)
    edges = np.concatenate([[ordered[0] - (ordered[1] - ordered[0]) / 2], (ordered[1:] + ordered[:-1]) / 2,
                            [ordered[-1] + (ordered[-1] - ordered[-2]) / 2]])
    share = np.empty_like(ordered)
    share[order] = np.diff(edges)
    return share


@register_model("anyband")
class AnyBandNet(PatchClassifier):
    """Learned continuous spectral filters read at each band's wavelength, then ssnet.

    The idea of first-layer weights that are a function of the band's wavelength follows DOFA:
    Xiong, Z., Wang, Y., Zhang, F. et al. (2024), "Neural plasticity-inspired multimodal
    foundation model for Earth observation", arXiv:2403.15356 (there a hypernetwork over
    multispectral bands). Here the weights are smooth filters read by quadrature, so that other
    band centres and spacings sample the same filter; the design is this package's.

    Layers::

        filters  F x f_d(lambda) = sum_m A[m, d] exp(-(u - m / (M - 1))^2 / (2 s^2)),
                 u = (lambda - first) / (last - first) of the trained range, s = 1 / (M - 1);
                 per pixel: z_d = sum_c x_c f_d(lambda_c) w_c                 (B, F, P, P)
        ssnet    on the F filter outputs (stem, context, centre-pixel head)

    The filters are as smooth as the bump spacing (the trained range over ``basis - 1``: 64 nm
    for 400-2400 nm with 32 bumps), so they read a 10 nm and a 30 nm sensor alike; finer
    absorption features are seen through the filters' smoothing. Band widths are not used.

    :meth:`set_bands` puts the network on another band set (``hsi infer`` does this for a cube
    on other bands instead of resampling it); bands beyond the trained range are refused here
    (``hsi infer`` drops them first, :mod:`hsi.infer.own_bands`). Built
    without ``wavelengths`` the bands are taken as evenly spaced, and the network is one of a
    fixed band set.

    When to use it: to apply one model to cubes of several sensors (a checkpoint trained on
    one sensor maps another's cube without resampling). Give it reflectance-like inputs; the
    scaling it is trained with is refitted on a new cube's own pixels when its bands differ.

    Parameters
    ----------
    num_bands, num_classes : int
        Input bands ``C`` and output classes ``K``.
    patch_size : int
        Odd patch side ``P`` (as ssnet).
    wavelengths : sequence of float or None
        Band centres (nm) of the input, one per band, after preprocessing. ``hsi train`` and
        the DataModule fill it in; None: evenly spaced bands.
    filters : int
        Learned spectral filters ``F`` (the width of the band-free layer).
    basis : int
        Gaussian bumps ``M`` per filter over the trained range.
    width, spectral_layers, num_blocks, dropout, context_dropout
        Of the ssnet that reads the filter outputs (see :class:`hsi.models.SSNet`).
    band_dropout : float
        In training, the probability that a batch is read on a random subset of its bands (a quarter to all),
        so that the features do not hang on one band set.

    Attributes
    ----------
    trained_range : tuple of float
        First and last band centre of ``wavelengths`` (band positions without them).
    receptive_radius : int
        As ssnet's.

    Notes
    -----
    Shapes: ``forward``: ``(B, C, P, P)`` -> ``(B, K)``; ``forward_dense``: ``(B, C, h, w)``
    -> ``(B, K, h, w)``, with ``C`` the band count of the current band set.
    """

    dense = True
    ODD_PATCH_SIZE = True
    RECOMMENDED_PATCH_SIZE = 7
    #: per-band mean and deviation vary smoothly with wavelength (minmax's extremes do not): cubes on other bands
    #: read alike (A -> 65 of its own bands: 99.5 % OA standardized, 81.7 % with minmax; docs/benchmarks.md)
    RECOMMENDED_SCALING = "standardize"
    #: the network reads the wavelengths of its bands: runs fill ``wavelengths`` from the data
    takes_wavelengths = True

    def __init__(
        self,
        num_bands: int,
        num_classes: int,
        patch_size: int,
        *,
        wavelengths: Sequence[float] | None = None,
        filters: int = 32,
        basis: int = 32,
        width: int = 64,
        spectral_layers: int = 2,
        num_blocks: int = 3,
        dropout: float = 0.0,
        context_dropout: float = 0.5,
        band_dropout: float = 0.5,
    ) -> None:
        super().__init__(num_bands, num_classes, patch_size)
        name = type(self).__name__
        filters = check_size(name, "filters", filters, 1)
        check_dropout(name, "band_dropout", band_dropout)
        self.band_dropout = band_dropout
        self.basis_size = check_size(name, "basis", basis, 2)
        centres = self._trained_centres(wavelengths)
        self.wavelengths = None if wavelengths is None else tuple(float(w) for w in centres)
        self.trained_range = (float(centres.min()), float(centres.max()))
        # filters of a few units: a filter output (a weighted mean of the bands) is then of the order of the
        # standardized band values, and the batch norm after it meets values of its own scale from the first step
        self.coefficients = nn.Parameter(2.0 * torch.randn(self.basis_size, filters))
        self.body = SSNet(filters, num_classes, patch_size, width=width, spectral_layers=spectral_layers,
                          num_blocks=num_blocks, dropout=dropout, context_dropout=context_dropout)
        self.receptive_radius = self.body.receptive_radius
        self.register_buffer("band_basis", torch.empty(0), persistent=False)
        self._place(centres)

    def _trained_centres(self, wavelengths: Sequence[float] | None) -> np.ndarray:
        """The training band centres, checked: one finite value per band, at least two distinct."""
        name = type(self).__name__
        if wavelengths is None:
            return np.arange(self.num_bands, dtype=np.float64)
        centres = np.asarray(wavelengths, dtype=np.float64).ravel()
        if len(centres) != self.num_bands or not np.isfinite(centres).all():
            raise ModelSizeError(f"{name}: wavelengths must be {self.num_bands} finite band centres (nm), one per "
                                 f"band; got {len(centres)} values")
        if self.num_bands > 1 and np.ptp(centres) <= 0:
            raise ModelSizeError(f"{name}: wavelengths must span a range; all {self.num_bands} are {centres[0]:g} nm")
        return centres

    def _basis_at(self, centres: np.ndarray) -> torch.Tensor:
        """Basis values times quadrature weights ``(C, M)`` of bands at ``centres`` (float32)."""
        first, last = self.trained_range
        span = max(last - first, 1.0)
        u = (centres - first) / span
        knots = np.linspace(0.0, 1.0, self.basis_size)
        sigma = 1.0 / (self.basis_size - 1)
        bumps = np.exp(-0.5 * ((u[:, None] - knots[None, :]) / sigma) ** 2)
        weights = bumps * (band_quadrature(centres) / span)[:, None] if len(centres) > 1 else bumps
        return torch.as_tensor(weights, dtype=torch.float32)

    def _place(self, centres: np.ndarray) -> None:
        """Read bands at ``centres`` from now on."""
        self.current_centres = np.asarray(centres, dtype=np.float64)
        self.band_basis = self._basis_at(self.current_centres).to(self.coefficients.device)
        self.num_bands = len(centres)

    def set_bands(self, wavelengths: Sequence[float]) -> None:
        """Read cubes on the bands centred at ``wavelengths`` (nm) from now on.

        Raises
        ------
        WavelengthError
            The network was built without wavelengths; the centres are not finite, positive and strictly
            increasing (a repeated centre reads as no band: the output would no longer depend on the cube);
            or a band lies beyond the trained range (by more than half the trained band spacing): the message
            gives both ranges.
        """
        name = type(self).__name__
        centres = np.asarray(wavelengths, dtype=np.float64).ravel()
        if self.wavelengths is None:
            raise WavelengthError(f"{name}: this network was trained without band wavelengths, so it reads only "
                                  f"its own {len(self.band_basis)} bands; train it on a cube with wavelengths")
        _check_centres(name, centres)
        first, last = self.trained_range
        slack = 0.5 * (last - first) / max(len(self.wavelengths) - 1, 1)
        if centres.min() < first - slack or centres.max() > last + slack:
            raise WavelengthError(
                f"{name}: the cube's bands span {centres.min():.1f}-{centres.max():.1f} nm but the network was "
                f"trained on {first:.1f}-{last:.1f} nm; it reads only bands inside that range (drop the others from "
                "the cube, or train on a cube that covers them)")
        self._place(centres)

    def _check_input(self, x: torch.Tensor) -> None:
        if x.dim() == 4 and x.shape[1] != self.num_bands:
            raise ShapeMismatchError(
                f"{type(self).__name__}: input has {x.shape[1]} bands (axis 1 of shape {tuple(x.shape)}) but the "
                f"network is set for num_bands={self.num_bands} (its current band set); give a cube on other bands "
                "with set_bands(wavelengths)")
        super()._check_input(x)

    def filter_outputs(self, x: torch.Tensor) -> torch.Tensor:
        """The learned filters read at the bands: ``(B, C, h, w)`` -> ``(B, F, h, w)``.

        In training, with probability ``band_dropout`` a batch is read on a random subset of its bands (between a
        quarter and all of them, reweighted as that subset's own quadrature), as another sensor would sample the
        same spectra: the network learns features that do not hang on the band set.
        """
        basis = self.band_basis
        if self.training and self.band_dropout > 0 and self.wavelengths is not None and len(basis) > 2 \
                and float(torch.rand(())) < self.band_dropout:
            basis = self._subset_basis()
        per_band = basis.to(x.dtype) @ self.coefficients  # (C, F): each filter at each band
        return torch.einsum("bchw,cf->bfhw", x, per_band)

    def _subset_basis(self) -> torch.Tensor:
        """``band_basis`` of a random subset of the current bands (torch's RNG), zero rows for the others."""
        count = len(self.band_basis)
        share = 0.25 + 0.75 * float(torch.rand(()))
        kept = torch.rand(count) < share
        if int(kept.sum()) < 2:
            kept[torch.randperm(count)[:2]] = True
        index = kept.nonzero().flatten().numpy()
        basis = torch.zeros_like(self.band_basis)
        basis[torch.as_tensor(index)] = self._basis_at(self.current_centres[index]).to(basis.device)
        return basis

    def forward_dense(self, x: torch.Tensor) -> torch.Tensor:
        """Per-pixel logits ``(B, K, h, w)`` for a tile ``(B, C, h, w)``."""
        self._check_input(x)
        return self.body.forward_dense(self.filter_outputs(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, K)`` of the centre pixel of patches ``(B, C, P, P)``."""
        self._check_input(x)
        return self.body(self.filter_outputs(x))
