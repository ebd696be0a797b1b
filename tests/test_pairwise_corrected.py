"""Issue 40: a pairwise grader's run gets corrected rates (PPI++) against people's choices, and an
imported closed session is reportable at once (no `pairs close --keys` after an import that says
closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import PAIRS_ARGS, PAIRS_CSV, REPO

PAIRS, PAIR_ARGS = PAIRS_CSV, PAIRS_ARGS


def test_an_imported_closed_session_is_reportable_at_once(tmp_path: Path, ev):
    # before issue 40: exit 2, "session '...' is closed but not unblinded in this state directory:
    # run `evalcore pairs close --session ... --keys DIR`"
    data, state = tmp_path / "data", tmp_path / "state"
    code, out, err = ev("--data", data, "--state", state, "import", "pairs", PAIRS, *PAIR_ARGS, "--seed", "7", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["unblinded"] == str(state / "sessions" / s["session_id"] / "unblinded.json")
    code, out, err = ev("--data", data, "--state", state, "pairs", "report", "--session", s["session_id"], "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert sorted(rep["arms"]) == ["concise", "detailed"]
    # closing again is refused as for any unblinded session
    code, _, err = ev(
        "--data",
        data,
        "--state",
        state,
        "pairs",
        "close",
        "--session",
        s["session_id"],
        "--keys",
        s["keys"].rsplit("/", 1)[0],
    )
    assert code == 2 and "already closed and unblinded" in err


def test_an_import_does_not_overwrite_another_sessions_record(tmp_path: Path, ev):
    """Two data directories, one state directory, the same session id: the second import is written
    and says why it is not unblinded; the first session's record stays."""
    state = tmp_path / "state"
    outs = []
    for d in ("a", "b"):
        code, out, err = ev(
            "--data",
            tmp_path / d,
            "--state",
            state,
            "import",
            "pairs",
            PAIRS,
            *PAIR_ARGS,
            "--seed",
            "7" if d == "a" else "8",
            "--json",
        )
        assert code == 0, err
        outs.append(json.loads(out))
    record = state / "sessions" / "pairs" / "unblinded.json"
    assert outs[0]["unblinded"] == str(record) and "not_unblinded" not in outs[0]
    assert outs[1]["unblinded"] is None and "already holds an unblinded record" in outs[1]["not_unblinded"]
    kept = {r["pair_id"] for r in json.loads(record.read_text())["key"]}
    first = set(pq.read_table(tmp_path / "a" / "sessions" / "pairs" / "pairs.parquet").column("pair_id").to_pylist())
    second = set(pq.read_table(tmp_path / "b" / "sessions" / "pairs" / "pairs.parquet").column("pair_id").to_pylist())
    assert kept == first != second  # seeds 7 and 8 draw other pair ids: the record is still the first session's


# --------------------------------------------------------------------------- corrected rates of a pairwise grader

_CHOICE = {"a": "left", "b": "right", "tie": "same"}


def _pairs_file(path: Path, seed: int, n: int = 160, labelled: int = 50) -> list[dict]:
    """A randomised pairs table: the grader right about 3 times in 4 in each order, three people on
    ``labelled`` of the ``n`` pairs (a random subset), the other pairs without people."""
    import csv

    import numpy as np

    rng = np.random.default_rng(seed)
    truth = rng.choice(["a", "b", "tie"], size=n, p=[0.45, 0.4, 0.15])
    rows = []
    people_rows = set(rng.choice(n, size=labelled, replace=False).tolist())
    for i in range(n):

        def noisy(p: float) -> str:
            return str(truth[i]) if rng.random() < p else str(rng.choice(["a", "b", "tie"]))

        rows.append(
            {
                "item_id": f"q{i:03d}",
                "input": f"question {i}",
                "output_a": f"short answer {i}",
                "output_b": f"a longer answer to question {i}",
                "grader_as_shown": noisy(0.75),
                "grader_swapped": noisy(0.7),
                **{r: noisy(0.85) if i in people_rows else "" for r in ("r1", "r2", "r3")},
            }
        )
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return rows


def _expected(f: list[str], y: dict[int, str], outcome: str, n_all: int):
    """PPI++ of one outcome computed here from the raw choices with evalcore's own ppi_mean."""
    import numpy as np

    from evalcore.stats.ppi import ppi_mean

    lab = sorted(y)
    yy = np.array([y[i] == outcome for i in lab], dtype=float)
    ff = np.array([f[i] == outcome for i in lab], dtype=float)
    k = sum(c == outcome for c in f)
    return ppi_mean(yy, ff, np.full(len(lab), n_all / len(lab)), (n_all, float(k), float(k)), level=0.9, finite=True)


def _majority(votes: list[str]) -> str | None:
    for v in set(votes):
        if 2 * votes.count(v) > len(votes):
            return v
    return None


@pytest.mark.parametrize("seed", [3, 11])
def test_correct_on_a_pairwise_grader_matches_ppi_from_the_raw_choices(tmp_path: Path, ev, seed):
    # before issue 40: exit 2, "error: RUN_ID: run 'pairs-grader' has no per-criterion verdicts (a
    # pairwise grader holds choices only): nothing to correct; ..." (and before issue 38 a traceback)
    rows = _pairs_file(tmp_path / "pairs.csv", seed)
    data, state = tmp_path / "data", tmp_path / "state"
    code, out, err = ev(
        "--data",
        data,
        "--state",
        state,
        "import",
        "pairs",
        tmp_path / "pairs.csv",
        "--arm-a",
        "concise",
        "--arm-b",
        "detailed",
        "--model-as-shown-col",
        "grader_as_shown",
        "--model-swapped-col",
        "grader_swapped",
        "--human-col",
        "r1",
        "--human-col",
        "r2",
        "--human-col",
        "r3",
        "--seed",
        "1",
        "--json",
    )
    assert code == 0, err
    code, out, err = ev("--data", data, "--state", state, "correct", "pairs-grader", "--level", "0.9", "--json")
    assert code == 0, err
    got = json.loads(out)
    people = {i: _majority([_CHOICE[r[k]] for k in ("r1", "r2", "r3") if r[k]]) for i, r in enumerate(rows)}
    y = {i: m for i, m in people.items() if m is not None}
    assert (got["pairs"], got["majority_pairs"], got["arms"]) == (160, len(y), ["concise", "detailed"])
    assert [o["order"] for o in got["orders"]] == ["as_shown", "swapped"]
    for o in got["orders"]:
        f = [_CHOICE[r[f"grader_{o['order']}"]] for r in rows]
        assert (o["verdicts"], o["gold_pairs"]) == (160, len(y))
        for rate in o["as_shown"]:
            want = _expected(f, y, rate["outcome"], len(rows))
            ppi = rate["ppi"]
            assert rate["observed"] == pytest.approx(sum(c == rate["outcome"] for c in f) / 160, abs=1e-12)
            assert ppi["n_labels"] == len(y) and ppi["lam"] == pytest.approx(want.lam, abs=1e-12)
            for a, b in (
                (ppi["value"], want.value),
                (ppi["se"], want.se),
                (ppi["ci"][0], want.lo),
                (ppi["ci"][1], want.hi),
                (ppi["labels_only"]["value"], want.labels_only_value),
            ):
                assert a == pytest.approx(b, abs=1e-12)
            assert 0 < ppi["half_width"] < 0.5  # a sample: the interval has width
        # the file's a is concise and always on the left: per arm, concise is left and detailed right
        by = {r["outcome"]: r["ppi"]["value"] for r in o["by_arm"]}
        shown = {r["outcome"]: r["ppi"]["value"] for r in o["as_shown"]}
        assert by == {"concise": shown["left"], "same": shown["same"], "detailed": shown["right"]}
    code, out, err = ev("--data", data, "--state", state, "correct", "pairs-grader")
    assert code == 0 and "as_shown: 160 pairs with a choice" in out and "concise (grader" in out
    code, _, err = ev("--data", data, "--state", state, "correct", "pairs-grader", "--criterion", "x")
    assert code == 2 and "no criteria and no queue" in err


SHARED = REPO.parent / "shared" / "datasets" / "pandalm" / "data"


@pytest.mark.skipif(not (SHARED / "testset-v1.json").is_file(), reason="../shared/datasets/pandalm is absent")
def test_correct_on_pandalms_graders(tmp_path: Path, ev):
    """Every PandaLM pair has people's majority: the corrected share is people's own share on the
    pairs the grader parsed, with no width; recomputed from the published files."""
    data, state = tmp_path / "data", tmp_path / "state"
    code, out, err = ev("--data", data, "--state", state, "import", "pandalm", SHARED, "--json")
    assert code == 0, err
    assert json.loads(out)["unblinded"] and "not_unblinded" not in json.loads(out)  # five arms, unblinded (issue 43)
    test = json.loads((SHARED / "testset-v1.json").read_text())
    code3 = {"0": "same", "Tie": "same", "1": "left", "2": "right"}  # gpt-3.5 writes a tie as Tie
    people = {int(t["idx"]): _majority([code3[str(t[f"annotator{k}"])] for k in (1, 2, 3)]) for t in test}
    for run, file in (
        ("pandalm-gpt-3.5-turbo", "gpt-3.5-turbo-testset-v1.json"),
        ("pandalm-pandalm-7b", "pandalm-7b-testset-v1.json"),
    ):
        code, out, err = ev("--data", data, "--state", state, "correct", run, "--json")
        assert code == 0, err
        (o,) = json.loads(out)["orders"]
        raw = json.loads((SHARED / file).read_text())
        key = "gpt_result" if "gpt" in file else "pandalm_result"
        parsed = [(code3.get(str(r[key]).strip()), people[int(r["idx"])]) for r in raw]
        parsed = [(g, p) for g, p in parsed if g is not None]
        assert o["verdicts"] == len(parsed) and o["unparseable"] == 999 - len(parsed)
        for rate in o["as_shown"]:
            share = sum(p == rate["outcome"] for _, p in parsed) / len(parsed)
            assert rate["ppi"]["value"] == pytest.approx(share, abs=1e-12)
            assert rate["ppi"]["ci"] == [pytest.approx(share, abs=1e-12)] * 2
            assert rate["observed"] == pytest.approx(sum(g == rate["outcome"] for g, _ in parsed) / len(parsed))
