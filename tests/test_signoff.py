"""Expert sign-off on gold (issue 44, article 004: "expert sign-off is still outstanding"): a
per-gold-case state in the label store's database (SQLite and PostgreSQL), written by a signer
with the adjudicator or admin role, and accuracy on signed-off gold beside all gold
(`evalcore labels signoff | signed`, evalcore.storage.signoff, evalcore.review.signedgold)."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest
from conftest import DEMO

GEN = "support-g1"
CASES = [("sup-0001", "grounded", "pass"), ("sup-0002", "grounded", "fail"), ("sup-0003", "grounded", "fail"),
         ("sup-0003", "cites_source", "pass")]  # fmt: skip


def _run(ev, data, state, *args, db=None):
    code, out, err = ev("--data", data, "--state", state, *(("--db", db) if db else ()), *args)
    return code, out, err


def _ok(ev, data, state, *args, db=None):
    code, out, err = _run(ev, data, state, *args, "--json", db=db)
    assert code == 0, err
    return json.loads(out)


def _gold(ev, data, state, gen, cases, db=None):
    for item, crit, value in cases:
        _ok(ev, data, state, "labels", "add", "--gen", gen, "--item", item, "--criterion", crit, "--value", value,
            "--reviewer", "ann", "--role", "adjudicator", db=db)  # fmt: skip


def _expected(data, run_id, cases, keep) -> tuple[int, int]:
    """(cases, agreeing) of a run's judge-round-1 verdicts against gold, read straight from its file."""
    rows = dict(
        ((i, c), p)
        for i, c, p in duckdb.connect().sql(
            f"SELECT item_id, criterion, passed FROM '{data}/runs/{run_id}/verdicts.parquet' "
            "WHERE judge_round = 1 AND error IS NULL AND passed IS NOT NULL"
        ).fetchall()
    )
    got = [(rows[(i, c)], v == "pass") for i, c, v in cases if (i, c) in rows and (i, c) in keep]
    return len(got), sum(a == b for a, b in got)


def test_the_demo_counts_signed_off_gold_beside_all_gold(ev, tmp_path):
    s = tmp_path / "s"
    _gold(ev, DEMO, s, GEN, CASES)
    before = _ok(ev, DEMO, s, "labels", "signed", "--gen", GEN)
    assert (before["gold_cases"], before["signed_off"]) == (4, 0)
    assert before["caveat"].startswith("No domain expert has signed off any of the 4 gold cases")
    signed = _ok(ev, DEMO, s, "labels", "signoff", "--gen", GEN, "--item", "sup-0001", "--item", "sup-0003",
                 "--by", "dr.bo", "--note", "read against the policy")  # fmt: skip
    assert sorted((r["item_id"], r["criterion"], r["expert"], r["action"]) for r in signed) == [
        ("sup-0001", "grounded", "dr.bo", "signed"), ("sup-0003", "cites_source", "dr.bo", "signed"),
        ("sup-0003", "grounded", "dr.bo", "signed")]  # fmt: skip
    fig = _ok(ev, DEMO, s, "labels", "signed", "--gen", GEN)
    assert (fig["gold_cases"], fig["signed_off"], fig["not_signed_off"]) == (4, 3, 1)
    keep_all = {(i, c) for i, c, _ in CASES}
    keep_signed = keep_all - {("sup-0002", "grounded")}
    by = {(r["run_id"], r["criterion"]): r for r in fig["runs"]}
    assert ("support-split", "grounded") in by
    for (rid, crit), r in by.items():
        mine = [x for x in CASES if x[1] == crit]
        assert (r["all_gold"]["cases"], r["all_gold"]["agree"]) == _expected(DEMO, rid, mine, keep_all)
        assert (r["signed_off"]["cases"], r["signed_off"]["agree"]) == _expected(DEMO, rid, mine, keep_signed)
    # revoking takes one back; its text output says the figure and the caveat
    _ok(ev, DEMO, s, "labels", "signoff", "--gen", GEN, "--item", "sup-0003", "--criterion", "grounded", "--by",
        "dr.bo", "--revoke")  # fmt: skip
    code, out, err = _run(ev, DEMO, s, "labels", "signed", "--gen", GEN)
    assert code == 0, err
    assert "4 gold cases, 2 signed off by a domain expert" in out
    assert "2 of 4 gold cases are not signed off by a domain expert yet" in out


def test_only_gold_and_only_signers(ev, tmp_path):
    """An item without gold, or a signer whose roles file gives only the reviewer role, is refused in
    one line and nothing is written."""
    s = tmp_path / "s"
    _gold(ev, DEMO, s, GEN, CASES[:1])
    code, _, err = _run(ev, DEMO, s, "labels", "signoff", "--gen", GEN, "--item", "sup-0001", "--item", "sup-0009",
                        "--by", "dr.bo")  # fmt: skip
    assert code == 2 and "sup-0009" in err and "has no gold" in err
    (s / "roles.toml").write_text('[users."rev@example.org"]\nroles = ["reviewer"]\n', encoding="utf-8")
    code, _, err = _run(ev, DEMO, s, "labels", "signoff", "--gen", GEN, "--item", "sup-0001", "--by",
                        "rev@example.org")  # fmt: skip
    assert code == 2 and err.startswith("error:") and len(err.strip().splitlines()) == 1
    assert _ok(ev, DEMO, s, "labels", "signed", "--gen", GEN)["signed_off"] == 0


def _imported(ev, tmp_path):
    f = tmp_path / "mine.csv"
    rows = [(f"q{i}", "complete", "pass" if i % 3 else "fail") for i in range(1, 7)]
    with f.open("w", newline="", encoding="utf-8") as h:
        w = csv.writer(h)
        w.writerow(["item_id", "input", "output", "criterion", "value"])
        w.writerows([(i, f"question {i}", f"answer {i}", c, v) for i, c, v in rows])
    d, s = tmp_path / "d", tmp_path / "s"
    gen = _ok(ev, d, s, "import", "long", f, "--run-id", "mine")["gen_id"]
    return d, s, gen


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_import_on_both_databases(ev, tmp_path, backend, request):
    db = request.getfixturevalue("pg_url") if backend == "postgres" else None
    d, s, gen = _imported(ev, tmp_path)
    # gold: q1, q2 agree with the judge (pass), q3 disagrees (judge fail, gold pass)
    _gold(ev, d, s, gen, [("q1", "complete", "pass"), ("q2", "complete", "pass"), ("q3", "complete", "pass")], db=db)
    _ok(ev, d, s, "labels", "signoff", "--gen", gen, "--item", "q3", "--by", "dr.bo", db=db)
    fig = _ok(ev, d, s, "labels", "signed", "--gen", gen, db=db)
    (r,) = fig["runs"]
    assert (r["run_id"], r["all_gold"]["cases"], r["all_gold"]["agree"]) == ("mine", 3, 2)
    assert (r["signed_off"]["cases"], r["signed_off"]["agree"], r["signed_off"]["accuracy"]) == (1, 0, 0.0)
    assert fig["caveat"] == (
        "2 of 3 gold cases are not signed off by a domain expert yet: the signed-off column counts only the others."
    )
