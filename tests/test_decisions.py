"""Decisions that cannot mislead: the latency bar, the ternary headline as a figure, compare and gate
over the items both sides answered, polluted results (judge and generate exit 1 unless
--allow-polluted; trend, compare and the ledger mark them). Each test fails on the code before
issue 18's change."""

from __future__ import annotations

import subprocess

import pytest
from compare_world import N, make_compare_world
from conftest import EVALCORE
from fakellm import fake, fake_server, make_world, no_network  # noqa: F401
from test_generate import run as _main  # the command line in-process, (code, stdout, stderr)

from evalcore.analysis.comparison import compare, metrics_of
from evalcore.analysis.gating import gate, parse_latency_bar, trend
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.review.ledger import Ledger, export_markdown
from evalcore.storage.store import Store


def _cli(data, state, *args, check=None):
    p = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stderr)
    return p


def test_latency_stands_beside_score_and_the_bar_fails_a_slow_candidate(tmp_path):
    data = tmp_path / "data"
    make_compare_world(data, strong=True, latency_ms=(7700.0, 34800.0))  # seed 004's reranker
    st = Store(data, tmp_path / "state")
    c = compare(st, "r-base", "r-cand")
    sysb, sysc = c.latency.baseline["system"], c.latency.candidate["system"]
    assert sysb["mean_ms"] == pytest.approx(7700.0 * 2) and sysc["mean_ms"] == pytest.approx(34800.0 * 2)
    assert sysb["p95_ms"] == pytest.approx(7700.0 * 3) and c.latency.candidate["judge"]["mean_ms"] == 30.0
    allow = tmp_path / "allow.txt"
    allow.write_text("q12 alice 2999-01-01 known\n")
    assert gate(st, "r-base", "r-cand", allowlist=allow).gate.passed is True  # no bar: latency is reported only
    g = gate(st, "r-base", "r-cand", allowlist=allow, max_latency_increase="25%").gate
    assert g.passed is False and "latency per answer (mean) rose" in " ".join(g.reasons)
    assert gate(st, "r-base", "r-cand", allowlist=allow, max_latency_increase="120s").gate.passed is True
    p = _cli(data, tmp_path / "state", "gate", "r-base", "r-cand", "--allowlist", str(allow),
             "--max-latency-increase", "2s", check=1)
    assert "| system mean | 15,400 ms | 69,600 ms |" in p.stdout and "Latency bar" in p.stdout
    with pytest.raises(InputError, match="not a latency bar"):
        parse_latency_bar("fast")
    # the ledger carries it
    e = Ledger(st).add(title="reranker", by="t", type_="rejected", baseline="r-base", candidate="r-cand")
    assert e["figures"]["latency"]["candidate"]["system"]["p95_ms"] == pytest.approx(34800.0 * 3)
    assert "latency per answer: baseline system 15,400 ms mean" in export_markdown(Ledger(st).entries())


def _ternary_world(tmp_path):
    """Two runs over 4 items, 1 round, one ternary criterion ``answer``: labels per item
    baseline correct, partial, wrong, wrong -> (1 + 0.5) / 4 = 0.375; candidate correct, correct,
    partial, wrong -> 2.5 / 4 = 0.625 (all_pass: 0.25 and 0.5)."""
    data = tmp_path / "data"
    make_compare_world(data)  # reuse its suite; add a ternary pair of runs
    st = Store(data, tmp_path / "state")
    rubric = S.Rubric(criteria=[S.Criterion(name="answer", kind="ternary")])
    labels = {"t-base": ["correct", "partial", "wrong", "wrong"], "t-cand": ["correct", "correct", "partial", "wrong"]}
    for rid, gid in (("t-base", "g-base"), ("t-cand", "g-cand")):
        vs = [{"run_id": rid, "item_id": f"q{k:02d}", "gen_round": 1, "criterion": "answer", "judge_round": 1,
               "passed": lab == "correct", "label": lab, "position": 0} for k, lab in enumerate(labels[rid])]
        rm = S.RunManifest(run_id=rid, gen_id=gid, created_at="2026-02-01T00:00:00Z", rubric=rubric,
                           rubric_hash=rubric.hash(), mode="single", field_order=["answer"], judge_model="j",
                           temperature=0.0, prompt_hash="sha256:p", source="imported", judge_rounds=1)
        st.write_run(rm, vs, [])
    return st


def test_the_ternary_headline_is_a_figure_of_compare_gate_and_trend(tmp_path):
    st = _ternary_world(tmp_path)
    assert metrics_of(st, "t-base", "t-cand") == ["all_pass", "ternary", "answer"]
    c = compare(st, "t-base", "t-cand", headline="ternary")
    f = c.figures["ternary"]
    assert f.a.mean == pytest.approx(0.375) and f.b.mean == pytest.approx(0.625)
    assert c.figures["all_pass"].a.mean == pytest.approx(0.25)
    assert f.delta.mean == pytest.approx(0.25)  # (0 + 0.5 + 0.5 + 0) / 4
    assert c.fixed_miss_count == 1  # q02: wrong -> partial is no longer a miss
    assert gate(st, "t-base", "t-cand", headline="ternary").headline == "ternary"
    t = trend(st, metric="ternary")
    assert [(p.run_id, p.value) for p in t.points] == [("t-base", 0.375), ("t-cand", 0.625)]


def test_compare_restricts_to_the_items_both_answered_and_names_coverage_first(tmp_path):
    data = tmp_path / "data"
    make_compare_world(data, candidate_items=20)
    st = Store(data, tmp_path / "state")
    c = compare(st, "r-base", "r-cand")
    cov = c.coverage
    assert (cov.baseline_items, cov.candidate_items, cov.shared_items) == (N, 20, 20)
    assert cov.differs and c.rivals[0].startswith("item coverage (30 vs 20 items")
    assert "item coverage differs" in c.notes[0]
    # baseline over q00-q19 only: q00-q11 fail every round, q12-q15 pass r1 r2, q16-q19 pass all
    f = c.figures["all_pass"]
    assert f.a.by_round == pytest.approx([8 / 20, 8 / 20, 5 / 20])
    assert f.a.mean == pytest.approx(f.b.mean - f.delta.mean)
    e = Ledger(st).add(title="t", by="t", type_="rejected", baseline="r-base", candidate="r-cand")
    assert any(f.startswith("rival explanations: item coverage") for f in e["flags"])


def test_a_polluted_run_is_marked_in_compare_trend_and_the_ledger(tmp_path):
    data = tmp_path / "data"
    make_compare_world(data, status="polluted")
    st = Store(data, tmp_path / "state")
    c = compare(st, "r-base", "r-cand")
    assert c.polluted == ["r-cand"] and any("r-cand is POLLUTED" in n for n in c.notes)
    t = trend(st)
    assert {p.run_id: p.polluted for p in t.points} == {"r-base": False, "r-cand": True}
    assert t.polluted == ["r-cand"]
    p = _cli(data, tmp_path / "state", "trend", check=0)
    (line,) = [x for x in p.stdout.splitlines() if "r-cand" in x]
    assert "POLLUTED" in line
    e = Ledger(st).add(title="t", by="t", type_="rejected", baseline="r-base", candidate="r-cand")
    assert "r-cand is POLLUTED" in e["flags"] and "POLLUTED: r-cand" in export_markdown(Ledger(st).entries())


@pytest.fixture
def judge_world(tmp_path):
    data = tmp_path / "data"
    make_world(data, 8)
    return data, tmp_path / "state"




def test_generate_exits_1_on_a_polluted_result_unless_allowed(capsys, judge_world, fake, no_network):  # noqa: F811
    fake.configure(always="missing")
    base = ["generate", "--suite", "s", "--model", "openai/fake-writer", "--api-base", fake.url, "--backoff", 0.01,
            "--limit", 2, "--max-retries", 0]
    code, out, err = _main(capsys, judge_world, *base, "--gen-id", "gen1")
    assert code == 1 and "POLLUTED" in out
    (line,) = [x for x in err.splitlines() if "POLLUTED" in x]
    assert "the aggregate of gen1 is POLLUTED: 2 call(s) failed" in line and "--allow-polluted" in line
    code, out, err = _main(capsys, judge_world, *base, "--gen-id", "gen2", "--allow-polluted")
    assert code == 0 and "POLLUTED" in out
    assert Store(*judge_world).generation("gen2").manifest.status == "polluted"


def test_judge_exits_1_on_a_polluted_run_unless_allowed(capsys, judge_world, fake, no_network):  # noqa: F811
    rubric = judge_world[0].parent / "r.toml"
    rubric.write_text('[[criteria]]\nname = "ok"\nkind = "binary"\ndescription = "is it right"\n')
    fake.configure(always="500")
    base = ["judge", "--gen", "g", "--rubric", rubric, "--mode", "single", "--model", "openai/fake-judge", "--api-base", fake.url,
            "--backoff", 0.01, "--limit", 1, "--max-retries", 0]
    code, out, err = _main(capsys, judge_world, *base, "--run-id", "bad")
    assert code == 1 and "the aggregate of bad is POLLUTED" in err, err
    code, out, err = _main(capsys, judge_world, *base, "--run-id", "bad2", "--allow-polluted")
    assert code == 0 and Store(*judge_world).run("bad2").manifest.status == "polluted"
