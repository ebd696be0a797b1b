"""Presentation removed by normalisation (issue 44, article 001): a session whose normalisation
removed structure says that its graders did not compare presentation and names the mechanical
structure check, whose per-arm figures (raw answers with lists, headings, bold, code) come once the
session is unblinded (`evalcore pairs presentation`, the report, evalcore.pairwise.presentation)."""

from __future__ import annotations

import csv
import json

import duckdb
from conftest import DEMO, REPO
from markdown_it import MarkdownIt

from evalcore import Store
from evalcore import pairwise as P
from evalcore.pairwise.presentation import sentence_of

MD = MarkdownIt("commonmark")


def _expected(outputs: list[str]) -> dict[str, int]:
    """Answers with each kind of structure, read from CommonMark's block and inline tokens."""
    out = {"lists": 0, "headings": 0, "bold": 0, "code": 0}
    for o in outputs:
        toks = MD.parse(o)
        kinds = {t.type for t in toks}
        out["lists"] += bool(kinds & {"bullet_list_open", "ordered_list_open"})
        out["headings"] += "heading_open" in kinds
        out["code"] += bool(kinds & {"fence", "code_block"})
        out["bold"] += any(c.type == "strong_open" for t in toks if t.type == "inline" for c in t.children or [])
    return out


def test_the_demo_open_session_says_it_and_the_closed_one_counts_per_arm(ev, tmp_path):
    s = tmp_path / "s"
    code, out, err = ev(
        "--data", DEMO, "--state", s, "pairs", "presentation", "--session", "accounts-practice", "--json"
    )
    assert code == 0, err
    p = json.loads(out)
    assert p["removed"] == ["headings", "bullets", "blank-lines"] and p["arms"] is None
    assert "did not see, and did not compare, presentation" in p["sentence"]
    assert p["reason"] == "the session is not unblinded here"
    P.close_session(Store(DEMO, s), "accounts-ab", REPO / "data" / "demo-keys", n_perm=9)
    code, out, err = ev("--data", DEMO, "--state", s, "pairs", "presentation", "--session", "accounts-ab", "--json")
    assert code == 0, err
    arms = json.loads(out)["arms"]
    assert set(arms) == {"concise", "detailed"}
    items = {
        r[0]
        for r in duckdb.connect().sql(f"SELECT item_id FROM '{DEMO}/sessions/accounts-ab/pairs.parquet'").fetchall()
    }
    for arm, gen in (("concise", "accounts-g1"), ("detailed", "accounts-g2")):
        rows = (
            duckdb.connect()
            .sql(
                f"SELECT item_id, output FROM '{DEMO}/generations/{gen}/outputs.parquet' WHERE round = 1 AND error IS NULL"
            )
            .fetchall()
        )
        want = _expected([o for i, o in rows if i in items and o and o.strip()])
        assert {k: arms[arm][k]["k"] for k in want} == want, arm
        assert arms[arm]["answers"] == arms[arm]["lists"]["n"] == 120
    assert arms["detailed"]["headings"]["k"] > arms["concise"]["headings"]["k"]  # the demo's better-structured arm
    code, out, err = ev("--data", DEMO, "--state", s, "pairs", "report", "--session", "accounts-ab")
    assert code == 0 and sentence_of(["headings", "bullets", "blank-lines"]) in out
    assert "structure check: evalcore pairs presentation --session accounts-ab" in out


def _own(ev, tmp_path, normalise: str):
    d, s = tmp_path / f"d-{normalise}", tmp_path / f"s-{normalise}"
    d.mkdir()
    texts = {"a": "## Steps\n\n- open **Settings**\n- press Reset\n", "b": "Open Settings and press Reset."}
    for arm, text in texts.items():
        with (tmp_path / f"{arm}.csv").open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["item_id", "output"])
            w.writerows([(f"q{i:02d}", f"{text} ({i})") for i in range(10)])
    code, _, err = ev("--data", d, "--state", s, "pairs", "make", "--session", "mine", "--arm", f"a={tmp_path}/a.csv",
                      "--arm", f"b={tmp_path}/b.csv", "--keys", tmp_path / f"k-{normalise}", "--normalise", normalise,
                      "--json")  # fmt: skip
    assert code == 0, err
    code, _, err = ev(
        "--data", d, "--state", s, "pairs", "close", "--session", "mine", "--keys", tmp_path / f"k-{normalise}"
    )
    assert code == 0, err
    return d, s


def test_a_session_of_ones_own_files(ev, tmp_path):
    d, s = _own(ev, tmp_path, "headings,bullets")
    code, out, err = ev("--data", d, "--state", s, "pairs", "presentation", "--session", "mine", "--json")
    assert code == 0, err
    p = json.loads(out)
    assert p["removed"] == ["headings", "bullets"] and p["sentence"].startswith(
        "This session's normalisation removed headings, list markers from both answers before grading"
    )
    got = {arm: {k: x[k]["share"] for k in ("lists", "headings", "bold", "code")} for arm, x in p["arms"].items()}
    assert got == {"a": {"lists": 1.0, "headings": 1.0, "bold": 1.0, "code": 0.0},
                   "b": {"lists": 0.0, "headings": 0.0, "bold": 0.0, "code": 0.0}}  # fmt: skip
    # nothing removed: nothing said, in the report either
    d, s = _own(ev, tmp_path, "none")
    code, out, err = ev("--data", d, "--state", s, "pairs", "presentation", "--session", "mine", "--json")
    assert code == 0 and json.loads(out)["sentence"] is None, err
    code, out, err = ev("--data", d, "--state", s, "pairs", "report", "--session", "mine")
    assert code == 0 and "did not compare, presentation" not in out, err
