"""The gate refuses a measurement change (issue 37, point 1): one generation imported twice with
two judges, the second more lenient. Diff, compare, trend, ledger and gate read one classification
(``configs.instrument_changes``)."""

from __future__ import annotations

import csv
import json
import random
import subprocess
from pathlib import Path

import pytest
from conftest import EVALCORE

from evalcore.analysis.configs import diff_knobs, instrument_changes, knob_values, meaning
from evalcore.contract import schema as S

LINE = "judge changed: this compares instruments, not systems (judge model snapshot: judge-a → judge-lenient)"


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


@pytest.fixture(scope="module")
def swap(tmp_path_factory) -> tuple[Path, Path]:
    """40 items x 2 criteria x 3 generation rounds; the same answers judged strictly, then leniently."""
    root = tmp_path_factory.mktemp("swap")
    rng = random.Random(7)
    strict_rows, lenient_rows = [], []
    for i in range(40):
        for g in (1, 2, 3):
            for c in ("correct", "cites"):
                base = {"item_id": f"q{i}", "input": f"question {i}", "output": f"answer {i} round {g}",
                        "gen_round": g, "criterion": c}
                strict = rng.random() < 0.55
                strict_rows.append({**base, "value": int(strict)})
                lenient_rows.append({**base, "value": int(strict or rng.random() < 0.8)})
    _write(root / "split.csv", strict_rows)
    _write(root / "lenient-judge.csv", lenient_rows)
    data, state = root / "data", root / "state"
    _cli(data, state, "import", "long", str(root / "split.csv"), "--judge-model", "judge-a", check=0)
    p = _cli(data, state, "import", "long", str(root / "lenient-judge.csv"), "--judge-model", "judge-lenient",
             "--suite", "split", check=0)
    assert "generation split (reused" in p.stdout  # one generation, two judges
    return data, state


def _cli(data: Path, state: Path, *args: str, check: int | None = None) -> subprocess.CompletedProcess:
    p = subprocess.run([EVALCORE, "--data", str(data), "--state", str(state), *args], capture_output=True, text=True)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout[-2000:], p.stderr)
    return p


def test_the_gate_refuses_a_judge_swap_with_one_line(swap):
    data, state = swap
    p = _cli(*swap, "gate", "split", "lenient-judge", check=1)
    lines = [x for x in p.stdout.splitlines() if x.strip()]
    assert lines[0] == "## evalcore gate: FAIL" and lines[1] == f"**FAIL: {LINE}**"
    g = json.loads(_cli(*swap, "gate", "split", "lenient-judge", "--json", check=1).stdout)
    assert g["gate"]["reasons"][0] == LINE and g["gate"]["measurement_change"] == LINE
    # everything else about the pair passes: the lenient judge is the only reason the gate fails
    assert g["verdict"]["holds"] and g["gate"]["reasons"] == [LINE]


def test_allow_measurement_change_passes_it_and_the_summary_leads_with_it(swap):
    p = _cli(*swap, "gate", "split", "lenient-judge", "--allow-measurement-change", check=0)
    lines = [x for x in p.stdout.splitlines() if x.strip()]
    assert lines[0] == "## evalcore gate: PASS"
    assert lines[1] == f"**Measurement change, gated anyway (--allow-measurement-change): {LINE}**"


def test_diff_compare_trend_and_ledger_call_the_pair_the_same(swap):
    d = json.loads(_cli(*swap, "diff", "split", "lenient-judge", "--json", check=0).stdout)
    c = json.loads(_cli(*swap, "compare", "split", "lenient-judge", "--json", check=0).stdout)
    assert d["kind"] == c["diff"]["kind"] == "measurement change"
    assert d["instrument_changes"] == c["diff"]["instrument_changes"] == ["judge_model"]
    t = json.loads(_cli(*swap, "trend", "--json", check=0).stdout)
    assert [p["breaks"] for p in t["points"]] == [[], ["judge model snapshot: judge-a -> judge-lenient"]]
    p = _cli(*swap, "ledger", "add", "--title", "t", "--by", "ana", "--baseline", "split", "--candidate",
             "lenient-judge", "--type", "accepted", check=2)
    assert "measurement correction, not 'accepted'" in p.stderr


def _gen(**knobs) -> S.GenerationManifest:
    return S.GenerationManifest(gen_id="g", suite_id="s", suite_hash="sha256:s", rounds=2, created_at="2026-01-01T00:00:00Z",
                                outputs_hash="sha256:o", source="generated", knobs={"generator_model": "m", **knobs})


def _run(**kw) -> S.RunManifest:
    base = {"run_id": "r", "gen_id": "g", "judge_model": "j", "mode": "single", "rubric_hash": "sha256:r",
            "created_at": "2026-01-01T00:00:00Z", "rubric": {"criteria": [{"name": "c", "kind": "binary"}]},
            "field_order": ["verdict", "reason"], "source": "judged"}
    return S.RunManifest(**{**base, **kw})


@pytest.mark.parametrize("change, instrument", [
    ({"judge_model": "j2"}, ["judge_model"]),
    ({"mode": "split"}, ["harness_mode"]),
    ({"postprocess_version": "v2"}, ["postprocess_version"]),
    ({"judge_rounds": 3}, ["judge_rounds"]),
    # how the calls were made, not what measures: not a measurement change
    ({"seed": 9}, []),
    ({"reuse_cache": True}, []),
    ({"price_map_version": "2026-12"}, []),
])
def test_the_classification_names_the_knobs_of_the_instrument(change, instrument):
    rows = diff_knobs(knob_values(_gen(), _run()), knob_values(_gen(), _run(**change)))
    assert [r["knob"] for r in instrument_changes(rows)] == instrument
    m = meaning(rows, same_outputs=True)
    assert m["instrument_changes"] == instrument
    assert (m["kind"] == "measurement change") == bool(instrument)


def test_a_system_change_with_the_instrument_held_is_not_refused_but_a_suite_change_is():
    rows = diff_knobs(knob_values(_gen(), _run()), knob_values(_gen(generator_model="m2"), _run()))
    assert meaning(rows, same_outputs=False)["instrument_text"] == ""
    g2 = _gen()
    g2.suite_hash = "sha256:s2"
    rows = diff_knobs(knob_values(_gen(), _run()), knob_values(g2, _run()))
    assert meaning(rows, same_outputs=False)["instrument_text"].startswith("suite changed: this compares instruments")


def test_polluted_is_said_of_failed_calls_only_where_calls_were_made():
    from evalcore.analysis.selection import polluted_reason

    assert polluted_reason(_run(status="polluted")) == "some calls failed after every retry"
    imported = polluted_reason(_run(status="polluted", source="imported"))
    assert "call" not in imported.replace("no call was made", "") and "no call was made" in imported
