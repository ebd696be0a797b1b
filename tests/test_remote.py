"""`--data s3://bucket/prefix` against a local S3-compatible server (moto's, tests/s3_util.py):
the figures over the demo uploaded to a bucket equal the local ones; a missing bucket, a wrong
key and an object that is not Parquet are each one line naming the URL and a non-zero exit; the
mirror follows the bucket (a changed object is fetched again, a removed one leaves); a key that
would land outside the mirror is refused; and nothing writes into object storage."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO, EVALCORE, tree_hash
from s3_util import BUCKET, s3_client, s3_server, upload

URL = f"s3://{BUCKET}/demo"
COMMANDS = [
    ["runs"],
    ["attribution", "support-split"],
    ["attribution", "support-ternary"],
    ["association", "support-single", "support-split"],
    ["compare", "support-split", "support-split-judgeB"],
    ["agreement", "--gen", "support-g1", "--n-boot", "20"],  # the shipped label sets (labels/) are mirrored too
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
    # nothing was fetched into the state directory but the mirror's files, and those are DEMO's bytes
    (mirror,) = [p for p in (tmp / "state-remote" / "remote").iterdir() if p.is_dir()]
    assert tree_hash(mirror / "runs") == tree_hash(DEMO / "runs")


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
    assert str(tmp_path) not in r.stderr  # the URL, not the mirror's local path
    # an empty prefix holds no data
    r = _cli(creds, f"s3://{BUCKET}/nothing-here", tmp_path / "st4", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "holds no evalcore data" in r.stderr, r.stderr


def test_the_mirror_follows_the_bucket(s3, tmp_path):
    creds, _ = s3
    s3c = s3_client(creds)
    upload(creds, DEMO / "suites", "follow/suites")
    upload(creds, DEMO / "generations", "follow/generations")
    upload(creds, DEMO / "runs" / "support-split", "follow/runs/support-split")
    url = f"s3://{BUCKET}/follow"
    state = tmp_path / "state"
    first = _cli(creds, url, state, "runs", "--json")
    assert first.returncode == 0, first.stderr
    assert [r["run_id"] for r in json.loads(first.stdout)] == ["support-split"]
    # a run added to the bucket appears; a run removed from it disappears, locally too
    upload(creds, DEMO / "runs" / "support-single", "follow/runs/support-single")
    assert [r["run_id"] for r in json.loads(_cli(creds, url, state, "runs", "--json").stdout)] == [
        "support-single",
        "support-split",
    ]
    for o in s3c.list_objects_v2(Bucket=BUCKET, Prefix="follow/runs/support-split/")["Contents"]:
        s3c.delete_object(Bucket=BUCKET, Key=o["Key"])
    assert [r["run_id"] for r in json.loads(_cli(creds, url, state, "runs", "--json").stdout)] == ["support-single"]
    (mirror,) = [p for p in (state / "remote").iterdir() if p.is_dir()]
    assert not (mirror / "runs" / "support-split").exists()
    # within the TTL nothing is listed again: a change shows only once it has passed
    upload(creds, DEMO / "runs" / "support-split", "follow/runs/support-split")
    assert len(json.loads(_cli(creds, url, state, "runs", "--json", EVALCORE_REMOTE_TTL="3600").stdout)) == 1
    assert len(json.loads(_cli(creds, url, state, "runs", "--json").stdout)) == 2


def test_a_key_that_leaves_the_mirror_is_refused(s3, tmp_path):
    creds, _ = s3
    upload(creds, DEMO / "suites", "escape/suites")
    s3_client(creds).put_object(Bucket=BUCKET, Key="escape/runs/x/../../../../outside.txt", Body=b"x")
    r = _cli(creds, f"s3://{BUCKET}/escape", tmp_path / "state", "runs")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "outside.txt" in r.stderr and "not a plain relative key" in r.stderr, r.stderr
    assert not any(p.name == "outside.txt" for p in tmp_path.rglob("*"))


def test_nothing_writes_into_object_storage(s3, tmp_path):
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
