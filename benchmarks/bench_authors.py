"""hsi's published models against their authors' code: one training step each, side by side.

Each model of the package that reproduces a paper (``ssftt``, ``spectralformer``,
``spectralformer_pixel``) is built as ``hsi train`` builds it (the registry's recommended
patch and PCA for a scene of ``--scene-bands`` raw bands, 16 classes as Indian Pines, 2-D
convolution weights channels-last) and timed against a re-implementation of its authors'
code written here (not part of the package), which keeps their layers, their tensor
operations (``einsum``, ``chunk``, the ``rearrange`` reshapes, ``torch.cat`` of the
class token) and the input their training script feeds it:

- SSFTT: Sun et al. (2022), zgr6010/HSI_SSFTT ``cls_SSFTT_IP/SSFTTnet.py``; batches of
  ``(B, 1, C, P, P)`` volumes, contiguous, as ``IP_train.py`` transposes them.
- SpectralFormer: Hong et al. (2022), danfenghong/IEEE_TGRS_SpectralFormer
  ``vit_pytorch.py`` with ``demo.py``'s settings (CAF, dim 64, depth 5, 4 heads, mlp 8,
  3 bands per token); batches of band tokens ``(B, C, 3 P^2)``, which ``demo.py`` builds on
  the host before training (``gain_neighborhood_band``), so building them is not timed.

hsi's model reads the channels-last ``(B, C, P, P)`` batches its loader gives. Both are
started from the same weights (hsi's, copied into the authors' layout by name: the load
is strict, so both have the same parameters and shapes) and their eval-mode logits on the
same batch are compared (``max_abs_diff``): the two compute the same function. Then each
is trained with forward + cross-entropy + backward + AdamW step on one batch of
``--batch``, on ``--threads`` torch threads, the two models taking turns step by step so
that machine noise hits both alike; a step's time is the median over ``--steps`` steps
(``--transformer-steps`` for SpectralFormer, whose steps are seconds long) after 2 warm-up
ones. ``ratio`` is ``authors_ms / hsi_ms``: above 1, hsi trains faster.

    python benchmarks/bench_authors.py [--models ssftt spectralformer spectralformer_pixel] [--steps 40]
                                       [--transformer-steps 3] [--batch 64] [--threads 1] [--json]

``--json`` prints one JSON line: ``{"machine": ..., "rows": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn

WARMUP = 2
CLASSES = 16
MODELS = ("ssftt", "spectralformer", "spectralformer_pixel")


# --- the authors' layers (the ViT layer of lucidrains' vit-pytorch, as both papers' code has it) ---

class _Residual(nn.Module):
    def __init__(self, fn: nn.Module) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x) + x


class _PreNorm(nn.Module):
    def __init__(self, dim: int, fn: nn.Module) -> None:
        super().__init__()
        self.norm, self.fn = nn.LayerNorm(dim), fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(self.norm(x))


class _FeedForward(nn.Module):
    def __init__(self, dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout), nn.Linear(hidden, dim),
                                 nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _Attention(nn.Module):
    """Multi-head attention as the authors write it: chunk, split heads, two einsums, merge heads."""

    def __init__(self, dim: int, heads: int, head_dim: int, bias: bool, scale: float, dropout: float) -> None:
        super().__init__()
        self.heads, self.scale = heads, scale
        self.to_qkv = nn.Linear(dim, 3 * heads * head_dim, bias=bias)
        self.to_out = nn.Sequential(nn.Linear(heads * head_dim, dim), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        # rearrange 'b n (h d) -> b h n d' of each chunk
        q, k, v = (t.reshape(b, n, self.heads, -1).permute(0, 2, 1, 3) for t in self.to_qkv(x).chunk(3, dim=-1))
        attn = (torch.einsum("bhid,bhjd->bhij", q, k) * self.scale).softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attn, v)
        return self.to_out(out.permute(0, 2, 1, 3).reshape(b, n, -1))  # 'b h n d -> b n (h d)'


class _Transformer(nn.Module):
    """``depth`` pre-norm layers; with ``fuse_channels`` the authors' CAF skip convolutions (SpectralFormer)."""

    def __init__(self, dim: int, depth: int, attention: dict, mlp_dim: int, dropout: float,
                 fuse_channels: int | None = None) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.ModuleList([_Residual(_PreNorm(dim, _Attention(dim, dropout=dropout, **attention))),
                           _Residual(_PreNorm(dim, _FeedForward(dim, mlp_dim, dropout)))])
            for _ in range(depth))
        self.skipcat = nn.ModuleList(nn.Conv2d(fuse_channels, fuse_channels, [1, 2], 1, 0)
                                     for _ in range(depth - 2 if fuse_channels else 0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last_output = []
        for nl, (attn, ff) in enumerate(self.layers):
            last_output.append(x)
            if self.skipcat and nl > 1:
                pair = torch.cat([x.unsqueeze(3), last_output[nl - 2].unsqueeze(3)], dim=3)
                x = self.skipcat[nl - 2](pair).squeeze(3)
            x = ff(attn(x))
        return x


class AuthorsSSFTT(nn.Module):
    """SSFTTnet as in zgr6010/HSI_SSFTT: input ``(B, 1, C, P, P)``, the tokenizer's three einsums."""

    def __init__(self, num_bands: int, num_classes: int, num_tokens: int = 4, dim: int = 64, depth: int = 1,
                 heads: int = 8, mlp_dim: int = 8, dropout: float = 0.1, emb_dropout: float = 0.1) -> None:
        super().__init__()
        self.conv3d_features = nn.Sequential(nn.Conv3d(1, 8, kernel_size=(3, 3, 3)), nn.BatchNorm3d(8), nn.ReLU())
        self.conv2d_features = nn.Sequential(nn.Conv2d(8 * (num_bands - 2), 64, kernel_size=(3, 3)),
                                             nn.BatchNorm2d(64), nn.ReLU())
        self.token_wA = nn.Parameter(nn.init.xavier_normal_(torch.empty(1, num_tokens, 64)))
        self.token_wV = nn.Parameter(nn.init.xavier_normal_(torch.empty(1, 64, dim)))
        self.pos_embedding = nn.Parameter(nn.init.normal_(torch.empty(1, num_tokens + 1, dim), std=0.02))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)
        attention = {"heads": heads, "head_dim": dim // heads, "bias": True, "scale": dim ** -0.5}
        self.transformer = _Transformer(dim, depth, attention, mlp_dim, dropout)
        self.nn1 = nn.Linear(dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv3d_features(x)
        b, c, h, w, y = x.shape
        x = self.conv2d_features(x.reshape(b, c * h, w, y))  # 'b c h w y -> b (c h) w y'
        x = x.permute(0, 2, 3, 1).flatten(1, 2)  # 'b c h w -> b (h w) c'
        wa = self.token_wA.permute(0, 2, 1)  # 'b h w -> b w h'
        a = torch.einsum("bij,bjk->bik", x, wa).permute(0, 2, 1).softmax(dim=-1)
        vv = torch.einsum("bij,bjk->bik", x, self.token_wV)
        t = torch.einsum("bij,bjk->bik", a, vv)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), t), dim=1)
        x += self.pos_embedding
        x = self.transformer(self.dropout(x))
        return self.nn1(x[:, 0])


class AuthorsSpectralFormer(nn.Module):
    """ViT of danfenghong/IEEE_TGRS_SpectralFormer (mode CAF): input band tokens ``(B, C, band_patches P^2)``."""

    def __init__(self, num_bands: int, num_classes: int, patch_size: int, band_patches: int = 3, dim: int = 64,
                 depth: int = 5, heads: int = 4, head_dim: int = 16, mlp_dim: int = 8, dropout: float = 0.1,
                 emb_dropout: float = 0.1) -> None:
        super().__init__()
        self.pos_embedding = nn.Parameter(torch.randn(1, num_bands + 1, dim))
        self.patch_to_embedding = nn.Linear(patch_size ** 2 * band_patches, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)
        attention = {"heads": heads, "head_dim": head_dim, "bias": False, "scale": head_dim ** -0.5}
        self.transformer = _Transformer(dim, depth, attention, mlp_dim, dropout, fuse_channels=num_bands + 1)
        self.mlp_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_to_embedding(x)
        b, n, _ = x.shape
        x = torch.cat((self.cls_token.expand(b, -1, -1), x), dim=1)  # repeat '() n d -> b n d'
        x += self.pos_embedding[:, :n + 1]
        x = self.transformer(self.dropout(x))
        return self.mlp_head(x[:, 0])


def band_tokens(x: torch.Tensor, band_patches: int) -> torch.Tensor:
    """``demo.py``'s ``gain_neighborhood_band`` on patches ``(B, C, P, P)``: ``(B, C, band_patches P^2)``.

    Token ``b`` holds the ``P x P`` values of bands ``b-1, ..., b-n, b, b+1, ..., b+n``
    (``n = band_patches // 2``, indices wrapping around the band axis), each row-major.
    """
    n = band_patches // 2
    offsets = [-(i + 1) for i in range(n)] + [0] + [i + 1 for i in range(n)]
    return torch.cat([x.roll(-offset, dims=1).flatten(2) for offset in offsets], dim=2).contiguous()


# hsi's parameter names -> the authors' (regular expressions, applied in order)
_RENAMES = [
    (r"^conv3d\.", "conv3d_features."), (r"^conv2d\.", "conv2d_features."),
    (r"^token_wa$", "token_wA"), (r"^token_wv$", "token_wV"), (r"^classifier\.", "nn1."),
    (r"^embed\.", "patch_to_embedding."), (r"^fuse\.", "transformer.skipcat."), (r"^head\.", "mlp_head."),
    (r"^layers\.(\d+)\.norm1\.", r"transformer.layers.\1.0.fn.norm."),
    (r"^layers\.(\d+)\.attention\.qkv\.", r"transformer.layers.\1.0.fn.fn.to_qkv."),
    (r"^layers\.(\d+)\.attention\.out\.", r"transformer.layers.\1.0.fn.fn.to_out.0."),
    (r"^layers\.(\d+)\.norm2\.", r"transformer.layers.\1.1.fn.norm."),
    (r"^layers\.(\d+)\.mlp\.", r"transformer.layers.\1.1.fn.fn.net."),
]


def authors_state(hsi_state: dict) -> dict:
    """hsi's ``state_dict`` under the authors' parameter names."""
    renamed = {}
    for name, value in hsi_state.items():
        for pattern, repl in _RENAMES:
            name = re.sub(pattern, repl, name)
        renamed[name] = value
    return renamed


def build_pair(name: str, scene_bands: int, batch: int) -> dict:
    """hsi's model and the authors', from the same weights, with the batch each reads and the labels."""
    from hsi.data.patches import DEFAULT_PATCH_SIZE
    from hsi.models import build_model, channels_last_weights, recommended_patch_size, recommended_pca

    bands = recommended_pca(name, scene_bands) or scene_bands
    patch = recommended_patch_size(name, DEFAULT_PATCH_SIZE)
    torch.manual_seed(0)
    hsi_net = channels_last_weights(build_model(name, num_bands=bands, num_classes=CLASSES, patch_size=patch))
    x = torch.randn(batch, bands, patch, patch).contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, CLASSES, (batch,))
    if name == "ssftt":
        authors, authors_x = AuthorsSSFTT(bands, CLASSES), x.contiguous().unsqueeze(1)
    else:
        side = hsi_net.window_side()
        top = patch // 2 - side // 2
        authors = AuthorsSpectralFormer(bands, CLASSES, side, band_patches=hsi_net.band_groups.shape[1])
        authors_x = band_tokens(x[:, :, top:top + side, top:top + side], hsi_net.band_groups.shape[1])
    authors.load_state_dict(authors_state(hsi_net.state_dict()))  # strict: the same parameters
    return {"bands": bands, "patch": patch, "hsi": (hsi_net, x), "authors": (authors, authors_x), "y": y}


def trainable(net: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad)


def max_abs_diff(pair: dict) -> float:
    """Largest difference between the two models' eval-mode logits on the same batch (same weights)."""
    with torch.no_grad():
        logits = [net.eval()(x) for net, x in (pair["hsi"], pair["authors"])]
    return float((logits[0] - logits[1]).abs().max())


def step_ms(pair: dict, steps: int) -> dict:
    """Median milliseconds of forward + cross-entropy + backward + AdamW step, the two models taking turns."""
    runs = {}
    for key in ("hsi", "authors"):
        net, x = pair[key]
        runs[key] = (net.train(), x, torch.optim.AdamW(net.parameters(), lr=1e-3), [])
    for _ in range(steps + WARMUP):
        for net, x, opt, times in runs.values():
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), pair["y"]).backward()
            opt.step()
            times.append(time.perf_counter() - t0)
    return {key: 1e3 * statistics.median(times[WARMUP:]) for key, (_, _, _, times) in runs.items()}


def measure(models: list[str], scene_bands: int, batch: int, steps: int, transformer_steps: int,
            threads: int) -> list[dict]:
    """One row per model: sizes, parameter counts, logit difference, both step times and their ratio."""
    torch.set_num_threads(threads)
    rows = []
    for name in models:
        pair = build_pair(name, scene_bands, batch)
        diff = max_abs_diff(pair)
        n = steps if name == "ssftt" else transformer_steps
        ms = step_ms(pair, n)
        rows.append({"model": name, "bands": pair["bands"], "patch": pair["patch"], "classes": CLASSES,
                     "batch": batch, "threads": threads, "steps": n, "params_hsi": trainable(pair["hsi"][0]),
                     "params_authors": trainable(pair["authors"][0]), "max_abs_diff": diff,
                     "hsi_ms": ms["hsi"], "authors_ms": ms["authors"], "ratio": ms["authors"] / ms["hsi"]})
    return rows


def _print(rows: list[dict]) -> None:
    r0 = rows[0]
    print(f"{r0['threads']} thread(s), batch {r0['batch']}: ms per training step (forward, cross-entropy, backward, "
          "AdamW step), median of the steps after 2 warm-ups")
    print(f"  {'model':<21s} {'C':>3s} {'P':>2s} {'params hsi/authors':>19s} {'max|diff|':>9s} {'steps':>5s} "
          f"{'hsi':>8s} {'authors':>8s}  authors/hsi")
    for r in rows:
        params = f"{r['params_hsi']:,}/{r['params_authors']:,}"
        print(f"  {r['model']:<21s} {r['bands']:>3d} {r['patch']:>2d} {params:>19s} {r['max_abs_diff']:9.1e} "
              f"{r['steps']:>5d} {r['hsi_ms']:8.1f} {r['authors_ms']:8.1f}  {r['ratio']:.2f}x")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS,
                        help="models to compare (default: all)")
    parser.add_argument("--scene-bands", type=int, default=200,
                        help="raw bands of the scene (200, Indian Pines'); the recommended PCA applies")
    parser.add_argument("--batch", type=int, default=64, help="batch size (hsi train's default: 64)")
    parser.add_argument("--steps", type=int, default=40, help="timed steps per model (ssftt)")
    parser.add_argument("--transformer-steps", type=int, default=3, help="timed steps per model (spectralformer)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    args = parser.parse_args(argv)
    if min(args.batch, args.steps, args.transformer_steps, args.threads) < 1 or args.scene_bands < 3:
        parser.error("--batch, --steps, --transformer-steps and --threads must be >= 1, --scene-bands >= 3")
    warnings.filterwarnings("ignore")
    rows = measure(args.models, args.scene_bands, args.batch, args.steps, args.transformer_steps, args.threads)
    if args.json:
        from _machine import machine_facts

        print(json.dumps({"machine": machine_facts(),
                          "rows": [{k: (round(v, 4) if isinstance(v, float) and k != "max_abs_diff" else v)
                                    for k, v in r.items()} for r in rows]}))
    else:
        _print(rows)
    return rows


if __name__ == "__main__":
    main()
