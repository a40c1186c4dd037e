"""Quiet runs (no Lightning banners, tips or deprecation warnings unless --verbose) and progress that suits a pipe."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import scipy.io

from hsi._progress import LineProgress, progress_bar
from hsi.cli import main

#: the brief's tiny run, without --no-progress (progress is what is tested)
TINY_RUN = ["train", "--scene", "synthetic", "--scene-options", "height=24", "width=24", "bands=8", "n_classes=3",
            "seed=1", "--model", "spectral1d", "--block-size", "6"]
NOISE = ("GPU available", "TPU available", "Tip", "litlogger", "LeafSpec", "deprecated", "`Trainer.fit` stopped",
         "logging interval")


def test_default_run_is_quiet_and_prints_one_line_per_epoch_when_piped(tmp_path, hsi_subprocess):
    proc = hsi_subprocess([*TINY_RUN, "--epochs", "3", "--out", str(tmp_path / "run")], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not [word for word in NOISE if word in proc.stderr], proc.stderr
    assert "spectral1d reads 1x1 patches" in proc.stderr  # the package's own lines stay
    epochs = [line for line in proc.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epochs] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    assert "\r" not in proc.stderr + proc.stdout  # no redrawn bar in a pipe
    assert len(proc.stderr.encode()) < 5000 and len(proc.stdout.encode()) < 5000


def test_verbose_shows_lightning(tmp_path, hsi_subprocess):
    proc = hsi_subprocess([*TINY_RUN, "--epochs", "1", "--no-progress", "--verbose", "--out", str(tmp_path / "r")],
                          tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "GPU available" in proc.stderr
    assert not [line for line in proc.stderr.splitlines() if line.startswith("epoch ")]  # --no-progress


@pytest.mark.parametrize("command", ["train", "infer", "doctor"])
def test_verbose_is_an_option_of_the_lightning_commands(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--verbose" in capsys.readouterr().out


def test_line_progress_prints_one_line_per_tenth():
    stream = io.StringIO()
    bar = LineProgress(200, "tiles", "tile", stream=stream)
    for _ in range(200):
        bar.update(1)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("tiles: 100%") and "200/200" in lines[-1]


def test_progress_bar_is_tqdm_on_a_terminal_and_lines_in_a_pipe():
    from tqdm import tqdm

    assert isinstance(progress_bar(5, "x", terminal=True), tqdm)
    assert isinstance(progress_bar(5, "x", terminal=False), LineProgress)
    hidden = progress_bar(5, "x", show=False, terminal=False)
    assert isinstance(hidden, tqdm) and hidden.disable


@pytest.fixture
def mat_cube(tmp_path):
    path = tmp_path / "scene.mat"
    scipy.io.savemat(path, {"data": np.random.default_rng(0).random((70, 45, 9)).astype(np.float32)})
    return path


@pytest.mark.parametrize("flag", ["--progress", "--no-progress"])
def test_convert_progress_is_a_tqdm_bar_of_rows_or_nothing(mat_cube, tmp_path, capsys, flag):
    assert main(["convert", str(mat_cube), "--to", "h5", str(tmp_path / "out.h5"), "--key", "data", flag]) == 0
    err = capsys.readouterr().err
    if flag == "--progress":
        assert "rows written: 100%" in err and "70/70" in err, err
    else:
        assert err == ""


def test_cache_build_progress_only_for_large_builds(capsys):
    from hsi.data.cache import PROGRESS_BYTES, _build_progress

    with _build_progress(PROGRESS_BYTES // 2) as bar:
        bar.update(PROGRESS_BYTES >> 21)
    assert capsys.readouterr().err == ""
    with _build_progress(4 * PROGRESS_BYTES) as bar:
        bar.update(4 * PROGRESS_BYTES >> 20)
    assert "building patch cache: 100%" in capsys.readouterr().err


def test_quiet_lightning_keeps_warnings_and_verbose_changes_nothing(monkeypatch):
    import logging
    import warnings

    from hsi._quiet import LIGHTNING_LOGGERS, quiet_lightning

    logger = logging.getLogger(LIGHTNING_LOGGERS[0])
    monkeypatch.setattr(logger, "level", logging.INFO)
    with warnings.catch_warnings():
        quiet_lightning(verbose=True)
        assert logger.level == logging.INFO
        quiet_lightning()
        assert logger.level == logging.WARNING
        assert not logger.isEnabledFor(logging.INFO) and logger.isEnabledFor(logging.WARNING)


def test_package_warnings_are_one_line_on_the_console(tmp_path, hsi_subprocess):
    import h5py

    cube = np.random.default_rng(0).random((6, 5, 4)).astype(np.float32)
    cube[1, 2, 3] = np.nan  # read_cube warns (DataQualityWarning) about the non-finite value
    with h5py.File(tmp_path / "nan.h5", "w") as handle:
        handle.create_dataset("cube", data=cube).attrs["layout"] = "HWC"
    proc = hsi_subprocess(["inspect", str(tmp_path / "nan.h5")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "NaN" in line]
    assert lines and all(line.startswith("warning: ") for line in lines), proc.stderr
    assert "hsi/io" not in proc.stderr and "warnings.warn" not in proc.stderr  # no file, line or source of hsi's


# ---------------------------------------------------------------- DDP ranks, resumed runs, repeated warnings
DDP = ["--accelerator", "cpu", "--devices", "2", "--strategy", "ddp"]
#: Lightning's lines of a DDP start (every rank's, then rank 0's banner)
DDP_LINES = ("Initializing distributed", "distributed_backend=", "All distributed processes registered")
#: Lightning's warnings on resuming (hsi's staging folder always differs from the checkpoint's; a mid-epoch save)
RESUME_WARNINGS = ("The dirpath has changed", "resuming from a checkpoint that ended before the epoch ended")
#: what the ENVI reader says of a header whose two CRS fields disagree (Samson's does)
CRS_WARNING = "describes another CRS than 'map info'"
UTM_10N_OTHER = ('PROJCS["UTM_Zone_10N",GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,'
                 '298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]],PROJECTION['
                 '"Transverse_Mercator"],PARAMETER["False_Easting",50000.0],PARAMETER["False_Northing",0.0],'
                 'PARAMETER["Central_Meridian",-123.0],PARAMETER["Scale_Factor",0.9996],PARAMETER['
                 '"Latitude_Of_Origin",0.0],UNIT["Meter",1.0]]')


@pytest.fixture(scope="module")
def envi_scene(tmp_path_factory):
    """The tiny synthetic scene as an ENVI cube whose header warns (Samson's two CRS fields) and a .mat map."""
    from hsi.scenes import make_synthetic_scene

    folder = tmp_path_factory.mktemp("envi_scene")
    scene = make_synthetic_scene(height=24, width=24, bands=8, n_classes=3, seed=1)
    np.moveaxis(np.asarray(scene.cube.data, dtype=np.float32), -1, 0).tofile(folder / "cube.img")  # BSQ
    scipy.io.savemat(folder / "gt.mat", {"gt": scene.labels.astype(np.uint8)})
    (folder / "cube.hdr").write_text(
        "ENVI\nsamples = 24\nlines = 24\nbands = 8\nheader offset = 0\nfile type = ENVI Standard\ndata type = 4\n"
        "interleave = bsq\nbyte order = 0\nmap info = {UTM, 1.000, 1.000, 612730.910, 4074488.708, 1.0, 1.0, 10, "
        f"North, WGS-84, units=Meters}}\ncoordinate system string = {{{UTM_10N_OTHER}}}\n")
    return ["--cube", str(folder / "cube.hdr"), "--labels", str(folder / "gt.mat"), "--labels-key", "gt",
            "--model", "spectral1d", "--block-size", "6", "--no-progress"]


def _run_ddp(args, cwd, hsi_subprocess):
    """``hsi ARGS`` on two CPU ranks; a port taken by a concurrent run is retried once."""
    for _ in range(2):
        proc = hsi_subprocess(args, cwd)
        if proc.returncode == 0 or "address already in use" not in proc.stderr.lower():
            break
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.mark.slow
def test_ddp_ranks_and_a_resumed_run_are_quiet_and_warn_once(envi_scene, tmp_path, hsi_subprocess):
    loud = _run_ddp(["train", *envi_scene, "--epochs", "1", *DDP, "--out", "r1", "--verbose"], tmp_path, hsi_subprocess)
    assert "Initializing distributed: GLOBAL_RANK: 1" in loud.stderr  # the lines exist; --verbose shows them
    quiet = _run_ddp(["train", "--resume", "r1/last.ckpt", "--epochs", "2", *DDP, "--num-workers", "1",
                      "--out", "r2"], tmp_path, hsi_subprocess)
    assert not [text for text in DDP_LINES + RESUME_WARNINGS if text in quiet.stderr], quiet.stderr
    assert quiet.stderr.count(CRS_WARNING) == 1, quiet.stderr  # two ranks, a worker and re-reads: said once
    assert json.loads((tmp_path / "r2" / "metrics.json").read_text())["oa"] > 0


@pytest.mark.shared
@pytest.mark.slow
def test_samson_on_two_ranks_warns_once(shared_data, tmp_path, hsi_subprocess):
    proc = _run_ddp(["train", "--scene", "samson", "--root", str(shared_data / "envi" / "samson"), "--model",
                     "spectral1d", "--epochs", "1", "--no-progress", *DDP, "--num-workers", "1", "--out", "s"],
                    tmp_path, hsi_subprocess)
    assert proc.stderr.count(CRS_WARNING) == 1, proc.stderr
    assert proc.stderr.count("spectral1d reads 1x1 patches") == 1, proc.stderr  # rank 1 repeats no line of rank 0's
    assert not [text for text in DDP_LINES if text in proc.stderr], proc.stderr


@pytest.mark.parametrize("text", [
    "The dirpath has changed from '/a/.r1.staging-1' to '/a/.r2.staging-2', therefore `best_model_score`, ...",
    "You're resuming from a checkpoint that ended before the epoch ended and your dataloader is not resumable.",
    "Grad strides do not match bucket view strides. This may indicate grad was not created according to the "
    "gradient layout contract, or that the param's strides changed since DDP was constructed.",
])
def test_lightnings_resume_warnings_are_hidden_unless_verbose(text):
    import warnings

    from hsi._quiet import quiet_lightning

    for verbose, shown in ((True, 1), (False, 0)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            quiet_lightning(verbose=verbose)
            warnings.warn(text, UserWarning, stacklevel=1)
        assert len(caught) == shown, verbose


def test_ranks_other_than_zero_say_nothing_but_errors(monkeypatch):
    import logging
    import warnings

    from hsi._distributed import is_rank_zero
    from hsi._quiet import quiet_lightning
    from hsi.errors import DataQualityWarning

    for name in ("RANK", "LOCAL_RANK", "NODE_RANK", "SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert is_rank_zero()
    monkeypatch.setenv("SLURM_PROCID", "3")
    assert is_rank_zero()  # SLURM's one task is the only process
    monkeypatch.setenv("SLURM_NTASKS", "4")
    assert not is_rank_zero()
    monkeypatch.delenv("SLURM_PROCID")
    monkeypatch.setenv("LOCAL_RANK", "1")  # as Lightning starts the second rank
    assert not is_rank_zero()
    hsi_logger = logging.getLogger("hsi")
    monkeypatch.setattr(hsi_logger, "level", logging.NOTSET)
    with warnings.catch_warnings(record=True) as caught:
        quiet_lightning()
        warnings.warn("cube.hdr: something", DataQualityWarning, stacklevel=1)
    assert caught == [] and not logging.getLogger("hsi.training").isEnabledFor(logging.WARNING)
    assert logging.getLogger("hsi.training").isEnabledFor(logging.ERROR)


def test_ranks_with_scenes_of_their_own_keep_their_warnings(monkeypatch):
    """Many-scene inference deals scenes out over the ranks: a warning about rank 1's scene only rank 1 can give."""
    import logging
    import warnings

    from hsi.cli import build_parser
    from hsi.cli.infer import ranks_repeat
    from hsi._quiet import quiet_lightning
    from hsi.errors import DataQualityWarning

    def parsed(*extra):
        return build_parser("infer").parse_args(["infer", "--checkpoint", "c.ckpt", "--out", "o", *extra])

    assert not ranks_repeat(parsed("--cube", "a.h5", "b.h5")) and not ranks_repeat(parsed("--scenes", "s.yaml"))
    assert ranks_repeat(parsed("--cube", "a.h5")) and ranks_repeat(parsed("--cube", "a.h5", "b.h5", "--devices", "2"))
    monkeypatch.setenv("RANK", "1")
    hsi_logger = logging.getLogger("hsi")
    monkeypatch.setattr(hsi_logger, "level", logging.NOTSET)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_lightning(ranks_repeat=False)
        warnings.warn("north.hdr: something", DataQualityWarning, stacklevel=1)
    assert len(caught) == 1 and logging.getLogger("hsi.infer").isEnabledFor(logging.WARNING)


def test_a_warning_is_shown_once_however_often_the_registry_is_reset():
    import warnings

    from hsi._quiet import _show_once
    from hsi.errors import DataQualityWarning

    shown = []
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = lambda message, *rest, **kw: shown.append(str(message))
        _show_once()
        for text in ("cube.hdr: odd  header", "cube.hdr: odd header", "other.hdr: odd header"):
            with warnings.catch_warnings():  # what the readers do; Python's own registry forgets on each
                warnings.simplefilter("ignore", ResourceWarning)
            warnings.warn(text, DataQualityWarning, stacklevel=1)
        warnings.warn("cube.hdr: odd header", UserWarning, stacklevel=1)  # another category: its own warning
    assert shown == ["cube.hdr: odd  header", "other.hdr: odd header", "cube.hdr: odd header"]
