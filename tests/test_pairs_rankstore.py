"""The stored ranking of a closed session of more than two arms (issue 43: the results page's first
render): `rankstore.refresh` after the close writes `<state>/sessions/<id>/report.json`, and
`pairs.report` reads it back, field for field the computed report, while its stamp matches the
inputs; a changed input (the seed, a model grader run added after the close, a judgment or a
withdrawal written into the state, the unblinded record) or a stale, corrupt or partial file is
recomputed, never trusted. The three-arm session is tests/test_pairs_ranking.py's."""

from __future__ import annotations

import json
import shutil

import pytest
from fakellm import fake, fake_server, no_network  # noqa: F401
from test_pairs import make_world
from test_pairs_ranking import ARMS3, _cli, _grade, _three_arm_session

from evalcore import Store
from evalcore import pairwise as P
from evalcore.contract.results import plain
from evalcore.pairwise import rankstore
from evalcore.pairwise.grading import JudgmentStore, unblinded
from evalcore.pairwise.ranking import RankingReport, format_ranking, ranking_report

MODEL = "openai/fake-judge"


@pytest.fixture(scope="module")
def closed_once(tmp_path_factory) -> dict:
    """The three-arm session graded by two people and closed, made once for the module."""
    w = _three_arm_session(tmp_path_factory.mktemp("rankstore"))
    _grade(w, 5)
    P.close_session(w["store"], "tri", w["keys"], n_perm=9)
    rankstore.refresh(w["store"], "tri")  # the close's step: report.json stored
    return w


def _closed(tmp_path, once: dict) -> dict:
    """A copy of the closed session of its own (data, state and keys directories)."""
    w = dict(once)
    for d in ("data", "state", "keys"):
        w[d] = tmp_path / d
        shutil.copytree(once[d], w[d])
    w["store"] = Store(w["data"], w["state"])
    return w


def _json(r) -> dict:
    """The report as `pairs report --json` prints it (through JSON text)."""
    return json.loads(json.dumps(plain(r), default=str, allow_nan=False))


@pytest.fixture
def computes(monkeypatch) -> list[str]:
    """Each computation of a ranking report (the session id), counted by wrapping the real one."""
    seen: list[str] = []

    def counted(store, session_id, rec, *, seed=0):
        seen.append(session_id)
        return ranking_report(store, session_id, rec, seed=seed)

    monkeypatch.setattr(rankstore, "ranking_report", counted)
    return seen


def test_the_stored_report_is_the_computed_one_field_for_field(tmp_path, closed_once, capsys, monkeypatch):
    w = _closed(tmp_path, closed_once)
    st = w["store"]
    path = rankstore.report_path(st, "tri")
    assert path == st.state / "sessions" / "tri" / "report.json" and path.is_file()
    path.unlink()
    stored = rankstore.refresh(st, "tri")  # the close's step
    assert isinstance(stored, RankingReport) and path.is_file()
    computed = ranking_report(st, "tri", unblinded(st, "tri"))
    assert _json(computed)["arms"] == list(ARMS3) and _json(computed)["people"]["judgments"] > 0
    doc = json.loads(path.read_text())
    assert doc["report"] == _json(computed)
    assert doc["stamp"] == rankstore.stamp(st, "tri") and doc["stamp"]["seed"] == 0
    assert doc["stamp"]["people"]["judgments"] == len(w["key_rows"]) * 2

    def refused(*a, **k):
        raise AssertionError("computed again: the stored report was not read")

    monkeypatch.setattr(rankstore, "ranking_report", refused)
    got = P.report(st, "tri")
    assert isinstance(got, RankingReport)
    assert _json(got) == _json(computed)
    assert format_ranking(got) == format_ranking(computed)
    code, out, err = _cli(
        capsys, "--data", w["data"], "--state", st.state, "pairs", "report", "--session", "tri", "--json"
    )
    assert code == 0, err
    assert json.loads(out) == _json(computed)


def test_a_changed_input_is_recomputed_and_a_current_one_is_not(tmp_path, closed_once, computes):
    w = _closed(tmp_path, closed_once)
    st = w["store"]
    first = P.report(st, "tri")  # stored at the close
    assert computes == []
    # another seed: other intervals, computed and stored under that seed
    other = P.report(st, "tri", seed=1)
    assert computes == ["tri"] and other.seed == 1 and _json(other) != _json(first)
    assert json.loads(rankstore.report_path(st, "tri").read_text())["stamp"]["seed"] == 1
    P.report(st, "tri", seed=1)
    assert len(computes) == 1
    # a judgment written into the state after the close (the API refuses it; another writer need not)
    pid = sorted(w["key_rows"])[0]
    JudgmentStore(st).add("tri", pid, "cy", "left")
    added = P.report(st, "tri")
    assert len(computes) == 2 and "cy" in added.by_reviewer and added.judgments == first.judgments + 1
    JudgmentStore(st).withdraw_last("tri", "cy")
    back = P.report(st, "tri")
    assert len(computes) == 3 and "cy" not in back.by_reviewer
    assert _json(back) == _json(first)
    # the unblinded record rewritten (here: its closing time)
    up = st.state / "sessions" / "tri" / "unblinded.json"
    rec = json.loads(up.read_text())
    rec["closed_at"] = "2026-01-02T03:04:05+00:00"
    up.write_text(json.dumps(rec))
    again = P.report(st, "tri")
    assert len(computes) == 4 and again.closed_at == "2026-01-02T03:04:05+00:00"


def test_a_model_grader_run_added_after_the_close_is_ranked(tmp_path, closed_once, capsys, fake, computes):  # noqa: F811
    w = _closed(tmp_path, closed_once)
    st = w["store"]
    assert P.report(st, "tri").graders == [] and computes == []
    base = ["--data", w["data"], "--state", st.state]
    code, out, err = _cli(capsys, *base, "judge-pairs", "--session", "tri", "--model", MODEL, "--api-base", fake.url,
                          "--run-id", "late-grader", "--backoff", 0.01)  # fmt: skip
    assert code == 0, err
    r = P.report(st, "tri")
    assert computes == ["tri"] and [g.run_id for g in r.graders] == ["late-grader"]
    assert r.graders[0].ranking.judgments > 0
    stamp = json.loads(rankstore.report_path(st, "tri").read_text())["stamp"]
    assert [g["run_id"] for g in stamp["graders"]] == ["late-grader"]
    # the run's manifest changed (as a resumed run's does)
    mf = st.run("late-grader").path / "manifest.json"
    mf.write_text(mf.read_text() + "\n")
    P.report(st, "tri")
    assert len(computes) == 2


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not json", "partial report", "wrong types", "stamp of other inputs"],
)
def test_a_corrupt_or_stale_file_is_recomputed_never_trusted(tmp_path, closed_once, computes, damage):
    w = _closed(tmp_path, closed_once)
    st = w["store"]
    path = rankstore.report_path(st, "tri")
    text = path.read_text()
    doc = json.loads(text)
    want = doc["report"]
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "not json":
        path.write_bytes(b"\xff\xfe not a report")
    elif damage == "partial report":
        path.write_text(json.dumps({"stamp": doc["stamp"], "report": {"session_id": "tri"}}))
    elif damage == "wrong types":
        bad = dict(doc["report"], people="nobody", judgments="many")
        path.write_text(json.dumps({"stamp": doc["stamp"], "report": bad}))
    else:  # a file whose figures are of other inputs: a judgment fewer
        stale = dict(
            doc["stamp"], people=dict(doc["stamp"]["people"], judgments=doc["stamp"]["people"]["judgments"] - 1)
        )
        path.write_text(json.dumps({"stamp": stale, "report": dict(doc["report"], judgments=0)}))
    assert computes == []
    got = P.report(st, "tri")
    assert computes == ["tri"] and _json(got) == want
    assert json.loads(path.read_text()) == doc  # stored again, whole


def test_two_arms_are_not_stored_and_an_open_session_is_refused_before_any_file_is_read(tmp_path):
    w = make_world(tmp_path, ("a", "b"), n_items=12, seed=2)
    st = w["store"]
    P.make_session(
        st, "duo", [f"a={w['gens'][0]}", f"b={w['gens'][1]}"], keys_dir=w["keys"], seed=1, key_seed=2, n_perm=0
    )
    path = rankstore.report_path(st, "duo")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"stamp": {}, "report": {}}))
    with pytest.raises(P.SessionOpenError):
        P.report(st, "duo")
    path.unlink()
    P.close_session(st, "duo", w["keys"], n_perm=0)
    assert rankstore.refresh(st, "duo") is None
    assert isinstance(P.report(st, "duo"), P.Report) and not path.exists()
