"""Issue 40: `import pairs` carries the contract's fields as `import long` / `wide` do.

Each answer's latency, tokens and cost (``latency_ms_a`` ... ``cost_usd_b``) land in its arm's
generation, the model grader's call in each order (``judge_latency_ms_as_shown`` ...
``judge_cost_usd_swapped``) in the grader run's calls.parquet with its totals, a column the import
does not use is named in one line (the wording of long / wide) and ``--strict`` refuses it, and a
grader named by a floating alias is warned about unless ``--judge-pinned``. The table is
tests/golden/import/pairs.csv with the fields drawn at random (seeded); every expected figure is
computed here from the written CSV, and every result is read back through the command line or the
Store.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import PAIRS_ARGS, PAIRS_CSV

from evalcore.storage.store import Store

PAIRS = PAIRS_CSV
ARGS = [*PAIRS_ARGS, "--seed", "7"]
DATED = ["--judge-model", "gpt-4o-2024-08-06"]
CALL = ("judge_latency_ms", "judge_tokens_in", "judge_tokens_out", "judge_cost_usd")
ORDERS = ("as_shown", "swapped")
IGNORED = "ignored columns: {}; map them with --col FIELD=COLUMN (docs/IMPORT.md lists the fields)"


def write(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def with_fields(tmp: Path, seed: int = 0, **extra: str) -> tuple[Path, list[dict]]:
    """pairs.csv with random answer and call fields (one call cost left empty: unknown), plus ``extra`` columns."""
    rng = random.Random(seed)
    with open(PAIRS, newline="") as fh:
        rows = list(csv.DictReader(fh))
    for k, r in enumerate(rows):
        for side in ("a", "b"):
            r[f"latency_ms_{side}"] = f"{rng.uniform(100, 3000):.3f}"
            r[f"tokens_in_{side}"] = str(rng.randint(10, 900))
            r[f"cost_usd_{side}"] = f"{rng.uniform(0, 0.01):.6f}"
        for order in ORDERS:
            r[f"judge_latency_ms_{order}"] = f"{rng.uniform(200, 5000):.2f}"
            r[f"judge_tokens_in_{order}"] = str(rng.randint(300, 2000))
            r[f"judge_tokens_out_{order}"] = str(rng.randint(5, 80))
            r[f"judge_cost_usd_{order}"] = "" if (k, order) == (2, "swapped") else f"{rng.uniform(0, 0.02):.6f}"
        r.update(extra)
    return write(tmp / "pairs_fields.csv", rows), rows


def num(v: str) -> float | None:
    return float(v) if v != "" else None


@pytest.fixture
def imported(ev, tmp_path):
    f, rows = with_fields(tmp_path, foo="x")
    data, keys = tmp_path / "d", tmp_path / "k"
    code, out, err = ev(
        "--data", data, "--state", tmp_path / "s", "import", "pairs", f, *ARGS, *DATED, "--keys", keys, "--json"
    )
    assert code == 0, err
    return data, keys, json.loads(out), err, rows


def test_answer_fields_land_in_each_arms_generation(imported):
    data, keys, s, _, rows = imported
    arms = json.loads((keys / s["session_id"] / "key.json").read_text())["arms"]
    store = Store(data, None)
    for arm, side in (("concise", "a"), ("detailed", "b")):
        got = {
            r["item_id"]: r
            for r in store.records(
                "SELECT item_id, latency_ms, tokens_in, cost_usd FROM read_parquet(?)",
                [store.path_of("generation", arms[arm], "outputs")],
            )
        }
        assert got == {
            r["item_id"]: {
                "item_id": r["item_id"],
                "latency_ms": float(r[f"latency_ms_{side}"]),
                "tokens_in": int(r[f"tokens_in_{side}"]),
                "cost_usd": float(r[f"cost_usd_{side}"]),
            }
            for r in rows
        }
        t = store.generation(arms[arm]).manifest.totals
        lat = [float(r[f"latency_ms_{side}"]) for r in rows]
        assert t.tokens_in == sum(int(r[f"tokens_in_{side}"]) for r in rows)
        assert t.cost_usd == pytest.approx(sum(float(r[f"cost_usd_{side}"]) for r in rows), abs=1e-12)
        assert t.latency_ms_mean == pytest.approx(statistics.fmean(lat), abs=1e-9)


def test_grader_calls_carry_each_orders_fields(imported, ev):
    data, _, s, _, rows = imported
    assert (s["grader_calls"], s["pair_verdicts"]) == (8, 8)
    run = data / "runs" / s["run_id"]
    calls = {c["call_id"]: c for c in pq.read_table(run / "calls.parquet").to_pylist()}
    item = {
        p["pair_id"]: p["item_id"]
        for p in pq.read_table(data / "sessions" / s["session_id"] / "pairs.parquet").to_pylist()
    }
    by_item = {r["item_id"]: r for r in rows}
    pv = pq.read_table(run / "pair_verdicts.parquet").to_pylist()
    assert len({v["call_id"] for v in pv}) == len(calls) == 8
    for v in pv:
        c, r = calls[v["call_id"]], by_item[item[v["pair_id"]]]
        assert (c["item_id"], c["criteria"]) == (item[v["pair_id"]], ["preference"])
        assert c["latency_ms"] == float(r[f"judge_latency_ms_{v['order']}"])
        assert (c["tokens_in"], c["tokens_out"]) == (
            int(r[f"judge_tokens_in_{v['order']}"]),
            int(r[f"judge_tokens_out_{v['order']}"]),
        )
        assert c["cost_usd"] == num(r[f"judge_cost_usd_{v['order']}"])
    # `evalcore cost` reads them: the unknown cost stays unknown, never 0
    code, out, err = ev("--data", data, "cost", s["run_id"], "--json")
    assert code == 0, err
    j = json.loads(out)["judge"]
    costs = [num(r[f"judge_cost_usd_{o}"]) for r in rows for o in ORDERS]
    lat = [float(r[f"judge_latency_ms_{o}"]) for r in rows for o in ORDERS]
    assert (j["calls"], j["cost_unknown_calls"]) == (8, 1)
    assert j["tokens_in"] == sum(int(r[f"judge_tokens_in_{o}"]) for r in rows for o in ORDERS)
    assert j["tokens_out"] == sum(int(r[f"judge_tokens_out_{o}"]) for r in rows for o in ORDERS)
    assert j["cost_usd"] == pytest.approx(sum(c for c in costs if c is not None), abs=1e-12)
    assert j["latency_ms_mean"] == pytest.approx(statistics.fmean(lat), abs=1e-9)
    assert j["latency_ms_p50"] == pytest.approx(statistics.median(lat), abs=1e-9)


def test_an_unused_column_is_named_as_long_names_it_and_strict_refuses_it(imported, ev, tmp_path):
    _, _, s, err, _ = imported
    assert s["ignored_columns"] == ["foo"] and s["warnings"] == []
    assert err == f"warning: {IGNORED.format('foo')} or --strict to refuse them\n"
    f, _ = with_fields(tmp_path, foo="x", latency="3")
    data, keys = tmp_path / "strict", tmp_path / "strict-keys"
    code, out, err = ev("--data", data, "import", "pairs", f, *ARGS, *DATED, "--keys", keys, "--strict")
    assert (code, out) == (2, "")
    assert (
        err == f"error: {f}: --strict: columns the import does not use: foo, latency; map them with --col "
        "FIELD=COLUMN (docs/IMPORT.md lists the fields) or leave them out of the file\n"
    )
    assert not data.exists() and not keys.exists()
    # --col reads a field from a column of another name (the field's own column is then unused)
    code, out, err = ev(
        "--data",
        data,
        "import",
        "pairs",
        f,
        *ARGS,
        *DATED,
        "--keys",
        keys,
        "--strict",
        "--col",
        "judge_latency_ms_swapped=latency",
        "--col",
        "difficulty_a=foo",
    )
    assert code == 2 and err.startswith(f"error: {f}: --col: unknown field 'difficulty_a' (one of latency_ms_a, ")
    code, out, err = ev(
        "--data", data, "import", "pairs", f, *ARGS, *DATED, "--keys", keys, "--json", "--col", "tokens_out_b=foo"
    )
    assert code == 2 and err == f"error: {f}: foo: line 2: 'x' is not a whole number from 0\n" and not data.exists()
    code, out, err = ev(
        "--data",
        data,
        "import",
        "pairs",
        f,
        *ARGS,
        *DATED,
        "--keys",
        keys,
        "--json",
        "--col",
        "judge_latency_ms_swapped=latency",
    )
    assert code == 0, err
    s = json.loads(out)
    assert s["ignored_columns"] == ["judge_latency_ms_swapped", "foo"]
    lat = pq.read_table(data / "runs" / s["run_id"] / "calls.parquet", columns=["latency_ms"]).column(0).to_pylist()
    assert sorted(set(lat) - {3.0}) != [] and lat.count(3.0) == 4  # the four swapped calls read `latency`


@pytest.mark.parametrize(
    ("change", "args", "says"),
    [
        ({1: {"judge_tokens_in_as_shown": "1.5"}}, [], "judge_tokens_in_as_shown: line 3: '1.5' is not a whole number"),
        ({0: {"latency_ms_b": "-4"}}, [], "latency_ms_b: line 2: '-4' is not a number from 0"),
        ({0: {"judge_cost_usd_swapped": "nan"}}, [], "judge_cost_usd_swapped: line 2: 'nan' is not a number from 0"),
        (
            {},
            ["--drop", "grader_as_shown"],
            "judge_latency_ms_as_shown: line 2: a grader call's field on a pair without the model's as_shown verdict",
        ),
        (
            {},
            ["--drop", "grader_as_shown", "--drop", "grader_swapped"],
            "grader call columns judge_latency_ms_as_shown, ",
        ),
    ],
)
def test_bad_fields_are_one_line_and_nothing_is_written(ev, tmp_path, change, args, says):
    f, rows = with_fields(tmp_path)
    for k, cells in change.items():
        rows[k].update(cells)
    drop = [args[i + 1] for i, a in enumerate(args) if a == "--drop"]
    base = list(ARGS)
    for col in drop:
        k = base.index(col)
        del base[k - 1 : k + 1]
    write(f, rows)
    data, keys = tmp_path / "d", tmp_path / "k"
    code, out, err = ev("--data", data, "import", "pairs", f, *base, *DATED, "--keys", keys)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"error: {f}: "), err
    assert says in err
    assert not data.exists() and not keys.exists()


def test_an_answer_on_both_sides_has_one_value(ev, tmp_path):
    """Arm columns: bikebot-v3's answer to q1 is on side a in one row and side b in another."""
    rows = [
        {
            "item_id": "q1",
            "input": "Hi?",
            "arm_a": "v3",
            "arm_b": "v4",
            "output_a": "Hello",
            "output_b": "Hey",
            "human": "a",
            "latency_ms_a": "120",
            "latency_ms_b": "80",
        },
        {
            "item_id": "q1",
            "input": "Hi?",
            "arm_a": "v5",
            "arm_b": "v3",
            "output_a": "Yo",
            "output_b": "Hello",
            "human": "b",
            "latency_ms_a": "95",
            "latency_ms_b": "120",
        },
    ]
    f = write(tmp_path / "both.csv", rows)
    code, out, err = ev(
        "--data", tmp_path / "d", "import", "pairs", f, "--human-col", "human", "--keys", tmp_path / "k", "--json"
    )
    assert code == 0, err
    s = json.loads(out)
    arms = json.loads((tmp_path / "k" / s["session_id"] / "key.json").read_text())["arms"]
    store = Store(tmp_path / "d", None)
    got = {
        a: store.records("SELECT latency_ms FROM read_parquet(?)", [store.path_of("generation", g, "outputs")])
        for a, g in arms.items()
    }
    assert got == {"v3": [{"latency_ms": 120.0}], "v4": [{"latency_ms": 80.0}], "v5": [{"latency_ms": 95.0}]}
    rows[1]["latency_ms_b"] = "121"
    write(f, rows)
    code, out, err = ev(
        "--data", tmp_path / "e", "import", "pairs", f, "--human-col", "human", "--keys", tmp_path / "k2"
    )
    assert code == 2 and err == (
        f"error: {f}: latency_ms_b: line 3: answer ('v3', 'q1', 1): latency_ms differs "
        "between its two sides (one per answer)\n"
    )
    assert not (tmp_path / "e").exists()


def test_a_floating_grader_is_flagged_unless_pinned(ev, tmp_path):
    f, _ = with_fields(tmp_path)
    code, out, err = ev(
        "--data",
        tmp_path / "a",
        "import",
        "pairs",
        f,
        *ARGS,
        "--judge-model",
        "gpt-4o",
        "--keys",
        tmp_path / "ka",
        "--json",
    )
    said = (
        "judge model 'gpt-4o' is not a dated snapshot: its verdicts can change under the same name; name the "
        "snapshot, or pass --judge-pinned if it is one"
    )
    assert code == 0 and json.loads(out)["warnings"] == [said] and err == f"warning: {said}\n"
    code, out, err = ev(
        "--data",
        tmp_path / "b",
        "import",
        "pairs",
        f,
        *ARGS,
        "--judge-model",
        "gpt-4o",
        "--judge-pinned",
        "--keys",
        tmp_path / "kb",
        "--json",
    )
    assert code == 0 and err == "" and json.loads(out)["warnings"] == []
    run = Store(tmp_path / "b", None).run(json.loads(out)["run_id"]).manifest
    assert (run.judge_model, run.knobs["judge_pinned"]) == ("gpt-4o", True)
