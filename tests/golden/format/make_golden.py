"""Write the golden data directories of tests/test_store.py (run once; the output is committed).

    .venv/bin/python tests/golden/format/make_golden.py

* ``valid/``: a small data directory of format version 1 with one of everything: a suite, a
  generation (2 rounds), a run (2 criteria, 2 judge rounds, calls), a pairwise session (pairs,
  judgments) with its model grader run (pair_verdicts) and a label set. Written through the store's
  writers with fixed timestamps, so the manifests are byte-stable.
* every other directory is a small data directory broken in one way (a newer version, a manifest
  or a table that breaks the contract); ``CASES`` in tests/test_store.py says which error each
  must give and which file and field it must name.

The committed files are the reference: tests/test_store.py reads them with today's Store, and checks
that today's writers still produce the same manifests and the same table schemas and rows.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent.parent))

from evalcore import contract as S  # noqa: E402
from evalcore.storage.files import to_table  # noqa: E402
from evalcore.storage.store import Store  # noqa: E402

T0 = "2026-01-02T03:04:05Z"
T0_DT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def items() -> list[dict]:
    return [
        {"item_id": "q1", "input": "How long is the refund window?", "reference": "30 days.",
         "must_have": ["30 days"], "wrong_if": ["60 days"], "class": "billing", "holdout": False},
        {"item_id": "q2", "input": "Can I change my plan mid-month?", "reference": "Yes, pro-rated.",
         "must_have": ["yes", "pro-rated"], "class": "plans", "difficulty": "easy", "holdout": False},
        {"item_id": "q3", "input": "Do you ship to Norway?", "context": "Shipping: EU and EEA countries.",
         "must_have": ["yes"], "class": "shipping", "holdout": True},
    ]


def outputs() -> list[dict]:
    texts = {"q1": ("You have 30 days.", "Refunds within 30 days of purchase."),
             "q2": ("Yes, the change is pro-rated.", "Yes."),
             "q3": ("Yes, Norway is in the EEA.", "I am not sure.")}
    return [{"item_id": i, "round": r + 1, "output": texts[i][r], "abstained": i == "q3" and r == 1,
             "tokens_in": 40 + r, "tokens_out": 12, "cost_usd": 0.0001, "latency_ms": 350.0 + 10 * r}
            for i in ("q1", "q2", "q3") for r in range(2)]


def rubric() -> S.Rubric:
    return S.Rubric(name="support", criteria=[
        S.Criterion(name="correct", kind="binary", description="The answer is right.", gate=True),
        S.Criterion(name="complete", kind="ordinal", description="Covers every must-have.", scale_min=1,
                    scale_max=5, threshold=4)])


def write_valid(root: Path) -> None:
    root.mkdir(parents=True)
    st = Store(root, root.parent / "unused-state")
    its = items()
    suite = S.SuiteManifest(suite_id="s1", description="golden suite", created_at=T0,
                            content_hash=S.content_hash(its), n_items=len(its), curated=True, source="by hand")
    st.write_suite(suite, its)
    outs = outputs()
    gen = S.GenerationManifest(gen_id="g1", suite_id="s1", suite_hash=suite.content_hash, created_at=T0,
                               knobs={"generator_model": "sys-1", "temperature": 0.2}, rounds=2, source="generated",
                               outputs_hash=S.content_hash(sorted([o["item_id"], o["round"], o["output"]]
                                                                  for o in outs)),
                               totals=S.Totals(calls=6, tokens_in=243, tokens_out=72, cost_usd=0.0006))
    st.write_generation(gen, outs)
    rb = rubric()
    verdicts, calls = [], []
    score = {("q1", 1): 5, ("q1", 2): 4, ("q2", 1): 4, ("q2", 2): 2, ("q3", 1): 5, ("q3", 2): 1}
    for o in outs:
        for jr in (1, 2):
            cid = f"c-{o['item_id']}-{o['round']}-{jr}"
            calls.append({"call_id": cid, "item_id": o["item_id"], "gen_round": o["round"], "judge_round": jr,
                          "criteria": ["correct", "complete"], "model": "judge-1-2026-01-01", "prompt_hash": "sha256:0",
                          "tokens_in": 300, "tokens_out": 60, "cost_usd": None, "latency_ms": 800.0, "attempts": 1,
                          "cache_hit": False, "started_at": T0_DT})
            ok = score[(o["item_id"], o["round"])] >= 4
            verdicts.append({"run_id": "r1", "item_id": o["item_id"], "gen_round": o["round"], "criterion": "correct",
                             "judge_round": jr, "passed": ok, "raw_verdict": "pass" if ok else "fail",
                             "reason": "matches the reference" if ok else "does not answer", "position": 0,
                             "call_id": cid})
            s = score[(o["item_id"], o["round"])]
            verdicts.append({"run_id": "r1", "item_id": o["item_id"], "gen_round": o["round"], "criterion": "complete",
                             "judge_round": jr, "passed": s >= 4, "score": float(s), "raw_verdict": str(s),
                             "reason": f"{s} of 5", "covered": ["30 days"] if o["item_id"] == "q1" else [],
                             "position": 1, "call_id": cid})
    run = S.RunManifest(run_id="r1", gen_id="g1", created_at=T0, rubric=rb, rubric_hash=rb.hash(), mode="single",
                        field_order=rb.names(), judge_model="judge-1-2026-01-01", temperature=0.0, judge_rounds=2,
                        source="judged", totals=S.Totals(calls=12, tokens_in=3600, tokens_out=720))
    st.write_run(run, verdicts, calls)
    pairs = [{"pair_id": "p7f3a", "item_id": "q1", "left_text": "You have 30 days.",
              "right_text": "Refunds within 30 days of purchase."},
             {"pair_id": "p01c9", "item_id": "q2", "left_text": "Yes.", "right_text": "Yes, the change is pro-rated."},
             {"pair_id": "pb21e", "item_id": "q2", "left_text": "Yes, the change is pro-rated.", "right_text": "Yes.",
              "mirror_of": "p01c9"}]
    judgments = [{"pair_id": "p7f3a", "reviewer": "ann", "choice": "same", "seconds": 12.5},
                 {"pair_id": "p01c9", "reviewer": "ann", "choice": "right", "seconds": 9.0},
                 {"pair_id": "pb21e", "reviewer": "ann", "choice": "left"}]
    sess = S.SessionManifest(session_id="sess1", suite_id="s1", created_at=T0, status="closed", n_pairs=3,
                             settings=S.SessionSettings(normalise=["headings"], mirror_fraction=0.5, seed=3),
                             source="made")
    st.write_session(sess, pairs, judgments)
    prb = S.Rubric(name="pairwise", criteria=[S.Criterion(name="preference", kind="binary")])
    grader = S.RunManifest(run_id="r-pairs", gen_id="g1", created_at=T0, rubric=prb, rubric_hash=prb.hash(),
                           mode="imported", field_order=["preference"], judge_model="judge-1-2026-01-01",
                           source="imported", knobs={"session_id": "sess1"})
    st.write_run(grader, [], [], [{"pair_id": "p7f3a", "order": "as_shown", "choice": "right"},
                                  {"pair_id": "p7f3a", "order": "swapped", "choice": "same"}])
    labels = [{"item_id": "q1", "gen_round": 1, "criterion": "correct", "annotator": "ann", "value": "pass",
               "passed": True},
              {"item_id": "q2", "gen_round": 2, "criterion": "complete", "annotator": "ann", "value": "3",
               "passed": False, "score": 3.0}]
    st.write_labelset(S.LabelSetManifest(labelset_id="l1", gen_id="g1", created_at=T0, annotators=["ann"],
                                         rubric=rb, description="golden labels"), labels)


def _suite_only(root: Path, valid: Path) -> None:
    shutil.copytree(valid / "suites", root / "suites")


def _set_json(path: Path, **changes) -> None:
    d = json.loads(path.read_text(encoding="utf-8"))
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
        else:
            d[k] = v
    path.write_text(json.dumps(d, indent=2) + "\n", encoding="utf-8")


def _rewrite(path: Path, fn, version: str | None = None) -> None:
    t = pq.read_table(path)
    meta = dict(t.schema.metadata or {})
    t = fn(t)
    if version is not None:
        meta[b"evalcore.schema_version"] = version.encode()
    pq.write_table(t.replace_schema_metadata(meta), path)


def write_variants(valid: Path) -> None:
    # a manifest and a table from a newer evalcore
    d = HERE / "future-manifest"
    _suite_only(d, valid)
    _set_json(d / "suites/s1/manifest.json", schema_version=99, new_field_of_v99="whatever")
    d = HERE / "future-parquet"
    _suite_only(d, valid)
    _rewrite(d / "suites/s1/items.parquet", lambda t: t, version="99")
    d = HERE / "future-run-manifest"
    shutil.copytree(valid, d, ignore=shutil.ignore_patterns("sessions", "labels", "r-pairs"))
    _set_json(d / "runs/r1/manifest.json", schema_version=99)
    # manifests that break the contract
    d = HERE / "invalid-manifest-json"
    _suite_only(d, valid)
    (d / "suites/s1/manifest.json").write_text('{"schema_version": 1, "suite_id": "s1",\n', encoding="utf-8")
    d = HERE / "invalid-manifest-field"
    _suite_only(d, valid)
    _set_json(d / "suites/s1/manifest.json", content_hash=None)
    d = HERE / "invalid-manifest-version"
    _suite_only(d, valid)
    _set_json(d / "suites/s1/manifest.json", schema_version="one")
    # tables that break the contract
    d = HERE / "invalid-parquet-column"
    _suite_only(d, valid)
    _rewrite(d / "suites/s1/items.parquet", lambda t: t.drop_columns(["input"]))
    d = HERE / "invalid-parquet-type"
    shutil.copytree(valid, d, ignore=shutil.ignore_patterns("runs", "sessions", "labels"))
    _rewrite(d / "generations/g1/outputs.parquet",
             lambda t: t.set_column(t.schema.get_field_index("round"), pa.field("round", pa.string()),
                                    pa.array([str(x) for x in t.column("round").to_pylist()])))
    d = HERE / "invalid-parquet-no-version"
    _suite_only(d, valid)
    t = pq.read_table(d / "suites/s1/items.parquet")
    pq.write_table(t.replace_schema_metadata({}), d / "suites/s1/items.parquet")
    d = HERE / "invalid-duplicate-key"
    _suite_only(d, valid)
    _rewrite(d / "suites/s1/items.parquet", lambda t: pa.concat_tables([t, t.slice(1, 1)]))
    d = HERE / "invalid-missing-generation"
    shutil.copytree(valid, d, ignore=shutil.ignore_patterns("generations", "sessions", "labels", "r-pairs"))
    d = HERE / "invalid-dir-name"
    _suite_only(d, valid)
    _set_json(d / "suites/s1/manifest.json", suite_id="s2")


def main() -> None:
    for p in HERE.iterdir():
        if p.is_dir() and not p.name.startswith(("_", ".")):
            shutil.rmtree(p)
    valid = HERE / "valid"
    write_valid(valid)
    write_variants(valid)
    # to_table is what every writer uses: a sanity check that the valid tables are in today's schema
    for f in valid.rglob("*.parquet"):
        to_table(pq.read_table(f), f.stem)
    print("wrote", ", ".join(sorted(p.name for p in HERE.iterdir() if p.is_dir())))


if __name__ == "__main__":
    main()
