"""`evalcore import pandalm`: the published PandaLM figures reproduced from ../shared/datasets (skipped
with a reason when it is absent), and the mapping and its errors on a small folder of the same shape."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO, EVALCORE, REPO

from evalcore import Store

SHARED = REPO.parent / "shared" / "datasets" / "pandalm"
needs_shared = pytest.mark.skipif(not (SHARED / "data" / "testset-v1.json").is_file(),
                                  reason="../shared/datasets/pandalm is absent (a fresh clone has no shared data): the "
                                         "published PandaLM figures cannot be recomputed")


def _cli(*args, data: Path | None = None, state: Path | None = None):
    base = [EVALCORE] + (["--data", str(data)] if data else []) + (["--state", str(state)] if state else [])
    return subprocess.run(base + [str(a) for a in args], capture_output=True, text=True)


class _Result:
    def __init__(self, code, out, err):
        self.returncode, self.stdout, self.stderr = code, out, err


@pytest.fixture
def cli(capsys):
    """The command line in this process (the same entry point as `evalcore`, without the start-up)."""
    from evalcore.cli import main

    def run(*args, data: Path | None = None, state: Path | None = None) -> _Result:
        argv = (["--data", str(data)] if data else []) + (["--state", str(state)] if state else [])
        capsys.readouterr()
        try:
            main(argv + [str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code
        out = capsys.readouterr()
        return _Result(code, out.out, out.err)
    return run


@pytest.fixture(scope="module")
def pandalm(tmp_path_factory):
    if not (SHARED / "data" / "testset-v1.json").is_file():
        pytest.skip("../shared/datasets/pandalm is absent")
    root = tmp_path_factory.mktemp("pandalm")
    r = _cli("import", "pandalm", SHARED, "--json", data=root / "data")
    assert r.returncode == 0, r.stderr
    return root, json.loads(r.stdout)


@needs_shared
def test_import_maps_pairs_annotators_and_judges(pandalm):
    root, s = pandalm
    assert (s["items"], s["pairs"], s["judgments"], s["reviewers"]) == (170, 999, 2997,
                                                                        ["annotator1", "annotator2", "annotator3"])
    assert s["gen_ids"] == [f"pandalm-arm{k}" for k in range(1, 6)]
    runs = {r["run_id"]: r for r in s["runs"]}
    assert runs["pandalm-gpt-3.5-turbo"]["unparseable"] == 25 and runs["pandalm-gpt-3.5-turbo"]["status"] == "polluted"
    assert runs["pandalm-pandalm-7b"]["unparseable"] == 0 and runs["pandalm-pandalm-7b"]["status"] == "complete"
    st = Store(root / "data", root / "state")
    assert st.validate()["sessions"] == 1
    sess = st.session("pandalm").manifest
    assert sess.status == "closed" and sess.n_pairs == 999
    # the key is beside the data directory, and the arms (the five models) are named only there
    key = st.sql("SELECT DISTINCT left_arm FROM read_parquet(?) ORDER BY 1",
                 [str(root / "data-keys" / "pandalm" / "key.parquet")])
    assert [k[0] for k in key] == ["bloom-7b", "cerebras-gpt-6.7B", "llama-7b", "opt-7b"]
    blob = b"".join(p.read_bytes() for p in (root / "data").rglob("*") if p.is_file()).lower()
    assert not any(m.encode() in blob for m in ("bloom-7b", "llama-7b", "opt-7b", "pythia-6.9b", "cerebras-gpt"))
    # unparseable verdicts are kept as errors: a null choice, and the call says why
    errs = st.sql("SELECT count(*) FROM read_parquet(?) WHERE error LIKE 'unparseable verdict ''garbage''%'",
                  [st.path_of("run", "pandalm-gpt-3.5-turbo", "calls")])[0][0]
    nulls = st.sql("SELECT count(*) FROM read_parquet(?) WHERE choice IS NULL",
                   [st.path_of("run", "pandalm-gpt-3.5-turbo", "pair_verdicts")])[0][0]
    assert errs == nulls == 25
    # importing again is refused, and the bundled demo is never written
    again = _cli("import", "pandalm", SHARED, data=root / "data")
    assert again.returncode == 2 and "already imported" in again.stderr and again.stderr.count("\n") == 1


@needs_shared
def test_agreement_reproduces_the_published_pandalm_figures(pandalm):
    root, _ = pandalm
    r = _cli("agreement", "--json", data=root / "data", state=root / "state")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["generations"] == []  # no per-criterion runs: the judges are graders of the session
    (s,) = out["sessions"]
    # the annotators: pairwise Cohen's kappa as published (0.85, 0.88, 0.86) and the majority label counts
    cohen = {(c["a"], c["b"]): c for c in s["reviewers"]["cohen"]}
    assert [round(cohen[p]["kappa"], 2) for p in (("annotator1", "annotator2"), ("annotator1", "annotator3"),
                                                  ("annotator2", "annotator3"))] == [0.85, 0.88, 0.86]
    assert all(c["n"] == 999 for c in cohen.values())
    assert (s["majority"]["same"], s["majority"]["left"], s["majority"]["right"]) == (105, 422, 472)
    assert s["majority"]["no_majority"] == 0
    # each judge against the majority of people: three classes, ties included, unparseable counted as misses
    g = {x["run_id"]: x for x in s["graders"] if x["order"] == "as_shown"}
    gpt, panda = g["pandalm-gpt-3.5-turbo"], g["pandalm-pandalm-7b"]
    assert (gpt["n"], gpt["unparseable"], round(gpt["accuracy"], 3), round(gpt["kappa"], 3)) == (999, 25, 0.698, 0.476)
    assert (panda["n"], round(panda["accuracy"], 3), round(panda["kappa"], 3)) == (999, 0.668, 0.435)
    assert gpt["kappa_ci"][0] < gpt["kappa"] < gpt["kappa_ci"][1]
    # the two judges against each other, unparseable dropped
    (jj,) = s["grader_pairs"]
    assert (jj["n"], jj["dropped_unparseable"], round(jj["agreement"], 3), round(jj["kappa"], 3)) == (974, 25, 0.702,
                                                                                                      0.473)
    # three fixed people: Fleiss and Krippendorff too
    assert s["reviewers"]["fleiss"]["n"] == 999 and s["reviewers"]["krippendorff"]["alpha"] > 0.8


# --------------------------------------------------------------------------- a folder of the same shape


def _write(folder: Path, rows=None, gpt=None, panda=None) -> Path:
    d = folder / "data"
    d.mkdir(parents=True, exist_ok=True)
    rows = rows if rows is not None else [
        {"idx": 0, "motivation_app": "Gmail", "cmp_key": "m-a_m-b", "instruction": "Say hi.", "input": "",
         "response1": "Hi.", "response2": True, "annotator1": 1, "annotator2": 1, "annotator3": 0},
        {"idx": 1, "motivation_app": "Gmail", "cmp_key": "m-b_m-c", "instruction": "Say hi.", "input": "",
         "response1": "Hello!", "response2": "Hey.", "annotator1": 2, "annotator2": 2, "annotator3": 2},
        {"idx": 2, "motivation_app": "IMDB", "cmp_key": "m-a_m-c", "instruction": "Rate it.", "input": "A film.",
         "response1": "5/5", "response2": "Hey.", "annotator1": 0, "annotator2": 1, "annotator3": 2},
    ]
    gpt = gpt if gpt is not None else [{"idx": 0, "gpt_result": "1", "gpt_reason": "first"},
                                       {"idx": 1, "gpt_result": "garbage", "gpt_reason": ""},
                                       {"idx": 2, "gpt_result": "Tie", "gpt_reason": "same"}]
    panda = panda if panda is not None else [{"idx": k, "pandalm_result": v, "pandalm_reason": "r"}
                                             for k, v in enumerate((1, 2, 0))]
    (d / "testset-v1.json").write_text(json.dumps(rows))
    (d / "gpt-3.5-turbo-testset-v1.json").write_text(json.dumps(gpt))
    (d / "pandalm-7b-testset-v1.json").write_text(json.dumps(panda))
    return folder


def test_small_folder_mapping(tmp_path, cli):
    src = _write(tmp_path / "src")
    r = cli("import", "pandalm", src, "--json", data=tmp_path / "data")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["items"] == 2 and s["pairs"] == 3 and s["answers_stored_as_json_booleans"] == 1
    st = Store(tmp_path / "data", tmp_path / "state")
    pairs = {p["item_id"]: p for p in st.records("SELECT * FROM read_parquet(?) ORDER BY right_text",
                                                 [st.path_of("session", "pandalm", "pairs")])}
    assert {p["right_text"] for p in pairs.values()} >= {"True"}  # a JSON true answer kept as the text it stood for
    j = st.records("SELECT reviewer, choice FROM read_parquet(?) ORDER BY ALL", [str(tmp_path / "data" / "sessions"
                                                                                 / "pandalm" / "judgments.parquet")])
    assert sorted(x["choice"] for x in j) == sorted(["left", "left", "same", "right", "right", "right", "same", "left",
                                                     "right"])
    assert s["gen_ids"] == ["pandalm-arm1", "pandalm-arm2", "pandalm-arm3"]  # m-a, m-b, m-c by first appearance
    key = st.records("SELECT left_arm, right_arm FROM read_parquet(?) ORDER BY ALL",
                     [str(tmp_path / "data-keys" / "pandalm" / "key.parquet")])
    assert [(k["left_arm"], k["right_arm"]) for k in key] == [("m-a", "m-b"), ("m-a", "m-c"), ("m-b", "m-c")]
    outs = st.records("SELECT item_id, round, output FROM read_parquet(?) ORDER BY ALL",
                      [st.path_of("generation", "pandalm-arm2", "outputs")])
    assert [o["output"] for o in outs] == ["True", "Hello!"]  # m-b answered item 1 twice, differently: two rounds
    assert [o["round"] for o in outs] == [1, 2]
    pv = st.records("SELECT choice FROM read_parquet(?)", [st.path_of("run", "pandalm-gpt-3.5-turbo",
                                                                      "pair_verdicts")])
    assert sorted(x["choice"] or "-" for x in pv) == ["-", "left", "same"]
    out = json.loads(cli("agreement", "--json", data=tmp_path / "data", state=tmp_path / "state").stdout)
    (sess,) = out["sessions"]
    assert sess["majority"] == {"left": 1, "same": 0, "right": 1, "no_majority": 1, "unjudged": 0}


@pytest.mark.parametrize("change, field", [
    (lambda rows, gpt, panda: rows[1].update(idx=5), "idx"),
    (lambda rows, gpt, panda: rows[0].update(annotator2=3), "annotator2"),
    (lambda rows, gpt, panda: rows[0].update(cmp_key="onlyone"), "cmp_key"),
    (lambda rows, gpt, panda: rows[2].pop("response1"), "response1"),
    (lambda rows, gpt, panda: gpt.pop(), "idx"),
    (lambda rows, gpt, panda: panda[0].update(pandalm_result=[1]), "pandalm_result"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, cli, change, field):
    src = _write(tmp_path / "src")
    d = src / "data"
    rows = json.loads((d / "testset-v1.json").read_text())
    gpt = json.loads((d / "gpt-3.5-turbo-testset-v1.json").read_text())
    panda = json.loads((d / "pandalm-7b-testset-v1.json").read_text())
    change(rows, gpt, panda)
    _write(tmp_path / "src", rows, gpt, panda)
    r = cli("import", "pandalm", src, data=tmp_path / "data")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert f": {field}: " in r.stderr
    assert not (tmp_path / "data").exists() and not (tmp_path / "data-keys").exists()


def test_missing_folder_and_the_demo_are_refused(tmp_path, cli):
    r = cli("import", "pandalm", tmp_path / "nowhere", data=tmp_path / "data")
    assert r.returncode == 2 and "does not exist" in r.stderr
    r = cli("import", "pandalm", _write(tmp_path / "src"), data=DEMO)
    assert r.returncode == 2 and "bundled demo" in r.stderr
