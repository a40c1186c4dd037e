"""Check a data pipeline: five checks, each PASS, FAIL or UNDECIDED with its evidence and a PNG in --out.

Examples:
  hsi doctor --scene synthetic --out doctor/
  hsi doctor --cube my.hdr --labels gt.mat --labels-key gt --pca 30 --out doctor/
  hsi doctor --scene samson --root data/samson --model fcn --checks batches spectra

Checks: batches (one batch per split: shape, dtype, range; the file's units), spectra
(band order of the file: smooth spectra and a red edge where the wavelengths put it; of
the pipeline: training patches, augmentation off, equal to the scene re-read), overfit (labels equal to the map at the
patch centres, registered with the cube, learned from a fixed 64-patch batch far faster
than permuted labels), normalization (preprocessing fitted on the training pixels, test
range under it), inference (tiled vs untiled prediction on a crop). A check is UNDECIDED when
it found nothing wrong but its evidence could not settle something (e.g. whether a square label
map is transposed, in a small scene); it says what. It takes the same data options as hsi train,
and the recommended patch size and PCA of the model training will use (--model, default hsi
train's) as hsi train applies them. Exit status: 0 no
FAIL (UNDECIDED checks are listed), 1 any FAIL, 2 a usage or data error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "check a data pipeline (batches, spectra, overfit, normalization, tiled inference): PASS/FAIL + figures"

#: the network of the overfit and inference checks without --model: a plain CNN memorises true labels far faster
#: than permuted ones, where the default model's context path learns both about as fast on a small scene
PROBE_MODEL = "cnn2d"

def _data_specs():
    """The data options, from the checked-in table (no torch import; :mod:`hsi.cli.table`)."""
    from hsi.cli.table import table_specs

    return table_specs("doctor.data")


def FLAGS() -> dict[str, str]:  # noqa: N802 - read by hsi.cli.run_command
    """Python argument name -> flag, for error messages."""
    return {**{spec.param: spec.flag for spec in _data_specs()}, "model": "--model", "checks": "--checks"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The data options of ``hsi train``, plus ``--out``, ``--model`` and ``--checks``."""
    from hsi.cli.names import model_names
    from hsi.cli.options import add_options
    from hsi.cli.table import table_constant

    checks, models = table_constant("doctor_checks"), model_names()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = __doc__.split("\n\nChecks")[0]
    parser.epilog = "Checks" + __doc__.split("\n\nChecks", 1)[1]
    parser.add_argument("--config", type=Path, default=argparse.SUPPRESS,
                        help="YAML file of data options, as for hsi train (names with _ or -); the command line wins")
    parser.add_argument("--out", type=Path, default=Path("doctor"), help="folder of the PNG figures (default: doctor)")
    parser.add_argument("--model", default=None, choices=models,
                        help="the model training will use: its recommended patch size and PCA apply as in hsi train, "
                             f"and it is the network of the overfit and inference checks (default: hsi train's "
                             f"default model for the data, {PROBE_MODEL} as the checks' network)")
    parser.add_argument("--checks", nargs="+", default=checks, choices=checks, metavar="CHECK",
                        help="checks to run, in order (default: all: " + " ".join(checks) + ")")
    add_options(parser.add_argument_group("data (HSIDataModule, as hsi train)"), _data_specs())


def make_datamodule(args: argparse.Namespace):
    """The :class:`HSIDataModule` of the parsed data options over those of ``--config`` (defaults elsewhere).

    The options not given are resolved as ``hsi train`` resolves them for ``--model`` (without it,
    for ``hsi train``'s default model), by the same function (:func:`hsi.training.run.backend_for`
    ``(model).recommend``): the model registry's patch size and PCA, so the doctor checks the
    patches training will read.
    """
    specs = {s.name: s for s in _data_specs()}
    given = checked_data(args, specs)
    from hsi.data import HSIDataModule
    from hsi.training.run import backend_for

    data = {specs[name].param: value for name, value in given.items()}
    backend = backend_for(args.model or trained_by_default())
    datamodule = HSIDataModule(**backend.recommend(data))
    backend.announce()  # the recommendations applied, once the options they join are checked
    return datamodule


def trained_by_default() -> str:
    """The model ``hsi train`` trains without ``--model`` (from the option table: no torch import)."""
    from hsi.cli.table import table_specs

    return next(spec.default for spec in table_specs("train.model") if spec.param == "model")


def checked_data(args: argparse.Namespace, specs: dict[str, Any]) -> dict[str, Any]:
    """The given data options (``--config`` underneath the command line), checked before torch is imported: each
    value's declared rule, their combinations and the input files (:mod:`hsi.cli.early`)."""
    from hsi.cli.early import check_data, check_files, given_values

    given, from_config = given_values(args, specs)
    check_data(list(specs.values()), given)
    check_files(given, specs, from_config, getattr(args, "config", None))
    return given


def run(args: argparse.Namespace) -> int:
    """Run the checks (on every scene of a collection, one after the other), print each result as it ends; 1 when any fails."""
    datamodule = make_datamodule(args)  # options and files checked before the doctor's imports (torch)
    from hsi.doctor import default_model_factory, run_checks

    def show(result) -> None:
        print(result.format(), flush=True)

    failed: list[str] = []
    undecided: list[str] = []
    total = 0
    for name, scene_dm, out in _scenes_to_check(datamodule, args.out):
        if name is not None:
            print(f"\nscene {name}:", flush=True)
        results = run_checks(scene_dm, out, default_model_factory(args.model or PROBE_MODEL), args.checks, on_result=show)
        total += len(results)
        failed += [r.name if name is None else f"{name}/{r.name}" for r in results if r.status == "FAIL"]
        undecided += [r.name if name is None else f"{name}/{r.name}" for r in results if r.status == "UNDECIDED"]
    if len(datamodule.collection.entries) > 1:  # the scenes together
        from hsi.doctor.scenes import check_scene_shift

        datamodule.setup("fit")
        result = check_scene_shift(datamodule)
        print("\ncollection:\n" + result.format(), flush=True)
        total += 1
        failed += [] if result.passed else ["scenes"]
    print(f"\n{total - len(failed) - len(undecided)} of {total} checks passed"
          + (f"; UNDECIDED: {', '.join(undecided)}" if undecided else "")
          + (f"; FAILED: {', '.join(failed)}" if failed else "") + f"; figures in {args.out}")
    return 1 if failed else 0


def _scenes_to_check(datamodule: Any, out: Path) -> list[tuple[str | None, Any, Path]]:
    """``(name, DataModule, figure folder)`` of each scene to check: the one scene, or every scene of a collection.

    The doctor's checks read one cube and one split, so a collection's scenes are checked one
    by one, each with the collection's data options and its own block split.

    Raises
    ------
    OptionError
        A scene held in a pack file (its cube is inside the pack: check the files it was packed from).
    """
    if datamodule.hparams["scenes"] is None:
        return [(None, datamodule, out)]
    from hsi.data import HSIDataModule
    from hsi.errors import OptionError

    collection = datamodule.collection
    shared = {k: v for k, v in datamodule.hparams.items() if k not in _SOURCE_ARGUMENTS}
    shared["split"] = "block"  # each scene on its own: a held-out-scene split has nothing to hold out
    checked = []
    for entry in collection.entries:
        named = entry.datamodule_arguments()
        if not named:
            raise OptionError("scenes", entry.name, "scenes with their own files for hsi doctor; this one lives in the "
                              f"pack {entry.pack}: check the files it was packed from")
        checked.append((entry.name, HSIDataModule(**shared, **named), out / entry.name))
    return checked


#: the DataModule arguments that name a scene, replaced by each collection entry's
_SOURCE_ARGUMENTS = ("scenes", "scene", "root", "scene_options", "cube_path", "labels_path", "cube_key",
                     "labels_key", "layout", "test_labels_path", "test_labels_key")


def main(argv: list[str] | None = None) -> int:
    """``hsi doctor ...`` (what ``scripts/check_loader.py`` runs)."""
    from hsi.cli import script_main

    return script_main("doctor", argv)


if __name__ == "__main__":
    sys.exit(main())
