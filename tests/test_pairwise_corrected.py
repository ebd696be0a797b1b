"""Issue 40: a pairwise grader's run gets corrected rates (PPI++) against people's choices, and an
imported closed session is reportable at once (no `pairs close --keys` after an import that says
closed)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
from conftest import REPO

PAIRS = REPO / "tests" / "golden" / "import" / "pairs.csv"
PAIR_ARGS = [
    "--arm-a",
    "concise",
    "--arm-b",
    "detailed",
    "--model-as-shown-col",
    "grader_as_shown",
    "--model-swapped-col",
    "grader_swapped",
    "--human-col",
    "rater_ana",
    "--human-col",
    "rater_ben",
]


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
