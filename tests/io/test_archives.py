"""Runs from a zip, tar or tar.gz archive (gzip members too) or a folder."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

import pandas as pd
import pytest

import tiecore
from tiecore.errors import InputError
from tiecore.io import archives

RUNS = {
    "a.txt": "1 Q0 d1 1 2.0 bm25\n1 Q0 d2 2 1.0 bm25\n2 Q0 d3 1 0.5 bm25\n",
    "sub/b.txt": "1 Q0 d1 1 1.0 dense\n1 Q0 d2 2 1.0 dense\n",
    "c.txt": "1 Q0 d9 1 3.0\n",  # no tag: named by its file
}


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _tar(files: dict[str, bytes], mode: str = "w") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _files(gzipped: bool = False) -> dict[str, bytes]:
    out = {}
    for name, text in RUNS.items():
        data = text.encode()
        out[name + (".gz" if gzipped else "")] = gzip.compress(data) if gzipped else data
    return out


def _expected() -> dict[str, pd.DataFrame]:
    streams = []
    for name, text in RUNS.items():
        stream = io.BytesIO(text.encode())
        stream.name = name
        streams.append(stream)
    return tiecore.read_runs(streams)


def _same(found: dict[str, pd.DataFrame]) -> None:
    expected = _expected()
    assert list(found) == list(expected) == ["bm25", "dense", "c"]
    for name, frame in expected.items():
        pd.testing.assert_frame_equal(found[name], frame, check_like=False)


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("kind", ["zip", "tar", "tar.gz"])
def test_every_kind_reads_as_read_runs(kind, gzipped):
    files = _files(gzipped)
    data = _zip(files) if kind == "zip" else _tar(files, "w:gz" if kind == "tar.gz" else "w")
    _same(archives.read_archive(data))


def test_path_and_file_object_and_public_name(tmp_path):
    path = tmp_path / "track.zip"
    path.write_bytes(_zip(_files()))
    _same(tiecore.io.read_archive(path))
    with open(path, "rb") as file:
        _same(archives.read_archive(file))


def test_folder(tmp_path):
    for name, data in _files(gzipped=True).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x01")
    seen = []
    found = archives.read_folder(tmp_path, progress=lambda d, t, n: seen.append((d, t)))
    assert sorted(found) == ["bm25", "c", "dense"]
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_progress_counts_zip_members():
    seen = []
    archives.read_archive(_zip(_files()), progress=lambda d, t, n: seen.append((d, t, n)))
    assert seen == [(1, 3, "archive/a.txt"), (2, 3, "archive/sub/b.txt"), (3, 3, "archive/c.txt")]


def test_skips_folders_hidden_files_and_macos_copies():
    files = {**_files(), "__MACOSX/._a.txt": b"\x00\x05\x16\x07", ".hidden": b"junk"}
    _same(archives.read_archive(_zip(files)))


def test_bad_line_names_member_and_line():
    files = {**_files(), "bad.txt": b"1 Q0 d1 1 2.0 x\n1 Q0 d2 2 abc x\n"}
    buffer = io.BytesIO(_zip(files))
    buffer.name = "/somewhere/track.zip"
    with pytest.raises(InputError) as caught:
        archives.read_archive(buffer)
    assert str(caught.value).startswith("track.zip/bad.txt, line 2:")


def test_bad_gzip_member():
    files = {**_files(), "cut.txt.gz": gzip.compress(b"1 Q0 d 1 1.0 t\n" * 50)[:30]}
    with pytest.raises(InputError, match=r"archive/cut\.txt\.gz: cannot be gunzipped"):
        archives.read_archive(_zip(files))


def test_not_an_archive_and_empty():
    with pytest.raises(InputError, match="neither a zip nor a tar"):
        archives.read_archive(b"1 Q0 d1 1 2.0 bm25\n")
    with pytest.raises(InputError, match="holds no run file"):
        archives.read_archive(_zip({"folder/": b""}))
    with pytest.raises(InputError, match="no such folder"):
        archives.read_folder("/nonexistent/folder")


def test_text_bound_refuses_a_bomb_before_holding_it():
    bomb = gzip.compress(b"1 Q0 d 1 1.0 t\n" * 200_000)  # 3 MB of text in a few kB
    with pytest.raises(InputError, match="more text than this reader takes"):
        archives.read_archive(_zip({"bomb.txt.gz": bomb}), max_text=1 << 20)


def test_members_are_lazy():
    members = archives.archive_members(_zip(_files()))
    label, text = next(members)
    assert label == "archive/a.txt" and text == RUNS["a.txt"].encode()
