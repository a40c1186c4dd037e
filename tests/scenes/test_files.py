"""Root resolution, missing files, and downloads (local file:// URLs: atomic and verified)."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from hsi.errors import DatasetNotFoundError, IntegrityError
from hsi.scenes import load_scene, register_scene, resolve_root, unregister_scene
from hsi.scenes.benchmark import SCENES
from hsi.scenes.files import DOC, RemoteFile, ensure_files, fetch, locate


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_root_argument_then_env_var_then_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("HSI_DATA_DIR", str(tmp_path / "env"))
    assert resolve_root(tmp_path / "arg") == tmp_path / "arg"
    assert resolve_root() == tmp_path / "env"
    monkeypatch.delenv("HSI_DATA_DIR")
    assert resolve_root() == Path("~/.cache/hsi").expanduser()


def test_env_var_is_used_by_load_scene(monkeypatch, tmp_path):
    monkeypatch.setenv("HSI_DATA_DIR", str(tmp_path))
    with pytest.raises(DatasetNotFoundError, match=str(tmp_path / "pavia_university")):
        load_scene("pavia_university")


def test_locate_prefers_scene_folder_then_flat_root(tmp_path):
    (tmp_path / "x.mat").write_bytes(b"flat")
    assert locate(tmp_path, "scene", ["x.mat"]) == tmp_path / "x.mat"
    (tmp_path / "scene").mkdir()
    (tmp_path / "scene" / "x.mat").write_bytes(b"nested")
    assert locate(tmp_path, "scene", ["x.mat"]) == tmp_path / "scene" / "x.mat"
    assert locate(tmp_path, "scene", ["y.mat"]) is None


def test_missing_files_name_files_folder_urls_and_readme(tmp_path):
    root = tmp_path / "nothing_here"
    with pytest.raises(DatasetNotFoundError) as info:
        load_scene("indian_pines", root=root)
    msg = str(info.value)
    assert "Indian_pines_corrected.mat" in msg and "Indian_pines_gt.mat" in msg
    assert str(root / "indian_pines") in msg
    assert "http://www.ehu.eus/ccwintco/uploads/6/67/Indian_pines_corrected.mat" in msg
    assert DOC in msg and "download=True" in msg
    assert isinstance(info.value, FileNotFoundError)
    assert not root.exists()  # nothing is written unless downloading


@pytest.mark.parametrize(
    "name",
    ["indian_pines", "salinas", "salinas_a", "pavia_university", "pavia_centre", "ksc", "botswana",
     "samson", "jasper_ridge", "urban"],
)
def test_every_file_scene_says_what_to_place_where(tmp_path, name):
    from hsi.scenes import get_scene_spec

    root = tmp_path / "nothing_here"
    with pytest.raises(DatasetNotFoundError) as info:
        load_scene(name, root=root)
    msg = str(info.value)
    assert f"scene {name!r}" in msg and str(root / name) in msg and DOC in msg
    for spec in get_scene_spec(name).files:
        assert spec.filename in msg
        assert (spec.url or "no direct link") in msg  # the URL, or where to get the file
    assert not root.exists()


def _fake_salinas_a_source(tmp_path: Path, shared_gt: Path | None) -> Path:
    src = tmp_path / "server"
    src.mkdir()
    cube = np.random.default_rng(0).integers(0, 5000, size=(83, 86, 204), dtype=np.int16)
    scipy.io.savemat(src / "SalinasA_corrected.mat", {"salinasA_corrected": cube})
    if shared_gt is not None:
        shutil.copyfile(shared_gt, src / "SalinasA_gt.mat")
    else:
        gt = np.zeros((83, 86), np.uint8)
        gt[10:20, 10:20] = 1
        gt[30:40, 30:40] = 10
        scipy.io.savemat(src / "SalinasA_gt.mat", {"salinasA_gt": gt})
    return src


def _register_local(src: Path, name: str, sha_cube: str | None, sha_gt: str | None):
    base = next(s for s in SCENES if s.name == "salinas_a")
    scene = dataclasses.replace(
        base,
        name=name,
        cube=RemoteFile("SalinasA_corrected.mat", (src / "SalinasA_corrected.mat").as_uri(), sha256=sha_cube),
        gt=RemoteFile("SalinasA_gt.mat", (src / "SalinasA_gt.mat").as_uri(), sha256=sha_gt),
    )
    return register_scene(scene.spec(), overwrite=True)


def test_download_writes_atomically_and_verifies(tmp_path):
    src = _fake_salinas_a_source(tmp_path, None)
    root = tmp_path / "root"
    _register_local(src, "salinas_a_dl", _sha(src / "SalinasA_corrected.mat"), _sha(src / "SalinasA_gt.mat"))
    try:
        with pytest.raises(DatasetNotFoundError, match="download=True"):
            load_scene("salinas_a_dl", root=root)
        scene = load_scene("salinas_a_dl", root=root, download=True)
    finally:
        unregister_scene("salinas_a_dl")
    folder = root / "salinas_a_dl"
    assert sorted(p.name for p in folder.iterdir()) == ["SalinasA_corrected.mat", "SalinasA_gt.mat"]
    assert _sha(folder / "SalinasA_corrected.mat") == _sha(src / "SalinasA_corrected.mat")
    assert scene.cube.data.shape == (83, 86, 204)
    assert np.bincount(scene.labels.ravel()).tolist() == [83 * 86 - 200, 100, 100]
    assert scene.meta["label_values"] == [1, 10, 11, 12, 13, 14]


def test_checksum_mismatch_raises_and_leaves_nothing(tmp_path):
    src = _fake_salinas_a_source(tmp_path, None)
    root = tmp_path / "root"
    _register_local(src, "salinas_a_bad", "0" * 64, None)
    try:
        with pytest.raises(IntegrityError, match="SHA-256"):
            load_scene("salinas_a_bad", root=root, download=True)
    finally:
        unregister_scene("salinas_a_bad")
    folder = root / "salinas_a_bad"
    assert not (folder / "SalinasA_corrected.mat").exists()
    assert not [p for p in folder.iterdir() if p.name.startswith(".") or p.suffix == ".part"]


def test_download_without_checksum_is_verified_by_shape_and_removed(tmp_path):
    src = tmp_path / "server"
    src.mkdir()
    scipy.io.savemat(src / "SalinasA_corrected.mat", {"salinasA_corrected": np.zeros((83, 86, 5), np.int16)})
    scipy.io.savemat(src / "SalinasA_gt.mat", {"salinasA_gt": np.ones((83, 86), np.uint8)})
    root = tmp_path / "root"
    _register_local(src, "salinas_a_shape", None, None)
    try:
        with pytest.raises(IntegrityError, match=r"\(83, 86, 5\).*\(83, 86, 204\)"):
            load_scene("salinas_a_shape", root=root, download=True)
    finally:
        unregister_scene("salinas_a_shape")
    assert list((root / "salinas_a_shape").iterdir()) == []


def test_fetch_size_mismatch_and_success(tmp_path):
    payload = tmp_path / "payload.bin"
    payload.write_bytes(b"x" * 3000)
    dest = tmp_path / "out" / "payload.bin"
    with pytest.raises(IntegrityError, match="3000 bytes"):
        fetch(payload.as_uri(), dest, RemoteFile("payload.bin", size=10), progress=False)
    assert not dest.exists() and list(dest.parent.iterdir()) == []
    spec = RemoteFile("payload.bin", size=3000, sha256=_sha(payload))
    assert fetch(payload.as_uri(), dest, spec, progress=True) == dest
    assert dest.read_bytes() == payload.read_bytes()


def test_failed_download_is_dataset_not_found_with_cause(tmp_path):
    spec = RemoteFile("gone.mat", (tmp_path / "no_such_file.mat").as_uri())
    with pytest.raises(DatasetNotFoundError, match="gone.mat") as info:
        ensure_files("demo", [spec], tmp_path / "root", download=True)
    assert info.value.__cause__ is not None
    assert not (tmp_path / "root" / "demo" / "gone.mat").exists()


def test_download_without_url_explains(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="no direct download link"):
        load_scene("urban", root=tmp_path, download=True)


def test_placed_files_checksum_option(tmp_path, shared_data):
    src = _fake_salinas_a_source(tmp_path, shared_data / "salinas_a" / "SalinasA_gt.mat")
    root = tmp_path / "root"
    shutil.copytree(src, root / "salinas_a")
    load_scene("salinas_a", root=root, checksum=False)  # placed files are used; shape verified
    with pytest.raises(IntegrityError, match="SalinasA_corrected.mat"):
        load_scene("salinas_a", root=root)  # by default: the fake cube is not the EHU file


# ---------------------------------------------------------------- issue 39: placed files are checked by default
def _flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def _placed(tmp_path: Path) -> tuple[Path, RemoteFile]:
    """A placed file ``<root>/demo/cube.bin`` and the registry entry that knows its size and SHA-256."""
    path = tmp_path / "root" / "demo" / "cube.bin"
    path.parent.mkdir(parents=True)
    path.write_bytes(np.random.default_rng(0).bytes(300_000))
    return path, RemoteFile("cube.bin", sha256=_sha(path), size=path.stat().st_size)


def test_a_flipped_byte_in_a_placed_file_is_caught_by_default(tmp_path):
    path, spec = _placed(tmp_path)
    assert ensure_files("demo", [spec], tmp_path / "root") == {"cube.bin": path}
    _flip_byte(path, 150_000)  # same size: only the SHA-256 sees it
    with pytest.raises(IntegrityError) as info:
        ensure_files("demo", [spec], tmp_path / "root")
    msg = str(info.value)
    assert str(path) in msg and f"expected {spec.sha256}" in msg and f"SHA-256 {_sha(path)}" in msg
    assert "replace it with the original" in msg and "checksum=False" in msg
    assert ensure_files("demo", [spec], tmp_path / "root", checksum=False) == {"cube.bin": path}  # the way out


def test_the_sha256_of_a_placed_file_is_computed_once_per_file_identity(tmp_path, monkeypatch):
    import os

    import hsi.scenes.files as files

    path, spec = _placed(tmp_path)
    hashed = []
    real = files.sha256sum
    monkeypatch.setattr(files, "sha256sum", lambda p: hashed.append(Path(p)) or real(p))
    for _ in range(3):
        ensure_files("demo", [spec], tmp_path / "root")
    assert hashed == [path]  # once, then remembered
    stamp = files.checked_files_path()
    assert stamp.is_file() and stamp.parent.parent == Path(os.environ["XDG_CACHE_HOME"])
    assert sorted(p.name for p in (tmp_path / "root" / "demo").iterdir()) == ["cube.bin"]  # nothing beside the data
    st = path.stat()
    _flip_byte(path, 10)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: the change time still differs
    with pytest.raises(IntegrityError, match="SHA-256"):
        ensure_files("demo", [spec], tmp_path / "root")
    assert hashed == [path, path]


def test_samson_with_a_flipped_byte_fails_to_load(tmp_path, shared_data):
    src = shared_data / "envi" / "samson"
    folder = tmp_path / "samson"
    folder.mkdir()
    for name in ("samson_1.img", "samson_1.img.hdr", "end3.mat"):
        shutil.copyfile(src / name, folder / name)
    assert load_scene("samson", root=tmp_path).shape == (95, 95, 156)  # the copies are the registry's files
    _flip_byte(folder / "samson_1.img", 1_000_001)  # one count of one pixel: loads fine, shapes and all
    with pytest.raises(IntegrityError) as info:
        load_scene("samson", root=tmp_path)
    msg = str(info.value)
    assert str(folder / "samson_1.img") in msg
    assert "expected 4a77f11c20067b69555a65e2f7124a3a822e77c5b6c1bc192ac5ee6ccf786052" in msg
    assert _sha(folder / "samson_1.img") in msg and "checksum=False" in msg


# ---------------------------------------------------------------- issue 42: downloads over HTTP go through pooch
@pytest.fixture
def http_folder(tmp_path):
    """A folder served over HTTP on 127.0.0.1 (a thread); yields ``(folder, base_url)``."""
    import functools
    import http.server
    import threading

    folder = tmp_path / "served"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("terminal", [False, True])
def test_http_download_is_verified_placed_and_shows_its_progress(http_folder, tmp_path, capsys, monkeypatch,
                                                                 terminal):
    import pooch

    import hsi._progress

    monkeypatch.setattr(hsi._progress, "is_terminal", lambda stream=None: terminal)  # tqdm bar, or progress lines

    folder, base = http_folder
    payload = folder / "cube.bin"
    payload.write_bytes(np.random.default_rng(1).bytes(3_000_000))
    spec = RemoteFile("cube.bin", f"{base}/cube.bin", sha256=_sha(payload), size=3_000_000)
    used, real = [], pooch.HTTPDownloader
    monkeypatch.setattr(pooch, "HTTPDownloader", lambda **kw: used.append(kw) or real(**kw))
    found = ensure_files("demo", [spec], tmp_path / "root", download=True)
    assert found == {"cube.bin": tmp_path / "root" / "demo" / "cube.bin"}
    assert found["cube.bin"].read_bytes() == payload.read_bytes()
    assert sorted(p.name for p in found["cube.bin"].parent.iterdir()) == ["cube.bin"]
    assert len(used) == 1  # pooch fetched it
    err = capsys.readouterr().err
    # the package's own progress: a tqdm bar of the size pooch read from Content-Length (redrawn, then cleared),
    # or lines when stderr is not a terminal
    assert "cube.bin" in err and ("2.86M" if terminal else "100%") in err


def test_http_checksum_mismatch_and_missing_file_leave_nothing(http_folder, tmp_path):
    folder, base = http_folder
    (folder / "cube.bin").write_bytes(b"abc" * 1000)
    root = tmp_path / "root"
    bad = RemoteFile("cube.bin", f"{base}/cube.bin", sha256="0" * 64)
    with pytest.raises(IntegrityError, match=rf"download of {base}/cube.bin: SHA-256 {_sha(folder / 'cube.bin')}"):
        ensure_files("demo", [bad], root, download=True)
    assert list((root / "demo").iterdir()) == []
    gone = RemoteFile("gone.bin", f"{base}/gone.bin")
    with pytest.raises(DatasetNotFoundError, match=rf"download of {base}/gone.bin failed \(404") as info:
        ensure_files("demo", [gone], root, download=True)
    assert info.value.__cause__ is not None and list((root / "demo").iterdir()) == []


def test_offline_download_is_dataset_not_found_naming_the_url(tmp_path):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = RemoteFile("cube.bin", f"http://127.0.0.1:{port}/cube.bin")
    with pytest.raises(DatasetNotFoundError, match=rf"download of http://127.0.0.1:{port}/cube.bin failed"):
        ensure_files("demo", [spec], tmp_path / "root", download=True)
    assert not (tmp_path / "root" / "demo" / "cube.bin").exists()
