"""Classify every pixel of a scene with a trained checkpoint: a whole-scene map.

Examples:
  hsi infer --checkpoint runs/<run>/best.ckpt --out maps/run     # the scene the checkpoint was trained on
  hsi infer --checkpoint runs/<run>/best.ckpt --scene indian_pines --out maps/ip
  hsi infer --checkpoint best.ckpt --cube big_scene.h5 --out maps/big --tile 512 --probabilities
  hsi infer --checkpoint best.ckpt --cube scene.hdr --labels gt.mat --out maps/s --mask-unlabeled
  hsi infer --checkpoint runs/<svm run>/model.npz --scene indian_pines --out maps/ip-svm
  hsi infer --checkpoint best.ckpt --cube enmap.tif --out maps/e --format gtiff   # GeoTIFF maps only, no PNG
  hsi infer --checkpoint runs/<run>/best.ckpt --scenes scenes.yaml --out maps/   # maps/<name>/ + summary.md

Writes into --out, as --format chooses (default all four): npy (labels.npy, confidence.npy),
envi (an ENVI classification file that opens in ENVI and QGIS with class names, colours and
map info), gtiff (labels.tif, a Cloud-Optimized GeoTIFF with colour table and class names, and
confidence.tif, both with the cube's CRS and transform), png (the map with a legend, a
false-colour composite and the confidence, as previews); with ground truth, metrics.json; and
inference.json. The --format choices are the registered output formats (hsi.sinks); the
tiling, blending, device and format flags are generated from hsi.infer.InferOptions.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any, Literal

from hsi.cli.options import OptionSpec, add_options
from hsi.io.layout import LAYOUTS

HELP = "classify every pixel of a scene with a checkpoint; writes maps (in each --format), metrics"


def _infer_specs() -> list[OptionSpec]:
    """The fields of ``InferOptions``, from the checked-in table (no torch import; :mod:`hsi.cli.table`); the choices
    of ``format`` from the sink registry's names (:func:`hsi.cli.names.output_formats`)."""
    from dataclasses import replace

    from hsi.cli.names import output_formats
    from hsi.cli.table import table_specs

    names = tuple(output_formats())
    return [replace(spec, annotation=tuple[Literal[names], ...], help=f"{spec.help} Choices: {', '.join(names)}.")
            if spec.param == "format" else spec for spec in table_specs("infer.options")]


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    flags = {spec.param: spec.flag for spec in _infer_specs()}
    flags.update({"cube": "--cube", "scenes": "--scenes", "labels": "--labels", "out": "--out", "checkpoint": "--checkpoint",
                  "ignore_georef": "--ignore-georef", "classes": "--classes", "units": "--units", "scale": "--scale"})
    return flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The scene, the checkpoint, the output folder and every field of ``InferOptions``."""
    from hsi.cli.names import file_formats_text
    from hsi.cli.table import table_constant

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__.split("\n\nWrites")[0]
    source = parser.add_argument_group("scene")
    source.add_argument("--checkpoint", required=True,
                        help="what hsi train wrote: best.ckpt, or model.npz of an svm/rf run")
    where = source.add_mutually_exclusive_group()
    where.add_argument("--scene", help="registry scene (its labels are the ground truth); default, with no "
                       "--cube either: the checkpoint's own scene (registry scene, or cube and label files)")
    where.add_argument("--cube", nargs="+", help=f"cube file ({file_formats_text()}); read window by "
                       "window; several: each mapped into OUT/<file stem>/ with a summary table (hsi.infer.infer)")
    where.add_argument("--scenes", help="a collection (YAML file or pack .h5, as hsi train --scenes): each scene "
                       "mapped into OUT/<name>/, scored where it has labels, with a summary table; scenes shared out "
                       "over the ranks of torchrun / SLURM, completed ones skipped on a re-run")
    source.add_argument("--root", default=None, help="folder of the registry scene's files")
    source.add_argument("--cube-key", default=None, help="variable or dataset name of the cube (default: discovered)")
    source.add_argument("--layout", default=None, choices=LAYOUTS,
                        help="axis order of the stored cube (default: decided from wavelengths and shape)")
    source.add_argument("--labels", default=None, help="ground-truth map for metrics and --mask-unlabeled")
    source.add_argument("--labels-key", default=None, help="variable or dataset name of --labels")
    source.add_argument("--classes", nargs="+", default=None, metavar="THEIRS=OURS",
                        help="rename the ground truth's classes onto the checkpoint's before they are matched by name "
                        "(class_1=Tree Rock=Soil; a label file without names calls its classes class_<id>)")
    source.add_argument("--units", default=None, choices=table_constant("unit_kinds"),
                        help="what the cube file's values are, overriding its declaration (default: the file's; "
                        "without --cube and --scene, what training was given)")
    source.add_argument("--scale", type=float, default=None,
                        help="divide the cube file's values by this on reading (e.g. 10000; default: the file's "
                        "own factor; without --cube and --scene, what training was given)")
    source.add_argument("--ignore-georef", action="store_true", default=None,
                        help="read the cube and labels without their georeference (a broken one is then not "
                        "refused; the maps carry no map coordinates)")
    source.add_argument("--out", required=True, help="output folder (refused if it holds an earlier map, "
                        "unless --overwrite)")
    add_options(parser.add_argument_group("inference (hsi.infer.InferOptions)"), _infer_specs())


#: what each part of the map's metrics scores, as the summary names it (metrics.json keeps the keys)
SCORED = {"test": "test pixels (the checkpoint's split)",
          "labeled": "all labelled pixels (training pixels included)"}


def _summary(result: Any) -> str:
    """The files written, the no-data count, the scores (each line saying which pixels it covers) and the time."""
    lines = [f"{name}: {path}" for name, path in sorted(result.files.items())]
    if result.bands_note:
        lines.insert(0, f"bands: {result.bands_note}")
    if result.nodata_pixels:
        total = result.labels.size if result.labels is not None else 0
        share = f" ({100 * result.nodata_pixels / total:.2f} %)" if total else ""
        lines.append(f"no-data: {result.nodata_pixels} pixel(s){share} left unclassified (label 0, confidence 0)")
    if result.metrics:
        own = result.metrics.get("own_scene", True)
        if result.metrics.get("classes"):
            lines.append(result.metrics["classes"]["note"])
        for part, scores in result.metrics.items():
            if isinstance(scores, dict) and "oa" in scores:
                what = SCORED.get(part, part) if own or part != "labeled" else "all labelled pixels"
                if scores["oa"] is None:
                    lines.append(f"{what}: {scores['pixels']} pixels, OA, AA and kappa n/a: {scores.get('oa_reason')}")
                    continue
                lines.append(f"{what}: {scores['pixels']} pixels, OA {100 * scores['oa']:.2f}%  "
                             f"AA {100 * scores['aa']:.2f}%  kappa {scores['kappa']:.4f}")
        if result.metrics.get("test") is None:
            lines.append(f"test pixels: none scored ({result.metrics.get('test_note', 'the checkpoint has no split')})")
    if result.timings.get("total"):
        lines.append(f"{result.timings['total']:.1f} s")
    return "\n".join(lines)


def check_arguments(args: argparse.Namespace) -> None:
    """Before torch is imported: each ``InferOptions`` value's declared rule and their combinations, the checkpoint
    and every input file (:mod:`hsi.cli.early`)."""
    from hsi._checks import parse_class_mapping
    from hsi._combinations import infer_combinations
    from hsi._paths import check_checkpoint_file, check_input_file
    from hsi.errors import OptionError
    from hsi.cli.options import check_values
    from hsi.cli.names import output_formats, probability_formats

    specs = _infer_specs()
    given = {s.name: getattr(args, s.name) for s in specs if hasattr(args, s.name)}
    check_values(specs, given)
    infer_combinations({s.param: given.get(s.name, s.default) for s in specs}, tuple(output_formats()),
                       tuple(probability_formats()))
    parse_class_mapping(args.classes, "classes")
    if args.scale is not None and not (math.isfinite(args.scale) and args.scale > 0):
        raise OptionError("scale", args.scale, "a positive number the cube's values are divided by")
    check_checkpoint_file(args.checkpoint, "--checkpoint")
    for flag, paths in (("--cube", args.cube or ()), ("--labels", [args.labels] if args.labels else ()),
                        ("--scenes", [args.scenes] if args.scenes else ())):
        for path in paths:
            check_input_file(path, flag)
    if args.scene is not None:
        check_scene_files(args.scene, args.root)


def check_scene_files(name: str, root: str | None) -> None:
    """A registry scene's name and files, before torch is imported: an unknown name, or files not in the root,
    end in one line (what ``hsi scenes NAME`` lists; ``hsi infer`` downloads nothing).

    Raises
    ------
    UnknownSceneError, DatasetNotFoundError
    """
    from hsi.errors import DatasetNotFoundError
    from hsi.scenes.files import locate, not_found, resolve_root
    from hsi.scenes.registry import get_scene_spec

    spec = get_scene_spec(name)
    base = resolve_root(root)
    missing = [f for f in spec.files if locate(base, spec.name, f.names) is None]
    if missing:
        err = not_found(spec.name, base, missing, f"hsi infer downloads nothing; hsi train --scene {spec.name} "
                        "--download fetches them")
        raise DatasetNotFoundError(err.command_line) from None


def many_scenes(args: argparse.Namespace) -> bool:
    """Whether the command maps several scenes (``--scenes``, or more than one ``--cube``)."""
    return args.scenes is not None or bool(args.cube and len(args.cube) > 1)


def ranks_repeat(args: argparse.Namespace) -> bool:  # read by hsi.cli.run_command
    """Whether ranks other than 0 repeat rank 0's work: not when several scenes are dealt out over them (one device
    each), where each rank's warnings are about scenes only it reads."""
    return not many_scenes(args) or int(getattr(args, "devices", None) or 1) > 1


def run(args: argparse.Namespace) -> int:
    """Run the inference (:func:`hsi.infer.infer`, one scene or several) and print what was written."""
    check_arguments(args)
    from hsi.infer import InferOptions, infer

    names = {spec.name for spec in _infer_specs()}
    options = InferOptions(**{k: v for k, v in vars(args).items() if k in names})
    cube = args.cube[0] if args.cube and len(args.cube) == 1 else args.cube  # one --cube: one scene, maps in --out
    done = infer(args.checkpoint, cube, scenes=args.scenes, scene=args.scene, root=args.root, cube_key=args.cube_key,
                 layout=args.layout, labels=args.labels, labels_key=args.labels_key, out=args.out, options=options,
                 ignore_georef=args.ignore_georef, classes=args.classes, units=args.units, scale=args.scale)
    if isinstance(done, dict):  # several scenes: this rank's share
        print(_summary_many(done))
    elif done.rank == 0:
        print(_summary(done))
    return 0


def _summary_many(done: dict[str, Any]) -> str:
    """This rank's scenes of several (``--cube A B C`` or ``--scenes FILE``): mapped, skipped as complete, and the
    summary table when this process wrote it."""
    skipped = "; skipped (complete) " + ", ".join(done["skipped"]) if done["skipped"] else ""
    lines = [f"rank {done['rank']} of {done['world_size']}: mapped {', '.join(done['mapped']) or 'none'}{skipped}"]
    if done["summary"] is not None:
        lines.append(f"summary: {done['summary']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``hsi infer ...`` (what ``scripts/infer_full.py`` runs)."""
    from hsi.cli import script_main

    return script_main("infer", argv)


if __name__ == "__main__":
    sys.exit(main())
