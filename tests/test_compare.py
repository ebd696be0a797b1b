"""Compare configurations: the knob diff (table-driven), rival explanations and measurement
changes, per-round figures, paired deltas, stable wins and regressions, the noise floor, power,
the gate and its allowlist, the trend. Figures are derived by hand in tests/compare_world.py."""

from __future__ import annotations

import json
import math
import re
import subprocess
from datetime import date, datetime, timezone
from pathlib import Path

import numpy as np
import pytest
from compare_world import N, add_rejudge, make_compare_world
from conftest import DEMO, EVALCORE, tree_hash

from evalcore.analysis.comparepower import power
from evalcore.analysis.comparison import compare as compare_runs
from evalcore.analysis.comparison import two_sided_bar
from evalcore.analysis.configs import diff_knobs, knob_values, meaning
from evalcore.analysis.gating import gate, read_allowlist, trend
from evalcore.analysis.selection import Selection
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- table-driven knob diff

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
RUBRIC = S.Rubric(criteria=[S.Criterion(name="ok", kind="binary")])


def _gen(**over) -> S.GenerationManifest:
    knobs = {"generator_model": "writer-2026-01-01", "temperature": 0.7, "writer_prompt_hash": "sha256:w1",
             "revision_budget": 1, "token_budget": 800, "corpus_snapshot": "c-2026-01", "retrieval": "bm25 k=4",
             "reranker": "none"}
    knobs.update(over.pop("knobs", {}))
    base = dict(gen_id="g", suite_id="s", suite_hash="sha256:suite", created_at=NOW, knobs=knobs, rounds=3,
                source="imported", outputs_hash="sha256:out")
    base.update(over)
    return S.GenerationManifest(**base)


def _run(**over) -> S.RunManifest:
    knobs = {"calibration": "v1"}
    knobs.update(over.pop("knobs", {}))
    base = dict(run_id="r", gen_id="g", created_at=NOW, rubric=RUBRIC, rubric_hash="sha256:rubric", mode="single",
                field_order=["ok"], judge_model="judge-2026-01-01", temperature=0.0, seed=7, prompt_hash="sha256:p",
                postprocess_version="pp-1", retry_policy={"max_retries": 2}, structured_output="json_schema",
                reuse_cache=False, judge_rounds=1, source="judged", price_map_version="prices-1", prompt_variant="default",
                knobs=knobs)
    base.update(over)
    return S.RunManifest(**base)


# (knob the diff must name, change to the generation, change to the run)
CASES = [
    ("suite_hash", {"suite_hash": "sha256:other"}, {}),
    ("generator_model", {"knobs": {"generator_model": "writer-2026-02-01"}}, {}),
    ("generator_temperature", {"knobs": {"temperature": 0.2}}, {}),
    ("writer_prompt_hash", {"knobs": {"writer_prompt_hash": "sha256:w2"}}, {}),
    ("revision_budget", {"knobs": {"revision_budget": 2}}, {}),
    ("token_budget", {"knobs": {"token_budget": 1600}}, {}),
    ("corpus_snapshot", {"knobs": {"corpus_snapshot": "c-2026-02"}}, {}),
    ("retrieval", {"knobs": {"retrieval": "hybrid k=8"}}, {}),
    ("system.reranker", {"knobs": {"reranker": "cross-encoder"}}, {}),
    ("generation_rounds", {"rounds": 1}, {}),
    ("judge_model", {}, {"judge_model": "judge-2026-06-01"}),
    ("judge_prompt_hash", {}, {"prompt_hash": "sha256:q"}),
    ("rubric_hash", {}, {"rubric_hash": "sha256:rubric2"}),
    ("judge_temperature", {}, {"temperature": 0.5}),
    ("judge_seed", {}, {"seed": 8}),
    ("harness_mode", {}, {"mode": "split"}),
    ("field_order", {}, {"field_order": "rotate"}),
    ("prompt_variant", {}, {"prompt_variant": "independent"}),
    ("postprocess_version", {}, {"postprocess_version": "pp-2"}),
    ("retry_policy", {}, {"retry_policy": {"max_retries": 4}}),
    ("structured_output", {}, {"structured_output": "tolerant-parse"}),
    ("cache_use", {}, {"reuse_cache": True}),
    ("price_map_version", {}, {"price_map_version": "prices-2"}),
    ("judge_rounds", {}, {"judge_rounds": 3}),
    ("judge.calibration", {}, {"knobs": {"calibration": "v2"}}),
]


@pytest.mark.parametrize("knob, gen_change, run_change", CASES, ids=[c[0] for c in CASES])
def test_each_knob_alone_is_named_alone(knob, gen_change, run_change):
    a = knob_values(_gen(), _run())
    b = knob_values(_gen(**gen_change), _run(**run_change))
    rows = diff_knobs(a, b)
    changed = [r["knob"] for r in rows if r["status"] != "held"]
    assert changed == [knob]
    assert next(r for r in rows if r["knob"] == knob)["status"] == "differs"


def test_cases_cover_every_knob_of_a_full_configuration():
    names = {r["knob"] for r in knob_values(_gen(), _run())}
    assert names == {c[0] for c in CASES}


def test_identical_manifests_hold_every_knob():
    rows = diff_knobs(knob_values(_gen(), _run()), knob_values(_gen(), _run()))
    assert rows and {r["status"] for r in rows} == {"held"}
    assert meaning(rows, same_outputs=True)["kind"] == "identical configuration"


def test_a_knob_missing_on_both_sides_is_not_recorded_never_held():
    a = knob_values(_gen(knobs={"corpus_snapshot": None}), _run(seed=None))
    b = knob_values(_gen(knobs={"corpus_snapshot": None}), _run(seed=None))
    rows = {r["knob"]: r["status"] for r in diff_knobs(a, b)}
    assert rows["corpus_snapshot"] == "not recorded"
    assert rows["judge_seed"] == "not recorded"
    assert list(rows.values()).count("not recorded") == 2


def test_a_knob_recorded_on_one_side_is_a_possible_explanation():
    rows = diff_knobs(knob_values(_gen(knobs={"corpus_snapshot": None}), _run()), knob_values(_gen(), _run()))
    st = {r["knob"]: r["status"] for r in rows}
    assert st["corpus_snapshot"] == "one side"
    assert meaning(rows, same_outputs=False)["changed"] == ["corpus_snapshot"]


def test_two_differing_knobs_name_each_rival_explanation():
    rows = diff_knobs(knob_values(_gen(), _run()),
                      knob_values(_gen(knobs={"writer_prompt_hash": "sha256:w2", "token_budget": 1600}), _run()))
    m = meaning(rows, same_outputs=False)
    assert m["rivals"] == ["writer_prompt_hash", "token_budget"]
    assert "writer prompt hash" in m["warnings"][0] and "token budget" in m["warnings"][0]
    m2 = meaning(rows, same_outputs=False, under_test="token_budget")
    assert m2["rivals"] == ["writer_prompt_hash"] and "besides token_budget" in m2["warnings"][0]


def test_judge_only_change_over_identical_outputs_is_a_measurement_change():
    rows = diff_knobs(knob_values(_gen(), _run()), knob_values(_gen(), _run(judge_model="judge-2026-06-01")))
    m = meaning(rows, same_outputs=True)
    assert m["kind"] == "measurement change" and m["measurement_change"] and not m["rivals"]
    # the same judge change over different answers is not a measurement change
    assert meaning(rows, same_outputs=False)["measurement_change"] is False
    # a system knob and a judge knob: both kinds of change, confounded
    rows2 = diff_knobs(knob_values(_gen(), _run()),
                       knob_values(_gen(knobs={"temperature": 0.1}), _run(judge_model="judge-2026-06-01")))
    assert meaning(rows2, same_outputs=False)["kind"] == "system and measurement change"


# --------------------------------------------------------------------------- the fixture's figures


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("cmp") / "data"
    make_compare_world(data)
    add_rejudge(data)
    return data


@pytest.fixture
def store(world, tmp_path) -> Store:
    return Store(world, tmp_path / "state")


def test_per_round_figures_and_paired_delta(store):
    c = compare_runs(store, "r-base", "r-cand")
    f = c.figures["all_pass"]
    assert f.a.by_round == pytest.approx([18 / 30, 18 / 30, 15 / 30])
    assert f.b.by_round == pytest.approx([29 / 30, 29 / 30, 17 / 30])
    assert f.a.spread == pytest.approx(3 / 30) and f.b.spread == pytest.approx(12 / 30)
    assert f.noise_floor == pytest.approx(12 / 30)
    assert f.delta.mean == pytest.approx(8 / 30)
    assert f.delta.items == N
    lo, hi = f.delta.ci95
    assert 0 < lo < 8 / 30 < hi
    assert f.within_noise is True  # 0.267 <= 0.4
    assert c.figures["tone"].delta.mean == 0.0
    assert c.rounds_paired == 3


def test_stable_regression_and_no_stable_win_fail_the_two_sided_bar(store):
    c = compare_runs(store, "r-base", "r-cand")
    f = c.figures["all_pass"]
    assert f.stable_wins == 0 and f.stable_win_items == []
    assert f.stable_regressions == 1 and f.stable_regression_items == ["q12"]
    # the interval lies above zero, but the gain (+26.7 pts) is inside the noise floor (40 pts)
    assert c.verdict.clears_interval is True and c.verdict.clears_noise_floor is False
    assert c.verdict.gain is False and "within the noise floor 40.0 pts" in c.verdict.text
    assert c.verdict.holds is False
    assert c.verdict.regressions_own == ["q12"]
    assert c.new_misses == ["q12"]
    assert c.fixed_miss_count == 12  # q00-q11: missed in every baseline round, passed in some candidate round
    # reversed, q12 is a stable win and q00-q11 are not stable regressions (equal in round 3)
    r = compare_runs(store, "r-cand", "r-base").figures["all_pass"]
    assert r.stable_win_items == ["q12"] and r.stable_regressions == 0


def test_bootstrap_interval_is_seeded(store):
    a = compare_runs(store, "r-base", "r-cand", seed=3).figures["all_pass"].delta.ci95
    b = compare_runs(store, "r-base", "r-cand", seed=3).figures["all_pass"].delta.ci95
    c = compare_runs(store, "r-base", "r-cand", seed=4).figures["all_pass"].delta.ci95
    assert a == b and a != c


def test_two_sided_bar_rules():
    ok = [("a", "complete"), ("b", "complete")]

    def bar(mean, low, wins, regs, n_regs, allow, rounds, statuses, noise=0.05):
        return two_sided_bar(mean, low, wins, regs, n_regs, allow, rounds, statuses, noise_floor=noise)

    assert bar(0.1, 0.02, 0, [], 0, set(), 3, ok).holds is True
    # a stable win and a positive mean no longer make a gain: the interval must clear the bar
    assert bar(0.1, -0.01, 1, [], 0, set(), 3, ok).holds is False
    assert bar(0.1, -0.01, 0, [], 0, set(), 3, ok).gain is False
    assert bar(-0.1, -0.2, 1, [], 0, set(), 3, ok).gain is False
    # and the noise floor: a gain inside it, or an unknown floor (one round), is no gain
    v = bar(0.1, 0.02, 0, [], 0, set(), 3, ok, noise=0.1)
    assert v.gain is False and v.clears_interval is True and "within the noise floor 10.0 pts" in v.text
    # a loss past the floor is not "within" it (issue 37.6), on both sides of -floor, in one unit (points)
    v = bar(-0.25, -0.32, 0, [], 0, set(), 3, ok, noise=0.065)
    assert "a loss beyond the noise floor: mean delta -25.0 pts is below minus the noise floor 6.5 pts" in v.text
    assert "within the noise floor" not in v.text
    v = bar(-0.05, -0.12, 0, [], 0, set(), 3, ok, noise=0.065)
    assert "mean delta -5.0 pts is within the noise floor 6.5 pts" in v.text and "a loss" not in v.text
    assert not re.search(r"[+-]?0\.\d{3}", bar(0.1, -0.01, 0, [], 0, set(), 3, ok).text)  # no proportions beside points
    assert bar(0.1, 0.02, 0, [], 0, set(), 1, ok, noise=None).gain is False
    assert two_sided_bar(0.1, 0.02, 0, [], 0, set(), 3, ok, noise_floor=0.0, bar=0.03).gain is False
    v = bar(0.1, 0.02, 0, ["q2"], 1, set(), 3, ok)
    assert v.holds is False and v.regressions_own == ["q2"] and v.regressions_own_count == 1
    v = bar(0.1, 0.02, 0, ["q2"], 1, {"q2"}, 3, ok)
    assert v.holds is True and v.regressions_allowed == ["q2"] and v.regressions_own_count == 0
    # without an allowlist the list may be the first few: the count decides
    v = bar(0.1, 0.02, 0, ["q2", "q3"], 120, set(), 3, ok)
    assert v.regressions_own_count == 120 and "120 stable regressions of its own: q2, q3 ..." in v.text
    assert bar(0.1, 0.02, 0, [], 0, set(), 3, [("a", "complete"), ("b", "polluted")]).holds is False
    assert "one generation round" in bar(0.1, 0.02, 0, [], 0, set(), 1, ok).notes[0]


def test_lists_are_cut_to_the_limit_but_counts_are_not(store):
    c = compare_runs(store, "r-cand", "r-base", list_limit=1)  # reversed: q00-q11 are fixed misses of r-cand
    assert c.new_miss_count == 12 and len(c.new_misses) == 1


def test_power_matches_the_normal_approximation():
    sd, n = 0.5, 100
    p = power(sd, 0.0, 3, n, 0.05)
    z = (1.959964 + 0.841621) * sd / math.sqrt(n)  # 0.1401: the t-test needs a little more
    assert z < p.mde < z * 1.02
    # items needed for an effect equal to the MDE at these rounds is the item count
    p2 = power(sd, 0.0, 3, n, p.mde)
    assert p2.items_needed["3"] in (n, n + 1)
    # round noise: more rounds need fewer items; with no item-to-item spread, rounds alone get there
    p3 = power(0.5, 0.75, 3, 60, 0.1)  # var 0.25 = tau^2 0 + 0.75 / 3
    assert p3.tau2 == pytest.approx(0.0)
    needed = [p3.items_needed[k] for k in ("1", "2", "3", "5", "10")]
    assert needed == sorted(needed, reverse=True) and needed[0] > needed[-1]
    assert p3.rounds_needed is not None
    # all spread between items: rounds cannot reach a small effect
    p4 = power(0.5, 0.0, 3, 30, 0.01)
    assert p4.rounds_needed is None and "more items can" in p4.rounds_note


def test_items_needed_is_the_smallest_size_with_the_power_and_solve_powers_root_rounded_up():
    """The items needed come from one vectorised ttest_power call instead of a root search per
    effect: the same whole number as statsmodels' solve_power rounded up wherever that converges,
    and exactly the smallest size whose power reaches the target; None (solved the slow way by
    power()) where the window around the normal approximation misses it or scipy gives NaN."""
    import warnings

    from statsmodels.stats.power import TTestPower, ttest_power

    from evalcore.analysis.comparepower import items_needed

    tp = TTestPower()
    effects = list(np.geomspace(0.003, 4.0, 120))
    found = 0
    for alpha, target in ((0.05, 0.8), (0.01, 0.9), (0.1, 0.5)):
        for d, n in zip(effects, items_needed(effects, alpha, target)):
            if n is None:
                continue
            found += 1
            assert ttest_power(d, float(n), alpha, alternative="two-sided") >= target, (d, n)
            assert n == 2 or ttest_power(d, float(n - 1), alpha, alternative="two-sided") < target, (d, n)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                root = float(np.atleast_1d(tp.solve_power(effect_size=d, nobs=None, alpha=alpha, power=target))[0])
            if math.isfinite(root):
                assert n == math.ceil(root), (alpha, target, d, n, root)
    assert found > 300  # (nearly every effect is found in the window)
    assert items_needed([0.0, -0.1], 0.05, 0.8) == [None, None]
    # and power() gives the same figures either way
    p = power(0.4, 0.05, 3, 500, 0.05)
    for r, n in p.items_needed.items():
        s = math.sqrt(p.tau2 + p.within_var / int(r))
        want = tp.solve_power(effect_size=0.05 / s, nobs=None, alpha=0.05, power=0.8, alternative="two-sided")
        assert n == math.ceil(float(np.atleast_1d(want)[0])), (r, n)


def test_holdout_items_are_left_out_unless_asked(tmp_path):
    data = tmp_path / "data"
    make_compare_world(data, holdout=(12,))
    st = Store(data, tmp_path / "state")
    hidden = compare_runs(st, "r-base", "r-cand").figures["all_pass"]
    assert hidden.delta.items == N - 1 and hidden.stable_regressions == 0
    shown = compare_runs(st, "r-base", "r-cand", include_holdout=True).figures["all_pass"]
    assert shown.delta.items == N and shown.stable_regression_items == ["q12"]


# --------------------------------------------------------------------------- the gate


def _cli(data, state, *args, check=None):
    p = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stderr)
    return p


@pytest.fixture(scope="module")
def strong(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("strong") / "data"
    make_compare_world(data, strong=True)
    return data


def test_gate_fails_inside_the_noise_floor(world, tmp_path):
    p = _cli(world, tmp_path / "state", "gate", "r-base", "r-cand", "--json", check=1)
    g = json.loads(p.stdout)
    assert g["verdict"]["clears_interval"] is True and g["verdict"]["clears_noise_floor"] is False
    assert any("within the noise floor" in r for r in g["gate"]["reasons"])


def test_gate_fails_on_the_regression_and_passes_with_it_allowlisted(strong, tmp_path):
    state = tmp_path / "state"
    p = _cli(strong, state, "gate", "r-base", "r-cand", "--json", check=1)
    g = json.loads(p.stdout)["gate"]
    assert g["passed"] is False and g["new_misses_own"] == ["q12"]
    today = datetime.now(timezone.utc).date()
    later = date(today.year + 1, 1, 1).isoformat()
    allow = tmp_path / "allow.txt"
    allow.write_text(f"# known misses\nq12  alice  {later}  parser bug, fix pending\n")
    md = tmp_path / "summary.md"
    p = _cli(strong, state, "gate", "r-base", "r-cand", "--allowlist", str(allow), "--markdown", str(md), "--json",
             check=0)
    g = json.loads(p.stdout)["gate"]
    assert g["passed"] is True and g["new_misses_own"] == [] and g["reasons"] == []
    (e,) = g["allowlist_entries"]
    assert e["state"] == "still missed" and e["owner"] == "alice"
    assert e["expires_in_days"] == (date.fromisoformat(later) - today).days
    text = md.read_text()
    assert text.startswith("## evalcore gate: PASS")
    assert f"| q12 | alice | {later} |" in text
    assert "+40.0 pts" in text  # 12/30


def test_an_allowlisted_item_now_passing_fails_the_gate_until_removed_or_accepted(strong, tmp_path):
    later = date(datetime.now(timezone.utc).year + 1, 1, 1).isoformat()
    allow = tmp_path / "allow.txt"
    allow.write_text(f"q12 alice {later} parser bug\nq05 bob {later} flaky\n")  # q05 passes every candidate round
    state = tmp_path / "state"
    p = _cli(strong, state, "gate", "r-base", "r-cand", "--allowlist", str(allow), "--json", check=1)
    g = json.loads(p.stdout)["gate"]
    assert g["allowlist_now_passing"] == ["q05"]
    assert any("now pass: remove q05" in r for r in g["reasons"])
    p = _cli(strong, state, "gate", "r-base", "r-cand", "--allowlist", str(allow), "--accept-now-passing", check=0)
    assert "accepted with --accept-now-passing" in p.stdout and "q05" in p.stdout


def test_an_expired_allowlist_entry_fails_the_gate(strong, store, tmp_path):
    allow = tmp_path / "a.txt"
    allow.write_text("q12 alice 2026-11-01 parser bug\n")
    st = Store(strong, tmp_path / "state")
    g = gate(st, "r-base", "r-cand", allowlist=allow, today=date(2026, 10, 29)).gate
    assert g.allowlist_entries[0].expires_in_days == 3 and g.passed is True
    g = gate(st, "r-base", "r-cand", allowlist=allow, today=date(2026, 11, 2)).gate
    assert g.passed is False and g.allowlist_expired == ["q12"]
    assert g.allowlist_entries[0].state.startswith("expired")
    # an expired entry no longer excuses its item either
    assert g.new_misses_own == ["q12"]


def test_gate_text_output_is_the_markdown(world, tmp_path):
    p = _cli(world, tmp_path / "state", "gate", "r-base", "r-cand", check=1)
    assert p.stdout.startswith("## evalcore gate: FAIL") and "stable regression of its own: q12" in p.stdout


@pytest.mark.parametrize("text, field", [
    ("q12 alice 2026-13-01 bad month\n", "line 1"),
    ("q1 alice 2027-01-01\nq12 alice 01/10/2026 us date\n", "line 2"),
    ("q12 alice 2027-01-01\nq12 bob 2027-01-01\n", "line 2"),
    ("q12 2026-10-01 no owner\n", "line 1"),  # the old format: no owner, and the date was when it was added
    ("q12\n", "line 1"),
])
def test_bad_allowlist_is_one_line_and_nothing_written(world, tmp_path, text, field):
    allow = tmp_path / "allow.txt"
    allow.write_text(text)
    state = tmp_path / "state"
    before = tree_hash(world, state)
    p = _cli(world, state, "gate", "r-base", "r-cand", "--allowlist", str(allow), "--markdown",
             str(tmp_path / "out.md"), check=2)
    assert p.stdout == "" and len(p.stderr.strip().splitlines()) == 1
    assert str(allow) in p.stderr and field in p.stderr
    assert tree_hash(world, state) == before and not (tmp_path / "out.md").exists()


def test_allowlist_reader():
    with pytest.raises(InputError, match="no such file"):
        read_allowlist("/nonexistent/allow.txt")


# --------------------------------------------------------------------------- diff through the CLI


def test_diff_cli_on_the_fixture(world, tmp_path):
    d = json.loads(_cli(world, tmp_path / "s", "diff", "r-base", "r-cand", "--json", check=0).stdout)
    assert d["changed"] == ["writer_prompt_hash"] and d["kind"] == "system change" and d["warnings"] == []
    d = json.loads(_cli(world, tmp_path / "s", "diff", "r-base", "r-base-judge2", "--json", check=0).stdout)
    assert d["changed"] == ["judge_model"] and d["measurement_change"] is True
    d = json.loads(_cli(world, tmp_path / "s", "diff", "g-base", "g-cand", "--json", check=0).stdout)
    assert d["a"]["kind"] == "generation" and d["changed"] == ["writer_prompt_hash"]
    assert not any(r["side"] == "judge" for r in d["knobs"])


@pytest.mark.parametrize("args, words", [
    (("diff", "r-base", "nope"), "no run or generation 'nope'"),
    (("diff", "r-base", "g-cand"), "give two runs or two generations"),
    (("diff", "r-base", "r-cand", "--under-test", "colour"), "--under-test: unknown knob 'colour'"),
    (("compare", "r-base", "r-cand", "--metric", "colour"), "--metric: 'colour' is not a figure of both runs"),
])
def test_bad_compare_arguments(world, tmp_path, args, words):
    p = _cli(world, tmp_path / "s", *args, check=2)
    assert words in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_demo_diffs(tmp_path):
    d = json.loads(_cli(DEMO, tmp_path / "s", "diff", "support-split", "support-split-judgeB", "--json", check=0).stdout)
    assert d["kind"] == "measurement change" and d["changed"] == ["judge_model"]
    d = json.loads(_cli(DEMO, tmp_path / "s", "diff", "support-single", "support-split", "--json", check=0).stdout)
    assert d["measurement_change"] and set(d["rivals"]) == {"judge_prompt_hash", "harness_mode", "field_order"}
    d = json.loads(_cli(DEMO, tmp_path / "s", "diff", "accounts-g2-split", "accounts-g1-split", "--json",
                        check=0).stdout)
    assert d["kind"] == "system change" and d["changed"] == ["writer_prompt_hash"]


# --------------------------------------------------------------------------- trend


def test_trend_breaks_exactly_where_the_measurement_changed(tmp_path):
    st = Store(DEMO, tmp_path / "s")
    t = trend(st, suite_id="support")
    pts = t.points
    assert len(pts) >= 5
    for prev, cur in zip(pts, pts[1:]):
        a, b = st.run(prev.run_id).manifest, st.run(cur.run_id).manifest
        changed = (a.judge_model, a.prompt_hash, a.rubric_hash) != (b.judge_model, b.prompt_hash, b.rubric_hash)
        assert (cur.segment != prev.segment) == changed == bool(cur.breaks)
    assert [p.created_at for p in pts] == sorted(p.created_at for p in pts)
    assert t.segments == pts[-1].segment + 1


def test_trend_on_the_fixture_keeps_one_line_until_the_judge_changes(store):
    t = trend(store)
    assert [p.run_id for p in t.points] == ["r-base", "r-cand", "r-base-judge2"]
    assert [p.segment for p in t.points] == [0, 0, 1]
    assert t.points[2].breaks == ["judge model snapshot: judge-2026-01-01 -> judge-2026-06-01"]
    assert t.points[0].value == pytest.approx((18 + 18 + 15) / 90)


def test_past_the_bootstrap_limit_the_interval_is_analytic(store, monkeypatch):
    import numpy as np
    from scipy import stats as sst

    import evalcore.analysis.comparison as C
    monkeypatch.setattr(C, "BOOTSTRAP_MAX_ITEMS", 10)
    f = compare_runs(store, "r-base", "r-cand").figures["all_pass"].delta
    d = np.array([2 / 3] * 12 + [-1.0] + [1 / 3] * 3 + [0.0] * 14)  # the fixture's per-item deltas
    half = sst.t.ppf(0.975, 29) * d.std(ddof=1) / np.sqrt(30)
    assert f.method.startswith("analytic")
    assert f.ci95 == pytest.approx([8 / 30 - half, 8 / 30 + half])


def test_include_holdout_on_the_command_line_is_a_logged_look(tmp_path):
    from evalcore.analysis.suites import looks
    data, state = tmp_path / "data", tmp_path / "state"
    make_compare_world(data, holdout=(12,))
    hidden = json.loads(_cli(data, state, "compare", "r-base", "r-cand", "--json", check=0).stdout)
    assert hidden["include_holdout"] is False and hidden["figures"]["all_pass"]["delta"]["items"] == N - 1
    assert looks(Store(data, state)) == []
    for cmd in (("compare", "r-base", "r-cand"), ("gate", "r-base", "r-cand"), ("trend",)):
        p = _cli(data, state, *cmd, "--include-holdout", "--json")
        assert p.returncode in (0, 1), p.stderr
        assert json.loads(p.stdout).get("include_holdout", True) is True
    got = looks(Store(data, state), "s")
    assert [g["page"] for g in got] == ["cli:compare", "cli:gate", "cli:trend"]


def test_ids_are_listed_for_the_headline_figure_counts_for_every_figure(store):
    c = compare_runs(store, "r-base", "r-cand", headline="ok")
    assert c.figures["ok"].stable_regression_items == ["q12"]
    assert c.figures["all_pass"].stable_regression_items is None
    assert c.figures["all_pass"].stable_regressions == 1


def test_the_seeded_interval_is_the_same_in_every_process(world, tmp_path):
    # the per-item deltas reach the bootstrap in item order, whatever order DuckDB's threads finish in
    got = {tuple(json.loads(_cli(world, tmp_path / "s", "compare", "r-base", "r-cand", "--json", check=0).stdout)
                 ["figures"]["all_pass"]["delta"]["ci95"]) for _ in range(4)}
    assert len(got) == 1


def test_one_generation_round_selected_is_one_paired_round(store):
    c = compare_runs(store, "r-base", "r-cand", sel=Selection(gen_round=3))
    f = c.figures["all_pass"]
    # round 3: baseline 15/30, candidate 17/30; q12 worse, q13-q15 better
    assert c.rounds_paired == 1 and f.a.by_round == pytest.approx([0.5])
    assert f.stable_regression_items == ["q12"] and f.stable_wins == 3
    assert "one generation round" in c.verdict.notes[0]
