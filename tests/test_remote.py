"""`--data s3://bucket/prefix` against a local S3-compatible server (moto's, tests/s3_util.py), read
where it lies: the figures over the demo uploaded to a bucket equal the local ones, while the state
directory holds only the index (manifests, and stand-ins carrying each table's footer and none of
its data); a query reads a part of the bucket, counted in requests and bytes, and a second one
reads nothing; a changed object is read again and a removed one leaves; a missing bucket, a wrong
key and an object that is not Parquet are each one line naming the URL and a non-zero exit; a key
that would land outside the index is refused; nothing but ``export --hive`` writes into object
storage, and that export holds the local export's tables."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO, EVALCORE, REPO
from s3_util import BUCKET, counted_requests, s3_client, s3_server, upload

from evalcore.storage.remote import MAGIC, STAND_IN, TAIL


def _bench_upload():
    """The bench's upload of each object with its SHA256 (bench/s3_reads.py, loaded by its path:
    bench/ on sys.path would shadow the app's ``pages`` package with bench/pages.py)."""
    spec = importlib.util.spec_from_file_location("bench_s3_reads", REPO / "bench" / "s3_reads.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.upload_checksummed


URL = f"s3://{BUCKET}/demo"
COMMANDS = [
    ["runs"],
    ["attribution", "support-split"],
    ["attribution", "support-ternary"],
    ["association", "support-single", "support-split"],
    ["compare", "support-split", "support-split-judgeB"],
    ["agreement", "--gen", "support-g1", "--n-boot", "20"],  # the shipped label sets (labels/) are indexed too
    ["crosstab", "support-single", "--a", "answers_question", "--b", "cites_source"],
]


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("s3")
    with s3_server(tmp / "moto.log") as creds:
        assert upload(creds, DEMO, "demo") > 20
        yield creds, tmp


def _cli(creds: dict, data: str | Path, state: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, **creds, "EVALCORE_REMOTE_TTL": "0", **env}
    return subprocess.run(
        [EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True, env=full
    )


def _without_paths(obj, *roots: str):
    """JSON with the data directory's own spelling taken out (the local figures name DEMO's path,
    the remote ones the URL): every other value must be equal."""
    text = json.dumps(obj, sort_keys=True)
    for r in roots:
        text = text.replace(r, "<data>")
    return json.loads(text)


def _index(state: Path) -> Path:
    (root,) = [p for p in (state / "remote").iterdir() if p.is_dir() and not p.name.endswith(".blocks")]
    return root


def _footer(data: bytes) -> bytes:
    n = int.from_bytes(data[-8:-4], "little")
    return data[-(n + 8) :]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: "-".join(a[:2]))
def test_the_figures_over_the_bucket_equal_the_local_ones(s3, args):
    creds, tmp = s3
    remote = _cli(creds, URL, tmp / "state-remote", *args, "--json")
    assert remote.returncode == 0, remote.stderr
    local = _cli(creds, DEMO, tmp / "state-local", *args, "--json")
    assert local.returncode == 0, local.stderr
    got, want = json.loads(remote.stdout), json.loads(local.stdout)
    assert _without_paths(got, URL) == _without_paths(want, str(DEMO))
    assert got  # a figure, not an empty answer
    # the index holds the manifests as they are and, for each table, a stand-in: its URL and the
    # table's own footer, none of its data pages
    index = _index(tmp / "state-remote")
    tables = sorted(p.relative_to(DEMO) for p in DEMO.rglob("*.parquet"))
    assert sorted(p.relative_to(index) for p in index.rglob("*.parquet")) == tables
    for rel in tables:
        stand_in, real = (index / rel).read_bytes(), (DEMO / rel).read_bytes()
        assert stand_in.startswith(MAGIC + STAND_IN + f"{URL}/{rel.as_posix()} (".encode())
        assert stand_in.split(b"\n", 1)[1] == _footer(real)  # the header line, then the footer alone
    for m in DEMO.rglob("manifest.json"):
        assert (index / m.relative_to(DEMO)).read_bytes() == m.read_bytes()


def _attribution(store, run_id: str) -> dict:
    from evalcore.analysis.failures import attribution
    from evalcore.analysis.selection import Selection

    return attribution(store, run_id, Selection()).to_dict()


def test_a_query_reads_a_part_of_the_bucket_and_a_repeated_one_nothing(s3, tmp_path, monkeypatch):
    """Counted at s3fs's calls in this process: opening the URL is one listing and reads of the
    manifests, each table's last 8 bytes and its footer, exactly; the attribution of one run reads
    less than the objects of that run, its generation and its suite hold; a second Store over the
    same state directory lists once more and reads no byte; the figure equals the local one."""
    from evalcore.storage.store import Store

    creds, _ = s3
    for k, v in {**creds, "EVALCORE_REMOTE_TTL": "0"}.items():
        monkeypatch.setenv(k, v)
    objects = {
        o["Key"][len("demo/") :]: o["Size"]
        for o in s3_client(creds).list_objects_v2(Bucket=BUCKET, Prefix="demo/")["Contents"]
    }
    tables = [k for k in objects if k.endswith(".parquet")]
    with counted_requests() as opened:
        store = Store(URL, tmp_path / "state")
    # no object has a checksum here: nothing is asked of them but their bytes
    assert opened["list"] == 1 and opened["head"] == 0
    manifests = sum(n for k, n in objects.items() if not k.endswith(".parquet"))
    tails = sum(min(objects[k], TAIL) for k in tables)  # a footer longer than the tail is read again
    longer = [k for k in tables if len(_footer((DEMO / k).read_bytes())) > min(objects[k], TAIL)]
    again = sum(len(_footer((DEMO / k).read_bytes())) for k in longer)
    assert opened["bytes"] == manifests + tails + again and opened["get"] == len(objects) + len(longer)
    with counted_requests() as first:
        got = _attribution(store, "support-split")
    # the run's derived tables in the bucket are read once their sources are checked: those objects
    # are hashed whole, once per version (into the block cache); nothing of another run is read
    entities = ("runs/support-split/", "generations/support-g1/", "suites/support/")
    own = sum(n for k, n in objects.items() if k.startswith(entities))
    assert 0 < first["bytes"] <= own < sum(objects.values()) / 2, (first, own, sum(objects.values()))
    assert first["list"] == 0 and first["head"] == 0  # the listing answers every question about a file
    # the run's derived tables were the bucket's, checked, not built again in the state directory
    assert not (tmp_path / "state" / "derived" / "runs" / "support-split").exists()
    with counted_requests() as again:
        got_again = _attribution(Store(URL, tmp_path / "state"), "support-split")
    assert again == {"get": 0, "bytes": 0, "list": 1, "head": 0}
    local = _attribution(Store(DEMO, tmp_path / "state-local"), "support-split")
    assert _without_paths(got, URL) == _without_paths(local, str(DEMO)) == _without_paths(got_again, URL)


def test_a_bucket_keeping_each_objects_sha256_is_not_read_whole(s3, tmp_path, monkeypatch):
    """Uploaded with SHA256 checksums (one PutObject each): opening asks the HEAD of each table
    longer than the tail it reads for its checksum, and hashes the others, read whole; each
    stand-in carries its table's sha256, equal to the file's own; the run's derived tables are then
    checked without reading their sources, and the first attribution equals the local figure. A
    table replaced without a checksum is hashed from its bytes, one replaced with one carries it."""
    from evalcore.storage.derived import sha256_of
    from evalcore.storage.store import Store

    creds, _ = s3
    for k, v in {**creds, "EVALCORE_REMOTE_TTL": "0"}.items():
        monkeypatch.setenv(k, v)
    copy = tmp_path / "copy"
    shutil.copytree(DEMO, copy)
    upload_checksummed = _bench_upload()
    upload_checksummed(creds, copy, "sums")
    url = f"s3://{BUCKET}/sums"
    tables = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*.parquet"))
    with counted_requests() as opened:
        store = Store(url, tmp_path / "state")
    # a table no longer than the tail read is read whole (hashed, its block kept); the others' HEADs
    longer = [rel for rel in tables if (copy / rel).stat().st_size > TAIL]
    assert opened["head"] == len(longer) > 0 and opened["list"] == 1
    index = _index(tmp_path / "state")

    def carried(rel: str) -> str | None:
        line = (index / rel).read_bytes().split(b"\n", 1)[0].decode()
        return line.split(") sha256=", 1)[1] if ") sha256=" in line else None

    for rel in tables:
        assert carried(rel) == hashlib.sha256((copy / rel).read_bytes()).hexdigest(), rel
    with counted_requests() as first:
        got = _attribution(store, "support-split")
    # at most the run's derived tables and the suite's items (the page's item classes), here all read
    # whole by opening: none of the verdicts, calls or answers the derived tables summarise
    read = [*(copy / "runs/support-split/derived").glob("*.parquet"), copy / "suites/support/items.parquet"]
    assert first["bytes"] <= sum(p.stat().st_size for p in read) and first["head"] == 0, first
    assert not (tmp_path / "state" / "derived" / "runs" / "support-split").exists()  # the bucket's were used
    local = _attribution(Store(copy, tmp_path / "state-local"), "support-split")
    assert _without_paths(got, url) == _without_paths(local, str(copy))
    # calls (longer than the tail) rewritten twice, the same rows in new bytes: uploaded without a
    # checksum, its sha256 is its bytes' (and the bucket's derived set no longer checks); with one,
    # its stand-in carries the new checksum
    rel = "runs/support-split/calls.parquet"
    for compression, send in (("gzip", upload), ("snappy", upload_checksummed)):
        before = hashlib.sha256((copy / rel).read_bytes()).hexdigest()
        _rewrite(copy / rel, compression)
        now = hashlib.sha256((copy / rel).read_bytes()).hexdigest()
        assert now != before
        send(creds, copy / "runs/support-split", "sums/runs/support-split")
        changed = Store(url, tmp_path / "state")
        assert carried(rel) == (None if send is upload else now)
        assert sha256_of(index / rel) == now
    local = _attribution(Store(copy, tmp_path / "state-local"), "support-split")
    assert _without_paths(_attribution(changed, "support-split"), url) == _without_paths(local, str(copy))


def _rewrite(path: Path, compression: str) -> None:
    """The same table written again with another compression: new bytes, the same rows."""
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(path), path, compression=compression)


def test_a_missing_bucket_a_wrong_key_and_an_object_that_is_not_parquet_are_one_line(s3, tmp_path):
    creds, _ = s3
    r = _cli(creds, f"s3://no-such-bucket-{os.getpid()}/demo", tmp_path / "st1", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "s3://no-such-bucket" in r.stderr and "no such bucket" in r.stderr
    r = _cli({**creds, "AWS_SECRET_ACCESS_KEY": "not-the-key"}, URL, tmp_path / "st2", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert URL in r.stderr and "access refused" in r.stderr
    assert not (tmp_path / "st2" / "remote").exists() or not any((tmp_path / "st2" / "remote").rglob("*.parquet"))
    # a prefix with one table replaced by bytes that are not Parquet
    upload(creds, DEMO, "broken")
    s3_client(creds).put_object(Bucket=BUCKET, Key="broken/runs/support-split/verdicts.parquet", Body=b"not parquet")
    r = _cli(creds, f"s3://{BUCKET}/broken", tmp_path / "st3", "attribution", "support-split")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f"s3://{BUCKET}/broken/runs/support-split/verdicts.parquet" in r.stderr, r.stderr
    assert "not a readable Parquet file" in r.stderr, r.stderr
    assert str(tmp_path) not in r.stderr  # the URL, not the index's local path
    # an empty prefix holds no data
    r = _cli(creds, f"s3://{BUCKET}/nothing-here", tmp_path / "st4", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds no evalcore data" in r.stderr, r.stderr


def _flip_one_verdict(path: Path) -> None:
    """The first verdict's ``passed`` negated, the file's schema and metadata kept."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    passed = t.column("passed").to_pylist()
    passed[0] = not passed[0]
    t = t.set_column(t.schema.get_field_index("passed"), t.schema.field("passed"), pa.array(passed, pa.bool_()))
    pq.write_table(t, path, compression="zstd")


def test_the_index_follows_the_bucket(s3, tmp_path):
    """A run added appears, a changed table is read again (not its cached blocks), a removed run
    leaves the index, and within the TTL nothing is listed again."""
    creds, _ = s3
    s3c = s3_client(creds)
    copy = tmp_path / "copy"
    for sub in ("suites", "generations", "runs/support-split"):
        shutil.copytree(DEMO / sub, copy / sub, ignore=shutil.ignore_patterns("derived"))
    upload(creds, copy, "follow")
    url = f"s3://{BUCKET}/follow"
    state = tmp_path / "state"
    first = _cli(creds, url, state, "runs", "--json")
    assert first.returncode == 0, first.stderr
    assert [r["run_id"] for r in json.loads(first.stdout)] == ["support-split"]
    before = _cli(creds, url, state, "attribution", "support-split", "--json")
    assert before.returncode == 0, before.stderr
    # no derived tables in this bucket: the run's are built in the state directory, from the bucket
    assert (state / "derived" / "runs" / "support-split" / "answers.parquet").is_file()
    # a table changed in the bucket: the figure over the bucket is the figure over the changed copy
    _flip_one_verdict(copy / "runs/support-split/verdicts.parquet")
    upload(creds, copy / "runs/support-split", "follow/runs/support-split")
    after = _cli(creds, url, state, "attribution", "support-split", "--json")
    local = _cli(creds, copy, tmp_path / "state-local", "attribution", "support-split", "--json")
    assert after.returncode == 0 and local.returncode == 0, after.stderr + local.stderr
    assert json.loads(after.stdout) != json.loads(before.stdout)
    assert _without_paths(json.loads(after.stdout), url) == _without_paths(json.loads(local.stdout), str(copy))
    # a run added to the bucket appears; a run removed from it disappears, locally too
    upload(creds, DEMO / "runs" / "support-single", "follow/runs/support-single")
    assert [r["run_id"] for r in json.loads(_cli(creds, url, state, "runs", "--json").stdout)] == [
        "support-single",
        "support-split",
    ]
    for o in s3c.list_objects_v2(Bucket=BUCKET, Prefix="follow/runs/support-split/")["Contents"]:
        s3c.delete_object(Bucket=BUCKET, Key=o["Key"])
    assert [r["run_id"] for r in json.loads(_cli(creds, url, state, "runs", "--json").stdout)] == ["support-single"]
    assert not (_index(state) / "runs" / "support-split").exists()
    # within the TTL nothing is listed again: a change shows only once it has passed
    upload(creds, DEMO / "runs" / "support-split", "follow/runs/support-split")
    assert len(json.loads(_cli(creds, url, state, "runs", "--json", EVALCORE_REMOTE_TTL="3600").stdout)) == 1
    assert len(json.loads(_cli(creds, url, state, "runs", "--json").stdout)) == 2


def test_a_key_that_leaves_the_index_is_refused(s3, tmp_path):
    creds, _ = s3
    upload(creds, DEMO / "suites", "escape/suites")
    s3_client(creds).put_object(Bucket=BUCKET, Key="escape/runs/x/../../../../outside.txt", Body=b"x")
    r = _cli(creds, f"s3://{BUCKET}/escape", tmp_path / "state", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "outside.txt" in r.stderr and "not a plain relative key" in r.stderr, r.stderr
    assert not any(p.name == "outside.txt" for p in tmp_path.rglob("*"))


def test_nothing_writes_into_the_data_on_object_storage(s3, tmp_path):
    creds, _ = s3
    src = tmp_path / "results.jsonl"
    src.write_text('{"item_id": "a", "input": "q", "output": "x", "criterion": "ok", "value": "pass"}\n')
    before = sorted(o["Key"] for o in s3_client(creds).list_objects_v2(Bucket=BUCKET, Prefix="demo/")["Contents"])
    for args in (["import", "long", str(src)], ["index"]):
        r = _cli(creds, URL, tmp_path / "state", *args)
        if args[0] == "import":
            assert r.returncode == 2 and r.stderr.count("\n") == 1 and "object storage" in r.stderr, r.stderr
        else:  # index builds the derived tables in the state directory, never beside the runs
            assert r.returncode == 0, r.stderr
    after = sorted(o["Key"] for o in s3_client(creds).list_objects_v2(Bucket=BUCKET, Prefix="demo/")["Contents"])
    assert after == before
    assert (tmp_path / "state" / "derived").is_dir()


def test_export_hive_writes_to_object_storage(s3, tmp_path):
    """``export --hive s3://...`` holds the local export's files, each table equal; a second export
    to the same prefix is refused without --overwrite and replaces it with it."""
    import pyarrow.parquet as pq
    import s3fs

    creds, _ = s3
    url = f"s3://{BUCKET}/hive-export"
    args = ["export", "--run", "support-split", "--run", "support-single", "--json"]
    local = _cli(creds, DEMO, tmp_path / "st", *args[:-1], "--hive", str(tmp_path / "hive"), "--json")
    remote = _cli(creds, DEMO, tmp_path / "st", *args[:-1], "--hive", url, "--json")
    assert local.returncode == 0 and remote.returncode == 0, local.stderr + remote.stderr
    assert json.loads(remote.stdout)["path"] == url
    assert json.loads(remote.stdout)["tables"] == json.loads(local.stdout)["tables"]
    s3c = s3_client(creds)
    keys = sorted(o["Key"] for o in s3c.list_objects_v2(Bucket=BUCKET, Prefix="hive-export/")["Contents"])
    files = sorted(p.relative_to(tmp_path / "hive").as_posix() for p in (tmp_path / "hive").rglob("*") if p.is_file())
    assert [k[len("hive-export/") :] for k in keys] == files and len(files) > 6
    fs = s3fs.S3FileSystem(
        key=creds["AWS_ACCESS_KEY_ID"], secret=creds["AWS_SECRET_ACCESS_KEY"],
        endpoint_url=creds["AWS_ENDPOINT_URL"], skip_instance_cache=True,
    )  # fmt: skip
    for f in files:
        if f.endswith(".parquet"):
            assert pq.read_table(f"{BUCKET}/hive-export/{f}", filesystem=fs).equals(
                pq.read_table(tmp_path / "hive" / f)
            )
    again = _cli(creds, DEMO, tmp_path / "st", *args[:-1], "--hive", url)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "--overwrite" in again.stderr, again.stderr
    one = _cli(creds, DEMO, tmp_path / "st", "export", "--run", "support-split", "--hive", url, "--overwrite")
    assert one.returncode == 0, one.stderr
    keys = [o["Key"] for o in s3c.list_objects_v2(Bucket=BUCKET, Prefix="hive-export/")["Contents"]]
    assert not any("run=support-single" in k for k in keys) and any("run=support-split" in k for k in keys)


def _cells(df) -> dict:
    """A table's cells by column, a missing value as None (NaN is not equal to itself)."""
    return df.astype(object).where(df.notna(), None).to_dict("list")


def test_the_app_over_the_bucket_shows_the_local_figures(s3, tmp_path, monkeypatch):
    """The Runs and Attribution pages with EVALCORE_DATA=s3://...: the same tables as over DEMO,
    the sidebar naming the URL."""
    from streamlit.testing.v1 import AppTest

    creds, _ = s3
    for k, v in {**creds, "EVALCORE_REMOTE_TTL": "0"}.items():
        monkeypatch.setenv(k, v)
    app = str(Path(__file__).resolve().parent.parent / "app.py")
    shown = {}
    for name, data in (("remote", URL), ("local", str(DEMO))):
        monkeypatch.setenv("EVALCORE_DATA", data)
        monkeypatch.setenv("EVALCORE_STATE", str(tmp_path / f"state-{name}"))
        at = AppTest.from_file(app, default_timeout=60).run()
        if name == "remote":  # (on Home, "/": AppTest keeps no sidebar across a page switch)
            assert [t.value for t in at.sidebar.text] == [f"data: {URL}"]
        at.switch_page("pages/1_runs.py").run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        runs = at.dataframe[0].value
        at.switch_page("pages/2_attribution.py").run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        shown[name] = (_cells(runs), [_cells(t.value) for t in at.dataframe])
    assert shown["remote"] == shown["local"]
    assert len(shown["local"][0]["run"]) >= 10 and shown["local"][1]
