"""A small world for the review queue, written through the store: every reason code is planted on
a known set of items, and one item is the negative case (prose saying "couldn't find" next to
structured fields that say the answer covers everything).

Runs on generation ``qg`` (12 items, one round):

* ``ja-split``: judge-a, one call per criterion, 3 judge rounds; criteria ``ok`` (binary),
  ``corr`` (ternary, with covered / missed / triggered), ``score`` (ordinal 0-5, pass at 3);
* ``ja-single``: judge-a, one call for all criteria, 1 round; ``ok``;
* ``jb-split``: judge-b, one call per criterion, 1 round; ``ok`` (errored on i03).
"""

from __future__ import annotations

from pathlib import Path

ITEMS = [f"i{k:02d}" for k in range(1, 13)]
MUST = ["names the Settings page", "mentions the backup codes"]
WRONG_IF = ["says SMS codes are available"]

#: reason code -> the (item, criterion) cases planted to raise it
EXPECTED = {
    "statement_contradicts": {("i07", "corr"), ("i08", "score"), ("i09", "corr")},
    "postprocess_rewrite": {("i05", "corr"), ("i06", "score")},
    "runs_disagree": {("i01", "ok"), ("i02", "ok")},
    "harness_disagree": {("i02", "ok"), ("i03", "ok")},
    "rounds_disagree": {("i04", "ok")},
}
NEGATIVE = "i10"
NOTE_PROSE = "I couldn't find anything about the other phone, but the answer names the Settings page and the backup codes."


def make_queue_world(data: Path, *, judge_family: str | None = None, generator_model: str = "writer-gamma-1") -> Path:
    from evalcore import contract as S
    from evalcore.storage.store import Store

    data = Path(data)
    data.mkdir(parents=True, exist_ok=True)
    store = Store(data, data.parent / f"{data.name}-unused-state")
    when = "2026-01-01T00:00:00Z"
    items = [{"item_id": iid, "input": f"How do I set up two-factor sign-in ({iid})?",
              "context": "[doc-1] Two-factor sign-in is set up under Settings > Security; backup codes work without "
                         "the phone.", "reference": "Use Settings > Security and keep the backup codes.",
              "must_have": MUST, "wrong_if": WRONG_IF, "class": "account" if k % 2 else "security", "holdout": False}
             for k, iid in enumerate(ITEMS)]
    sm = S.SuiteManifest(suite_id="qs", created_at=when, content_hash=S.suite_hash(items), n_items=len(items),
                         simulated=True)
    store.write_suite(sm, items)
    outputs = [{"item_id": iid, "round": 1, "abstained": False, "latency_ms": 10.0,
                "output": (f"Open Settings > Security and keep your backup codes ({iid}). " +
                           ("I couldn't find anything about using a second phone, so I left that out."
                            if iid == NEGATIVE else ""))} for iid in ITEMS]
    gm = S.GenerationManifest(gen_id="qg", suite_id="qs", suite_hash=sm.content_hash, created_at=when,
                              source="simulated", outputs_hash=S.outputs_hash(outputs), simulated=True,
                              knobs={"generator_model": generator_model})
    store.write_generation(gm, outputs)

    ok = S.Criterion(name="ok", kind="binary", description="Does the answer address the question?")
    corr = S.Criterion(name="corr", kind="ternary", description="Correct against the must-have and wrong-if items.")
    score = S.Criterion(name="score", kind="ordinal", scale_min=0, scale_max=5, threshold=3,
                        description="How helpful, 0-5.")

    def write(run_id: str, model: str, mode: str, rounds: int, crits: list, rows: list[dict]) -> None:
        rubric = S.Rubric(criteria=crits)
        calls = [{"call_id": f"{run_id}-{r['item_id']}-{r['judge_round']}-{r['criterion']}", "item_id": r["item_id"],
                  "gen_round": 1, "judge_round": r["judge_round"], "criteria": [r["criterion"]]} for r in rows]
        for r, c in zip(rows, calls):
            r.setdefault("call_id", c["call_id"])
        m = S.RunManifest(run_id=run_id, gen_id="qg", created_at=when, rubric=rubric, rubric_hash=rubric.hash(),
                          mode=mode, field_order=rubric.names(), judge_model=model, judge_family=judge_family,
                          source="simulated", judge_rounds=rounds, simulated=True, postprocess_version="pp-test")
        store.write_run(m, [{"run_id": run_id, "gen_round": 1, "position": 0, **r} for r in rows], calls)

    def ok_row(iid, jr, passed, error=None):
        return {"item_id": iid, "criterion": "ok", "judge_round": jr, "passed": None if error else passed,
                "raw_verdict": None if error else ("pass" if passed else "fail"), "error": error,
                "reason": NOTE_PROSE if iid == NEGATIVE else ("Addresses it." if passed else "Does not address it.")}

    # ja-split: 3 rounds
    rows = []
    for iid in ITEMS:
        for jr in (1, 2, 3):
            rows.append(ok_row(iid, jr, not (iid == "i04" and jr == 2)))
            # corr
            label, raw, covered, triggered = "correct", "correct", list(MUST), []
            if iid == "i05":  # post-processing rewrote a correct verdict; the judge itself missed one item
                label, covered = "wrong", [MUST[0]]
            elif iid == "i07":  # wrong, although the judge says everything is covered and nothing triggered
                label, raw = "wrong", "wrong"
            elif iid == "i09":  # correct, although a wrong-if item is triggered
                triggered = list(WRONG_IF)
            rows.append({"item_id": iid, "criterion": "corr", "judge_round": jr, "passed": label == "correct",
                         "label": label, "raw_verdict": raw, "covered": covered,
                         "missed": [m for m in MUST if m not in covered], "triggered": triggered,
                         "reason": NOTE_PROSE if iid == NEGATIVE else "Covers the points."})
            s, raw_s, passed = 4.0, "4", True
            if iid == "i06":  # raw 4, stored 2
                s, raw_s, passed = 2.0, "4", False
            elif iid == "i08":  # score 4 with the verdict fail
                passed = False
            rows.append({"item_id": iid, "criterion": "score", "judge_round": jr, "passed": passed, "score": s,
                         "raw_verdict": raw_s, "reason": "Helpful enough."})
    write("ja-split", "judge-a", "split", 3, [ok, corr, score], rows)
    write("ja-single", "judge-a", "single", 1, [ok],
          [ok_row(iid, 1, iid not in ("i02", "i03")) for iid in ITEMS])
    write("jb-split", "judge-b", "split", 1, [ok],
          [ok_row(iid, 1, iid != "i01", error="provider timeout" if iid == "i03" else None) for iid in ITEMS])
    return data
