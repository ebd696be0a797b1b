"""A damaged label store stops every label command with one line and is left byte-identical.

A store of 300 labels is written by a real process; a second process adds 20 more and is killed
(SIGKILL) before it can checkpoint, so those 20 live only in the write-ahead log. Then each kind of
damage is made on a copy: 0 bytes, half the file, 8 KiB of random bytes in the middle, a garbage
header, a directory in its place, the main file missing beside its log, and a log torn in the
middle (a frame overwritten with committed frames after it). Every label command (add, list,
export, undo, check) must exit 2 with one line naming the file, and afterwards every file of the
state directory is byte-identical. ``labels recover`` copies what can be read into a new file and
leaves the damaged one alone."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.storage.integrity import check_database

_WRITE = """
import os, signal, sys
from evalcore import LabelStore, Store
ls = LabelStore(Store(sys.argv[1], sys.argv[2]))
n, kill = int(sys.argv[3]), sys.argv[4] == "kill"
for k in range(n):
    ls.add(item_id="i%d" % (k % 3), criterion="ok", value="pass" if k % 2 else "fail", reviewer="w%d" % (k % 4),
           note=("%s:%d " % (sys.argv[4], k)) * 8)
if kill:
    os.kill(os.getpid(), signal.SIGKILL)
ls.close()
"""

DAMAGES = ["empty", "half", "random-middle", "garbage-header", "directory", "main-missing", "torn-wal"]


def _write(data: Path, state: Path, n: int, mode: str) -> None:
    subprocess.run([sys.executable, "-c", _WRITE, str(data), str(state), str(n), mode], check=False, timeout=120)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, Path]:
    """(data, state) where labels.sqlite holds 300 checkpointed labels and labels.sqlite-wal 20 more."""
    from conftest import make_tiny

    root = tmp_path_factory.mktemp("damage")
    data, state = root / "data", root / "state"
    make_tiny(data)
    _write(data, state, 300, "keep")
    _write(data, state, 20, "kill")
    assert (state / "labels.sqlite-wal").stat().st_size > 0
    assert check_database(state / "labels.sqlite")
    return data, state


def _damage(state: Path, kind: str) -> None:
    db, wal = state / "labels.sqlite", state / "labels.sqlite-wal"
    size = db.stat().st_size
    if kind == "empty":
        db.write_bytes(b"")
    elif kind == "half":
        with open(db, "r+b") as f:
            f.truncate(size // 2)
    elif kind in ("random-middle", "random-late"):  # (late: in the edits' pages, past the schema's)
        with open(db, "r+b") as f:
            f.seek(size // 2 - 4096 if kind == "random-middle" else size * 3 // 4)
            f.write(random.Random(5).randbytes(8192))
    elif kind == "garbage-header":
        with open(db, "r+b") as f:
            f.write(b"this is not sqlite at all")
    elif kind == "directory":
        db.unlink()
        db.mkdir()
        (db / "something").write_text("x")
    elif kind == "main-missing":
        db.unlink()
    elif kind == "torn-wal":  # the second frame's page overwritten: the later commit frames would be dropped
        page = int.from_bytes(wal.read_bytes()[8:12], "big")
        with open(wal, "r+b") as f:
            f.seek(32 + (24 + page) + 24 + 100)
            f.write(b"\x00torn\x00" * 50)
    else:  # pragma: no cover
        raise AssertionError(kind)


def _snapshot(state: Path) -> dict[str, str]:
    out = {}
    for p in sorted(state.rglob("*")):
        if p.is_file() and not p.name.endswith("-shm"):  # (SQLite's shared-memory index is scratch)
            out[str(p.relative_to(state))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _copy(base: tuple[Path, Path], tmp_path: Path) -> Path:
    state = tmp_path / "state"
    shutil.copytree(base[1], state)
    return state


COMMANDS = [
    ["labels", "add", "--item", "i1", "--criterion", "ok", "--value", "pass", "--reviewer", "zed"],
    ["labels", "list", "--json"],
    ["labels", "export", "--format", "json"],
    ["queue", "undo", "--queue", "cli", "--reviewer", "w1"],
    ["labels", "check"],
]


@pytest.mark.parametrize("kind", DAMAGES)
def test_every_label_command_refuses_a_damaged_store_and_leaves_it_alone(base, tmp_path, ev, kind):
    data = base[0]
    state = _copy(base, tmp_path)
    _damage(state, kind)
    before = _snapshot(state)
    for cmd in COMMANDS:
        code, out, err = ev("--data", data, "--state", state, *cmd)
        assert code == 2, (kind, cmd, code, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (kind, cmd, err)
        assert "labels.sqlite" in lines[0] and "Traceback" not in err, (kind, cmd, err)
        assert _snapshot(state) == before, (kind, cmd)
    assert _snapshot(state) == before


def test_a_real_process_refuses_too_and_an_intact_store_opens(base, tmp_path):
    data = base[0]
    intact = _copy(base, tmp_path / "intact")
    env = {**os.environ, "EVALCORE_DATA": str(data), "EVALCORE_STATE": str(intact)}
    ok = subprocess.run([sys.executable, "-m", "evalcore", "labels", "list", "--history", "--json"],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert len(json.loads(ok.stdout)) == 320  # the 20 in the log were committed: SQLite reads them back
    state = _copy(base, tmp_path / "damaged")
    env["EVALCORE_STATE"] = str(state)
    _damage(state, "main-missing")
    before = _snapshot(state)
    bad = subprocess.run([sys.executable, "-m", "evalcore", "labels", "add", "--item", "i1", "--criterion", "ok",
                          "--value", "pass", "--reviewer", "zed"], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "is missing but its write-ahead log labels.sqlite-wal holds" in bad.stderr
    assert _snapshot(state) == before and not (state / "labels.sqlite").exists()


def test_a_crash_tail_in_the_log_is_not_damage(base, tmp_path, ev):
    """A log whose last frame is incomplete is what a writer killed mid-write leaves: SQLite drops
    that unacknowledged tail and so does the check; every committed label is read."""
    state = _copy(base, tmp_path)
    wal = state / "labels.sqlite-wal"
    with open(wal, "ab") as f:
        f.write(b"\x00\x00\x00\x07" + b"\x01" * 1000)  # half a frame
    code, out, err = ev("--data", base[0], "--state", state, "labels", "list", "--history", "--json")
    assert code == 0, err
    assert len(json.loads(out)) == 320


def test_recover_copies_what_can_be_read_and_keeps_the_damaged_file(base, tmp_path, ev):
    data = base[0]
    state = _copy(base, tmp_path)
    _damage(state, "random-late")
    before = _snapshot(state)
    new = tmp_path / "recovered.sqlite"
    code, out, err = ev("--data", data, "--state", state, "labels", "recover", "--out", new, "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert _snapshot(state) == before
    got = rep["tables"]["edits"]
    assert 0 < got["recovered"] < 320 and got["highest_id"] == 320 and got["missing"] == 320 - got["recovered"], rep
    # the recovered file is a whole store: swapped in, every command works and reads those edits
    fresh = tmp_path / "fresh-state"
    fresh.mkdir()
    shutil.copy(new, fresh / "labels.sqlite")
    code, out, err = ev("--data", data, "--state", fresh, "labels", "list", "--history", "--json")
    assert code == 0, err
    assert len(json.loads(out)) == got["recovered"]
    code, _, err = ev("--data", data, "--state", fresh, "labels", "check")
    assert code == 0, err
    # recover refuses to write over an existing file
    code, _, err = ev("--data", data, "--state", state, "labels", "recover", "--out", new)
    assert code == 2 and "exists" in err


def test_recover_says_so_when_nothing_can_be_read(base, tmp_path, ev):
    state = _copy(base, tmp_path)
    _damage(state, "main-missing")
    new = tmp_path / "from-log.sqlite"
    code, out, err = ev("--data", base[0], "--state", state, "labels", "recover", "--out", new)
    assert code == 2 and "nothing can be read" in err and len(err.strip().splitlines()) == 1, err
    assert not (state / "labels.sqlite").exists() and not new.exists()  # nothing was created anywhere


def test_labels_check_reports_a_whole_store(base, tmp_path, ev):
    state = _copy(base, tmp_path)
    code, out, err = ev("--data", base[0], "--state", state, "labels", "check", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["ok"] is True and rep["problems"] == [] and rep["edits"] == 320
