"""`evalcore state backup` / `restore` (issue 42) and the upgrade of a state written by the previous
release.

* While a writer process keeps adding labels, `state backup` snapshots the state (SQLite's online
  backup, or pg_dump of the PostgreSQL schema); `state restore` into a fresh state (and database)
  gives a `labels export` equal byte for byte to the source's export at the backup's moment. The
  labels are appended with increasing ids, each on a case of its own, so the source's export at
  that moment is its final export's lines whose edit ids are at most the backup's highest.
* A damaged, cut, foreign or non-tar backup is refused in one line naming it, writing nothing; a
  restore over a non-empty state is refused unless --force; the keys are in a backup only with
  --keys and restored only with --keys.
* tests/fixtures/state-prev/ (written at 492b977, label store schema 2) is upgraded in place on its
  first open and reads the labels, ledger and queue that release printed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import threading
import uuid
from pathlib import Path

import pytest
from conftest import DEMO, EVALCORE, REPO, tree_hash

from evalcore import Store
from evalcore.review.build import build_queue
from evalcore.review.ledger import Ledger
from evalcore.storage.labels import LABELS_SCHEMA_VERSION, LabelStore

FIXTURE = REPO / "tests" / "fixtures" / "state-prev"

# a writer that keeps deciding new cases of support-g1 (one edit per case) until told to stop,
# printing each acknowledged edit's id
WRITER = """
import sys
import time
from pathlib import Path
import pyarrow.parquet as pq
from evalcore import Store
from evalcore.storage.labels import LabelStore
data, state, stop = sys.argv[1], sys.argv[2], Path(sys.argv[3])
t = pq.read_table(Path(data) / "generations/support-g1/outputs.parquet", columns=["item_id", "round"])
answers = sorted(zip(t.column("item_id").to_pylist(), t.column("round").to_pylist()))
crits = ("answers_question", "cites_source", "grounded", "no_fabrication", "on_tone", "refuses_when_unanswerable")
ls = LabelStore(Store(data, state))
n = 0
for crit in crits:
    for item, rnd in answers:
        if stop.exists():
            sys.exit(0)
        e = ls.add(gen_id="support-g1", item_id=item, gen_round=rnd, criterion=crit, reviewer="writer",
                   value="fail" if n % 5 == 0 else "pass", note=f"w{n}")
        print(e["edit_id"], flush=True)
        n += 1
        time.sleep(0.005)  # a reviewer's pace, faster than people's: about 200 decisions a second at most
sys.exit("the writer ran out of cases before it was told to stop")
"""


def _run(*args: str, state: Path, url: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "EVALCORE_DATA": str(DEMO), "EVALCORE_STATE": str(state)}
    env.pop("EVALCORE_DB", None)
    if url:
        env["EVALCORE_DB"] = url
    r = subprocess.run([EVALCORE, *args], env=env, capture_output=True)
    if ok:
        assert r.returncode == 0, r.stderr.decode()
    return r


def _world(state: Path, url: str | None) -> None:
    """A queue with three decisions, a label of the command line and a ledger entry."""
    store = Store(DEMO, state)
    q = build_queue(store, "accounts-g1", seed=7, created_by="ann")
    ls = LabelStore(store, url=url)
    cases = ls.rows(
        "SELECT item_id, gen_round, criterion FROM queue_cases WHERE queue_id = ? ORDER BY rank LIMIT 3",
        (q["queue_id"],),
    )
    for k, c in enumerate(cases):
        ls.add(
            gen_id="accounts-g1",
            item_id=c["item_id"],
            gen_round=c["gen_round"],
            criterion=c["criterion"],
            reviewer="ann",
            value="pass" if k else "fail",
            queue=q["queue_id"],
            note=f"queue {k}",
        )
    ls.add(gen_id="accounts-g1", item_id="acc-001", criterion="accurate", value="pass", reviewer="bob", tags=["tone"])
    ls.close()
    Ledger(store, url=url).add(
        title="judge B over judge A", by="carol", baseline="support-split", candidate="support-split-judgeB"
    )


class Writer:
    """The writer process and the ids it has acknowledged so far."""

    def __init__(self, state: Path, url: str | None, tmp: Path):
        self.stop = tmp / f"stop-{uuid.uuid4().hex}"
        env = {**os.environ}
        env.pop("EVALCORE_DB", None)
        if url:
            env["EVALCORE_DB"] = url
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(DEMO), str(state), str(self.stop)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.ids: list[int] = []
        self.more = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.more:
                self.ids.append(int(line))
                self.more.notify_all()
        with self.more:
            self.more.notify_all()

    def wait_for(self, n: int) -> list[int]:
        """Wait until ``n`` more edits than now were acknowledged (or the writer ended)."""
        with self.more:
            want = len(self.ids) + n
            self.more.wait_for(lambda: len(self.ids) >= want or self.proc.poll() is not None, timeout=600)
            assert len(self.ids) >= want, self.proc.stderr.read() if self.proc.stderr else ""
            return list(self.ids)

    def finish(self) -> list[int]:
        self.stop.touch()
        self.proc.wait(timeout=600)
        self.reader.join(timeout=600)
        assert self.proc.returncode == 0, self.proc.stderr.read() if self.proc.stderr else ""
        return list(self.ids)


def _export(state: Path, url: str | None) -> bytes:
    return _run("labels", "export", "--format", "csv", "--no-shipped", state=state, url=url).stdout


def _at_most(export: bytes, top: int) -> bytes:
    """The lines of a label export whose edits all have ids up to ``top`` (and the header)."""
    lines = export.decode().split("\r\n")
    col = next(csv.reader([lines[0]])).index("edit_ids")
    keep = [lines[0]] + [
        line for line in lines[1:-1] if max(int(x) for x in next(csv.reader([line]))[col].split(";")) <= top
    ]
    return ("\r\n".join(keep) + "\r\n").encode()


def _max_edit(state: Path, url: str | None) -> int:
    ls = LabelStore(Store(DEMO, state), url=url)
    try:
        return int(ls.rows("SELECT max(edit_id) AS m FROM edits")[0]["m"])
    finally:
        ls.close()


@pytest.fixture
def pg_pair(pg_server):
    """Two new databases of the test server (the source stack's and the fresh stack's), each working
    in its public schema as a deployment's does; dropped afterwards."""
    import psycopg

    names = [f"h6_{k}_{uuid.uuid4().hex[:10]}" for k in ("src", "dst")]
    with psycopg.connect(pg_server, autocommit=True) as con:
        for n in names:
            con.execute(f'CREATE DATABASE "{n}"')
    db = pg_server.split("///", 1)[1].split("?", 1)[0]
    yield [pg_server.replace(f"///{db}?", f"///{n}?") for n in names]
    with psycopg.connect(pg_server, autocommit=True) as con:
        for n in names:
            con.execute(f'DROP DATABASE IF EXISTS "{n}" WITH (FORCE)')


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_backup_while_deciding_restores_the_same_export(kind, tmp_path, request):
    src_url, dst_url = request.getfixturevalue("pg_pair") if kind == "postgres" else (None, None)
    src, dst, out = tmp_path / "src", tmp_path / "dst", tmp_path / "backup.tar.gz"
    _world(src, src_url)
    writer = Writer(src, src_url, tmp_path)
    try:
        before = writer.wait_for(20)  # deciding before the backup starts
        r = _run("state", "backup", str(out), "--json", state=src, url=src_url)
        during = writer.wait_for(0)  # acknowledged by the time the backup ended
    finally:
        acked = writer.finish()
    manifest = json.loads(r.stdout)
    assert manifest["keys"] is None and "not in this backup" in manifest["note"]
    assert {f["path"] for f in manifest["files"]} >= (
        {"postgres/evalcore.dump"} if src_url else {"state/labels.sqlite", "state/ledger.sqlite"}
    )

    _run("state", "restore", str(out), state=dst, url=dst_url)
    top = _max_edit(dst, dst_url)
    assert before[-1] <= top <= acked[-1]  # every edit acknowledged before the backup began is in it
    assert len(during) > len(before)  # the writer went on deciding while the backup ran
    final = _export(src, src_url)
    expected = _at_most(final, top)
    assert _export(dst, dst_url) == expected
    # every edit of the writer up to the backup's highest id is there, and none after it
    assert expected.count(b'""writer"": ""w') == sum(1 for i in acked if i <= top) > len(before) - 1
    assert final.count(b'""writer"": ""w') == len(acked)
    led = [_run("ledger", "list", "--json", state=s, url=u).stdout for s, u in ((src, src_url), (dst, dst_url))]
    assert led[0] == led[1] and b"judge B over judge A" in led[0]
    queues = [_run("queue", "list", "--json", state=s, url=u).stdout for s, u in ((src, src_url), (dst, dst_url))]
    assert queues[0] == queues[1]
    if dst_url:  # the database holds the store now: a second restore is refused, and --force replaces it
        again = tmp_path / "dst2"
        r = _run("state", "restore", str(out), state=again, url=dst_url, ok=False)
        _one_line_refusal(r, "already holds tables", "--force")
        assert not again.exists()
        _run("state", "restore", str(out), "--force", state=again, url=dst_url)
        assert _export(again, dst_url) == expected


def _one_line_refusal(r: subprocess.CompletedProcess, *words: str) -> str:
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.fixture(scope="module")
def small_backup(tmp_path_factory) -> Path:
    """A backup of a small state: a queue, labels and a ledger entry (SQLite)."""
    tmp = tmp_path_factory.mktemp("small")
    state = tmp / "state"
    _world(state, None)
    out = tmp / "small.tar"
    _run("state", "backup", str(out), state=state)
    return out


def _corrupt(src: Path, how: str, dst: Path) -> Path:
    data = bytearray(src.read_bytes())
    if how == "flipped":  # a byte inside the label store's member: the archive reads, the sha256 does not match
        with tarfile.open(src) as tar:
            m = tar.getmember("state/labels.sqlite")
        data[m.offset_data + 5000] ^= 0xFF
    elif how == "cut":
        data = data[: len(data) // 2]
    elif how == "foreign":  # a tar of something else
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("notes.txt")
            info.size = 5
            tar.addfile(info, io.BytesIO(b"hello"))
        data = bytearray(buf.getvalue())
    elif how == "not-a-tar":
        data = bytearray(b"SQLite format 3\x00" + bytes(4096))
    dst.write_bytes(bytes(data))
    return dst


@pytest.mark.parametrize("how", ["flipped", "cut", "foreign", "not-a-tar"])
def test_a_bad_backup_is_refused_in_one_line_and_nothing_is_written(how, small_backup, tmp_path):
    bad = _corrupt(small_backup, how, tmp_path / f"{how}.tar")
    target = tmp_path / "fresh"
    r = _run("state", "restore", str(bad), state=target, ok=False)
    err = _one_line_refusal(r, str(bad), "is not a whole evalcore state backup")
    if how == "flipped":
        assert "state/labels.sqlite does not match its manifest" in err
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]  # no temporary directory left


def test_restore_refuses_a_non_empty_state_unless_forced(small_backup, tmp_path):
    target = tmp_path / "state"
    LabelStore(Store(DEMO, target)).add(
        gen_id="accounts-g1", item_id="acc-003", criterion="accurate", value="fail", reviewer="zed"
    )
    before = tree_hash(target)
    r = _run("state", "restore", str(small_backup), state=target, ok=False)
    _one_line_refusal(r, str(target), "is not empty", "--force")
    assert tree_hash(target) == before
    _run("state", "restore", str(small_backup), "--force", state=target)
    assert b'""zed""' not in _export(target, None) and b'""bob""' in _export(target, None)


def test_keys_are_in_a_backup_only_with_keys(tmp_path):
    state, keys = tmp_path / "state", tmp_path / "keys"
    _world(state, None)
    (keys / "blind-1").mkdir(parents=True)
    (keys / "blind-1" / "key.json").write_text('{"A": "gen-a"}')
    plain, with_keys = tmp_path / "plain.tar", tmp_path / "with-keys.tar"
    r = _run("state", "backup", str(plain), state=state)
    assert "the pairwise keys are not in this backup" in r.stdout.decode()
    with tarfile.open(plain) as tar:
        assert not [n for n in tar.getnames() if n.startswith("keys/")]
    r = _run("state", "backup", str(with_keys), "--keys", str(keys), state=state)
    assert "HOLDS the pairwise keys" in r.stdout.decode()
    r = _run("state", "restore", str(with_keys), state=tmp_path / "r1")
    assert "not restored" in r.stdout.decode()
    assert not list((tmp_path / "r1").rglob("key.json"))
    _run("state", "restore", str(with_keys), "--keys", str(tmp_path / "k2"), state=tmp_path / "r2")
    assert (tmp_path / "k2" / "blind-1" / "key.json").read_text() == '{"A": "gen-a"}'
    r = _run("state", "restore", str(plain), "--keys", str(tmp_path / "k3"), state=tmp_path / "r3", ok=False)
    _one_line_refusal(r, "holds no pairwise keys")
    assert not (tmp_path / "r3").exists()


def _schema_version(db: Path) -> str:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()


def test_a_state_of_the_previous_release_is_upgraded_on_first_open(tmp_path):
    state = tmp_path / "state"
    shutil.copytree(FIXTURE / "state", state)
    assert _schema_version(state / "labels.sqlite") == "2"
    got = _export(state, None)
    assert _schema_version(state / "labels.sqlite") == str(LABELS_SCHEMA_VERSION)  # upgraded in place
    con = sqlite3.connect(state / "labels.sqlite")
    cols = {r[1] for r in con.execute("PRAGMA table_info(queue_cases)")}
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    assert {"audit_key", "audit_size"} <= cols and {"assignments", "receipts"} <= tables
    # the same labels: that release's export, whose lines ended in LF before dbb4d58 made them CRLF
    prev = (FIXTURE / "labels-export.csv").read_bytes()
    assert b"\r" not in prev
    full = _run("labels", "export", "--format", "csv", state=state).stdout
    assert full == prev.replace(b"\n", b"\r\n")
    assert got.count(b"\r\n") == 1 + 7  # the six queue decisions and bob's label (bob's adjudication withdrawn)
    assert _run("ledger", "list", "--json", state=state).stdout == (FIXTURE / "ledger-list.json").read_bytes()
    # every field that release's queue list printed is unchanged; the audit of a queue built before
    # schema 3 is said to have no recorded design
    now = json.loads(_run("queue", "list", "--json", state=state).stdout)
    old = json.loads((FIXTURE / "queue-list.json").read_text())
    assert [{k: q[k] for k in o} for q, o in zip(now, old)] == old and now[0]["audit_design"] is None
    # and the upgraded state takes new decisions
    LabelStore(Store(DEMO, state)).add(
        gen_id="accounts-g1", item_id="acc-003", criterion="accurate", value="pass", reviewer="dee"
    )
    assert b'""dee""' in _export(state, None)


def test_state_upgrade_brings_the_previous_release_to_this_schema(tmp_path):
    state = tmp_path / "state"
    shutil.copytree(FIXTURE / "state", state)
    first = json.loads(_run("state", "upgrade", "--json", state=state).stdout)
    assert (first["labels"]["schema_version_before"], first["labels"]["schema_version"]) == (
        "2",
        str(LABELS_SCHEMA_VERSION),
    )
    assert first["ledger"]["events"] == 1
    again = json.loads(_run("state", "upgrade", "--json", state=state).stdout)
    assert again["labels"]["schema_version_before"] == again["labels"]["schema_version"] == str(LABELS_SCHEMA_VERSION)
    assert _run("labels", "export", "--format", "csv", state=state).stdout == (
        (FIXTURE / "labels-export.csv").read_bytes().replace(b"\n", b"\r\n")
    )
    # a newer store than this evalcore reads is refused in one line, and left as it is
    con = sqlite3.connect(state / "labels.sqlite")
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(LABELS_SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    before = tree_hash(state)
    r = _run("state", "upgrade", state=state, ok=False)
    _one_line_refusal(r, "is newer than this evalcore reads")
    assert tree_hash(state) == before
