"""The SIMULATED demo world: regeneration gives the committed content, and the figures the demo
is meant to show hold when recounted with plain numpy from the written files (never through
evalcore's own statistics)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from evalcore.contract import schema as S
from evalcore.demo.common import DEFAULT_SEED
from evalcore.demo.world import generate_demo
from evalcore.storage.store import Store

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "data" / "demo"
DEMO_KEYS = REPO / "data" / "demo-keys"

SINGLE_ORDER = ["answers_question", "cites_source", "on_tone", "refuses_when_unanswerable", "grounded",
                "no_fabrication"]
SIX = sorted(SINGLE_ORDER)


# --------------------------------------------------------------------------- plain helpers


def phi(a: np.ndarray, b: np.ndarray) -> float:
    """phi of two boolean arrays from the 2x2 table: (n11 n00 - n10 n01) / sqrt(row and column totals)."""
    a, b = np.asarray(a, bool), np.asarray(b, bool)
    n11 = np.sum(a & b)
    n10 = np.sum(a & ~b)
    n01 = np.sum(~a & b)
    n00 = np.sum(~a & ~b)
    den = np.sqrt(float(n11 + n10) * float(n01 + n00) * float(n11 + n01) * float(n10 + n00))
    return float((n11 * n00 - n10 * n01) / den)


def columns(path: Path, *names: str) -> dict[str, np.ndarray]:
    t = pq.read_table(path, columns=list(names))
    return {n: np.array(t.column(n).to_pylist(), dtype=object) for n in names}


def fail_cube(data: Path, run: str, criteria: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(items, judge rounds, criteria) FAIL flags of a complete binary run, items sorted by id;
    also the emission positions in the same layout."""
    c = columns(data / "runs" / run / "verdicts.parquet", "item_id", "judge_round", "criterion", "passed",
                "position")
    items = np.unique(c["item_id"].astype(str))
    rounds = np.unique(c["judge_round"].astype(int))
    ii = np.searchsorted(items, c["item_id"].astype(str))
    rr = np.searchsorted(rounds, c["judge_round"].astype(int))
    cc = np.array([criteria.index(x) for x in c["criterion"]])
    fail = np.zeros((len(items), len(rounds), len(criteria)), bool)
    pos = np.full((len(items), len(rounds), len(criteria)), -1)
    fail[ii, rr, cc] = ~c["passed"].astype(bool)
    pos[ii, rr, cc] = c["position"].astype(int)
    assert len(c["item_id"]) == fail.size, "run is not complete"
    return fail, pos


def conditional_fail_by_position(fail: np.ndarray, pos: np.ndarray) -> list[float]:
    """P(fail at position k | the field at position k-1 failed), k = 1..K-1, over items and rounds."""
    k_max = pos.max()
    by_pos = np.zeros(fail.shape[:2] + (k_max + 1,), bool)
    for j in range(fail.shape[2]):
        k = pos[0, 0, j]
        assert (pos[:, :, j] == k).all()
        by_pos[:, :, k] = fail[:, :, j]
    out = []
    for k in range(1, k_max + 1):
        prev = by_pos[:, :, k - 1]
        out.append(float(by_pos[:, :, k][prev].mean()))
    return out


def row_rates(col_fail: np.ndarray, row_fail: np.ndarray) -> tuple[float, float]:
    """Fail rate of one criterion within the pass row and within the fail row of another."""
    return float(col_fail[~row_fail].mean()), float(col_fail[row_fail].mean())


def flip_rates(fail: np.ndarray) -> list[float]:
    """Share of item x criterion cells whose verdict differs between judge rounds r and r+1."""
    return [float((fail[:, r] != fail[:, r + 1]).mean()) for r in range(fail.shape[1] - 1)]


def human_fail(data: Path) -> dict[str, np.ndarray]:
    """One label per (item, criterion): the first annotator's in id order."""
    c = columns(data / "labels" / "support-human" / "labels.parquet", "item_id", "criterion", "annotator",
                "passed")
    order = np.lexsort((c["annotator"].astype(str), c["criterion"].astype(str), c["item_id"].astype(str)))
    seen, out = set(), {k: {} for k in SIX}
    for i in order:
        key = (c["item_id"][i], c["criterion"][i])
        if key in seen:
            continue
        seen.add(key)
        out[c["criterion"][i]][c["item_id"][i]] = not c["passed"][i]
    ids = sorted(out[SIX[0]])
    return {k: np.array([out[k][i] for i in ids]) for k in SIX}


def arm_texts(data: Path, gen_id: str) -> list[str]:
    c = columns(data / "generations" / gen_id / "outputs.parquet", "output", "abstained")
    return [t for t, a in zip(c["output"], c["abstained"]) if not a]


def measure(data: Path) -> dict[str, float]:
    """Every figure the demo promises, recounted from the files."""
    m: dict[str, float] = {}
    fail, pos = fail_cube(data, "support-single", SIX)
    cond = conditional_fail_by_position(fail, pos)
    for k, v in enumerate(cond, start=1):
        m[f"single_cond_k{k}"] = v
    m["single_cond_min_step"] = float(np.min(np.diff(cond)))
    aq, cs = SIX.index("answers_question"), SIX.index("cites_source")
    g, nf = SIX.index("grounded"), SIX.index("no_fabrication")
    r1 = fail[:, 0]
    m["single_phi_aq_cs"] = phi(r1[:, aq], r1[:, cs])
    lo, hi = row_rates(r1[:, aq], r1[:, cs])
    m["single_aq_rate_cs_pass"], m["single_aq_rate_cs_fail"] = lo, hi
    m["single_ratio"] = hi / lo
    m["single_flip_min"], m["single_flip_max"] = min(flip_rates(fail)), max(flip_rates(fail))
    sfail, _ = fail_cube(data, "support-split", SIX)
    s1 = sfail[:, 0]
    # the first field of the single call takes the blame for failures read elsewhere (seed 000's C1)
    m["single_aq_fails"], m["split_aq_fails"] = float(r1[:, aq].sum()), float(s1[:, aq].sum())
    m["split_phi_aq_cs"] = phi(s1[:, aq], s1[:, cs])
    lo, hi = row_rates(s1[:, aq], s1[:, cs])
    m["split_ratio"] = max(hi, lo) / min(hi, lo)
    m["split_phi_g_nf"] = phi(s1[:, g], s1[:, nf])
    m["split_flip_min"], m["split_flip_max"] = min(flip_rates(sfail)), max(flip_rates(sfail))
    h = human_fail(data)
    m["human_phi_g_nf"] = phi(h["grounded"], h["no_fabrication"])
    m["human_phi_aq_cs"] = phi(h["answers_question"], h["cites_source"])
    for arm in ("accounts-g1", "accounts-g2"):
        texts = arm_texts(data, arm)
        m[f"{arm}_heading"] = float(np.mean([bool(re.search(r"(?m)^## ", t)) for t in texts]))
        m[f"{arm}_words"] = float(np.mean([len(t.split()) for t in texts]))
    m["word_gap"] = m["accounts-g2_words"] - m["accounts-g1_words"]
    return m


# --------------------------------------------------------------------------- content equality


def _table_sorted(path: Path):
    t = pq.read_table(path)
    table = (t.schema.metadata or {}).get(b"evalcore.table", b"").decode()
    keys = S.TABLES[table][1] if table in S.TABLES else ()
    return t.sort_by([(k, "ascending") for k in keys]) if keys else t


def assert_same_content(a: Path, b: Path) -> None:
    fa = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    fb = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert fa == fb
    for rel in fa:
        if rel.suffix == ".json":
            assert json.loads((a / rel).read_text()) == json.loads((b / rel).read_text()), rel
        elif rel.suffix == ".parquet":
            ta, tb = _table_sorted(a / rel), _table_sorted(b / rel)
            assert ta.schema.equals(tb.schema), rel
            assert ta.equals(tb), rel
        else:
            assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


@pytest.fixture(scope="module")
def regen(tmp_path_factory) -> tuple[Path, Path, dict]:
    root = tmp_path_factory.mktemp("demo")
    summary = generate_demo(root / "demo", DEFAULT_SEED)
    return root / "demo", root / "demo-keys", summary


def test_committed_demo_is_valid(tmp_path):
    counts = Store(DEMO, state_dir=tmp_path / "state").validate()
    assert counts == {"suites": 2, "generations": 3, "runs": 12, "sessions": 2, "labelsets": 1}


def test_regeneration_matches_committed(regen):
    data, keys, summary = regen
    assert_same_content(data, DEMO)
    assert_same_content(keys, DEMO_KEYS)
    assert summary["items"] == 720 and summary["seed"] == DEFAULT_SEED


def test_same_seed_twice_identical_other_seed_differs(regen, tmp_path):
    data, keys, _ = regen
    again = tmp_path / "again"
    generate_demo(again, DEFAULT_SEED, keys=tmp_path / "again-k")
    assert_same_content(again, data)
    assert_same_content(tmp_path / "again-k", keys)
    # regenerating over existing output is clean
    generate_demo(again, DEFAULT_SEED, keys=tmp_path / "again-k")
    assert_same_content(again, data)
    other = tmp_path / "other"
    generate_demo(other, DEFAULT_SEED + 1)
    assert (tmp_path / "other-keys").is_dir()
    with pytest.raises(AssertionError):
        assert_same_content(other, data)


def test_everything_is_labelled_simulated():
    for p in DEMO.rglob("*.json"):
        d = json.loads(p.read_text())
        if "simulated" in d:
            assert d["simulated"] is True, p
        if "source" in d:
            assert d["source"] == "simulated", p
        if "description" in d:
            assert "SIMULATED" in d["description"], p


# --------------------------------------------------------------------------- the figures


@pytest.fixture(scope="module")
def figures() -> dict[str, float]:
    return measure(DEMO)


def test_single_call_position_effect(figures):
    cond = [figures[f"single_cond_k{k}"] for k in range(1, 6)]
    assert all(b >= a for a, b in zip(cond, cond[1:])), cond


def test_single_call_induces_association(figures):
    assert figures["single_phi_aq_cs"] >= 0.35
    assert figures["single_ratio"] >= 3


def test_the_first_emitted_criterion_takes_the_blame_under_the_single_call(figures):
    assert figures["single_aq_fails"] >= 2 * figures["split_aq_fails"]


def test_split_removes_it(figures):
    assert figures["split_phi_aq_cs"] < 0.2
    assert figures["split_ratio"] < 2


def test_human_labels_keep_the_real_association(figures):
    assert abs(figures["human_phi_g_nf"] - 0.55) <= 0.12
    assert figures["human_phi_aq_cs"] < 0.25


def test_round_to_round_flips(figures):
    for run in ("single", "split"):
        assert 0.02 <= figures[f"{run}_flip_min"] and figures[f"{run}_flip_max"] <= 0.06, run


def test_accounts_arms_formatting_and_length(figures):
    assert abs(figures["accounts-g2_heading"] - 0.91) <= 0.05
    assert abs(figures["accounts-g1_heading"] - 0.54) <= 0.05
    assert abs(figures["word_gap"] - 94) <= 10


def test_ternary_postprocessing_bug_is_visible():
    items = columns(DEMO / "suites" / "support" / "items.parquet", "item_id", "must_have")
    must = dict(zip(items["item_id"], items["must_have"]))
    v = columns(DEMO / "runs" / "support-ternary" / "verdicts.parquet", "item_id", "raw_verdict", "label",
                "passed", "covered", "triggered")
    bug = [i for i in range(len(v["item_id"]))
           if v["raw_verdict"][i] == "correct" and v["label"][i] == "wrong"
           and list(v["covered"][i]) == list(must[v["item_id"][i]]) and not v["triggered"][i]]
    assert all(v["passed"][i] is False for i in bug)
    share = len(bug) / len(items["item_id"])
    assert 0.03 <= share <= 0.05, share
    assert set(v["label"]) <= {"correct", "partial", "wrong"}
    m = json.loads((DEMO / "runs" / "support-ternary" / "manifest.json").read_text())
    assert m["postprocess_version"] != "none"


def test_polluted_run():
    d = DEMO / "runs" / "support-polluted"
    m = json.loads((d / "manifest.json").read_text())
    assert m["status"] == "polluted"
    v = columns(d / "verdicts.parquet", "passed", "error", "call_id")
    errored = np.array([e is not None for e in v["error"]])
    assert errored.any()
    assert all(p is None for p in v["passed"][errored])
    assert all(p is not None for p in v["passed"][~errored])
    calls = columns(d / "calls.parquet", "call_id", "error")
    failed = sorted(c for c, e in zip(calls["call_id"], calls["error"]) if e)
    assert failed == sorted(m["failed_call_ids"]) and m["totals"]["failed_calls"] == len(failed)
    assert set(v["call_id"][errored]) == set(failed)
    assert json.loads((DEMO / "runs" / "support-partial" / "manifest.json").read_text())["status"] == "partial"


def test_no_arm_name_in_sessions():
    arms = set()
    for k in DEMO_KEYS.glob("*/key.json"):
        d = json.loads(k.read_text())
        arms |= set(d["arms"]) | set(d["arms"].values())
    assert arms
    files = [p for p in (DEMO / "sessions").rglob("*") if p.is_file()]
    assert any(p.name == "pairs.parquet" for p in files) and any(p.name == "session.json" for p in files)
    for p in files:
        raw = p.read_bytes().lower()
        texts = [raw]
        if p.suffix == ".parquet":  # compressed bytes hide nothing from a reader: check the values too
            t = pq.read_table(p)
            texts += [str(x).lower().encode() for col in t.columns for x in col.to_pylist()]
        for arm in arms:
            assert not any(arm.lower().encode() in x for x in texts), (p, arm)
    s = json.loads((DEMO / "sessions" / "accounts-ab" / "session.json").read_text())
    assert s["status"] == "closed"
    assert (DEMO / "sessions" / "accounts-ab" / "judgments.parquet").exists()
    assert not (DEMO / "sessions" / "accounts-practice" / "judgments.parquet").exists()
    assert json.loads((DEMO / "sessions" / "accounts-practice" / "session.json").read_text())["status"] == "open"


def test_pairs_mirrors_and_grader():
    p = columns(DEMO / "sessions" / "accounts-ab" / "pairs.parquet", "pair_id", "left_text", "right_text",
                "mirror_of", "holdout")
    by_id = {pid: i for i, pid in enumerate(p["pair_id"])}
    mirrors = [i for i, m in enumerate(p["mirror_of"]) if m]
    assert 0.07 <= len(mirrors) / (len(p["pair_id"]) - len(mirrors)) <= 0.13
    for i in mirrors:
        j = by_id[p["mirror_of"][i]]
        assert (p["left_text"][i], p["right_text"][i]) == (p["right_text"][j], p["left_text"][j])
    assert p["holdout"].astype(bool).any()
    key = columns(DEMO_KEYS / "accounts-ab" / "key.parquet", "pair_id", "left_arm")
    left = [str(x) for x in key["left_arm"]]
    assert 0.3 < left.count(left[0]) / len(left) < 0.7  # left/right drawn per pair
    pv = columns(DEMO / "runs" / "accounts-ab-grader" / "pair_verdicts.parquet", "pair_id", "order", "choice")
    assert set(pv["order"]) == {"as_shown", "swapped"}
    assert len(pv["pair_id"]) == 2 * len(p["pair_id"])
    m = json.loads((DEMO / "runs" / "accounts-ab-grader" / "manifest.json").read_text())
    assert m["source"] == "simulated" and m["mode"] == "imported"
    assert (DEMO / "generations" / m["gen_id"]).is_dir()


def test_size_budget():
    total = sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file())
    assert total < 3_000_000, total


if __name__ == "__main__":  # figures quoted in docs/DEMO.md: `.venv/bin/python tests/test_demo.py`
    for key, value in measure(DEMO).items():
        print(f"{key:32s} {value:.3f}")


def test_the_scaled_world_is_the_demos_model_at_any_size(tmp_path, ev):
    """`evalcore demo --items N` (evalcore.demo.scale, what the benchmarks build): the demo's
    criteria and field order, its single-call carryover, valid under the contract, and the same
    bytes for the same seed."""
    from evalcore.demo import common
    from evalcore.demo.scale import write_scaled
    code, out, err = ev("demo", "--out", tmp_path / "a", "--items", "2000")
    assert code == 0, err
    code, out, err = ev("--data", tmp_path / "a", "validate", "--json")
    assert code == 0 and json.loads(out)["runs"] == 2, err
    st = Store(tmp_path / "a", tmp_path / "st")
    single = st.run("bench-single").manifest
    assert [c.name for c in single.rubric.criteria] == list(common.CRITERIA)
    assert single.field_order == list(common.SINGLE_FIELD_ORDER) and single.simulated
    code, out, _ = ev("--data", tmp_path / "a", "position", "bench-single", "--reference", "bench-split", "--json")
    pos = json.loads(out)["positions"]
    # carryover after a failed field (at position 1 it is diluted: many first-field failures are the
    # first field taking the blame after the carryover, which pushes nothing on)
    assert pos[2]["fail_rate_after_fail"] > 0.6 > pos[2]["fail_rate"]
    # the single call fails more verdicts (the carryover) while the all-pass rate barely moves: the
    # demo's point that the aggregate hides what moved
    attr = {r: json.loads(ev("--data", tmp_path / "a", "attribution", r, "--json")[1]) for r in ("bench-single", "bench-split")}
    assert attr["bench-single"]["total_failures"] > 1.1 * attr["bench-split"]["total_failures"]
    rates = [attr[r]["all_pass"]["rate"] for r in ("bench-single", "bench-split")]
    assert abs(rates[0] - rates[1]) < 0.02
    write_scaled(tmp_path / "b", 2000, log=lambda _m: None)
    for rel in ("runs/bench-single/verdicts.parquet", "suites/bench/items.parquet", "labels/bench-people/labels.parquet"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    # the seed is an argument, not module state: another seed gives another world, and the
    # default seed still gives the first one afterwards
    write_scaled(tmp_path / "c", 2000, seed=7, log=lambda _m: None)
    write_scaled(tmp_path / "d", 2000, log=lambda _m: None)
    rel = "runs/bench-single/verdicts.parquet"
    assert (tmp_path / "c" / rel).read_bytes() != (tmp_path / "a" / rel).read_bytes()
    assert (tmp_path / "d" / rel).read_bytes() == (tmp_path / "a" / rel).read_bytes()
