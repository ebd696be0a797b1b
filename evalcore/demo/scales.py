"""The support world's other scales and its people (ALL SIMULATED): the ternary judge run and its
buggy post-processing (``support_ternary_truth``, ``write_support_ternary``), the ordinal run on a
1-5 scale (``write_support_ordinal``), and the label set of two simulated annotators
(``write_support_labels``). The binary runs are :mod:`evalcore.demo.support`."""

from __future__ import annotations

import numpy as np

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.demo.common import (
    BUG_PATTERN,
    CRITERIA,
    HUMAN_OVERLAP,
    HUMAN_SLIP,
    N_HUMAN_ITEMS,
    POSTPROCESS_BUGGY,
    TERNARY_NOISE,
    _at,
    _Cols,
    _rng,
    _split_call,
    _write_split_run,
)
from evalcore.demo.support import _rubric_binary
from evalcore.demo.text import (
    TOPICS,
)
from evalcore.storage.store import Store


def support_ternary_truth(seed: int, fail: np.ndarray, info: list[dict]) -> list[tuple[str, list[int], bool]]:
    """Per item: (true label, indices of must_have items covered, wrong_if triggered).
    Off-topic answers are wrong; a fabricated answer trips its wrong-if half the time; otherwise
    an answer misses one must-have now and then (partial)."""
    rng = _rng(seed, "support-ternary-truth")
    out = []
    aq, nf = fail[:, CRITERIA.index("answers_question")], fail[:, CRITERIA.index("no_fabrication")]
    ref = fail[:, CRITERIA.index("refuses_when_unanswerable")]
    for i in range(fail.shape[0]):
        k = len(TOPICS[info[i]["topic"]]["must_have"]) if not info[i]["unanswerable"] else 2
        allc = list(range(k))
        if info[i]["unanswerable"]:
            out.append(("correct", allc, False) if not ref[i] else ("wrong", [], True))
        elif aq[i]:
            out.append(("wrong", [] if rng.random() < 0.6 else [0], False))
        elif nf[i] and rng.random() < 0.5:
            out.append(("wrong", allc, True))
        elif rng.random() < 0.15:
            miss = int(rng.integers(k))
            out.append(("partial", [x for x in allc if x != miss], False))
        else:
            out.append(("correct", allc, False))
    return out


def _ternary_reading(
    rng: np.random.Generator, label: str, cov: list[int], trig: bool, item: dict
) -> tuple[str, list[str], list[str], list[str]]:
    """The judge's raw verdict on an item of true ``label`` (one step off with probability
    TERNARY_NOISE) and the covered, missed and triggered lists it returns with it."""
    raw = label
    order = list(S.TERNARY_LABELS)
    if rng.random() < TERNARY_NOISE:  # the judge moves one step
        k = order.index(label)
        raw = order[k + 1] if k == 0 else order[k - 1] if k == 2 else order[int(rng.integers(2)) * 2]
    mh = item["must_have"]
    triggered: list[str]
    if raw == "correct":
        covered, triggered = list(mh), []
    elif raw == "partial":
        covered = [mh[x] for x in cov] if len(cov) < len(mh) and cov else mh[:-1]
        triggered = []
    else:
        covered = [mh[x] for x in cov] if len(cov) < len(mh) else []
        triggered = [item["wrong_if"][0]] if trig or not covered else []
    return raw, covered, [m for m in mh if m not in covered], triggered


def write_support_ternary(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """`support-ternary`: correct/partial/wrong against must_have / wrong_if, post-processed by a
    buggy rule that forces `wrong` whenever the answer contains a "couldn't find" phrase, even
    when the judge said correct and listed every must-have as covered."""
    rng = _rng(seed, "support-ternary")
    truth = support_ternary_truth(seed, fail, info)
    run_id = "support-ternary"
    crit = S.Criterion(
        name="correctness",
        kind="ternary",
        description="Correct if every must-have is covered and no wrong-if is triggered; "
        "partial if some must-have is missed; wrong otherwise.",
    )
    rubric = S.Rubric(name="support-ternary", criteria=[crit])
    tpl = (
        "Grade the answer correct, partial or wrong against the must-have and wrong-if lists. Return "
        "reason, verdict, covered, missed, triggered.\n\nQuestion:\n{input}\n\nMust have:\n{must_have}\n\n"
        "Wrong if:\n{wrong_if}\n\nAnswer:\n{output}"
    )
    tpl_hash = H.text_hash(tpl)
    v, c = _Cols("verdicts"), _Cols("calls")
    for i, item in enumerate(items):
        raw, covered, missed, triggered = _ternary_reading(rng, *truth[i], item)
        bug = bool(BUG_PATTERN.search(outputs[i]["output"]))
        derived = "wrong" if bug else raw
        reason = {
            "correct": "Covers every must-have point and triggers nothing on the wrong-if list.",
            "partial": f"Misses: {missed[0] if missed else 'one point'}.",
            "wrong": (f"Triggers: {triggered[0]}." if triggered else "Does not cover the required points."),
        }[raw]
        _split_call(
            rng,
            v,
            c,
            run_id,
            i + 1,
            item,
            outputs[i]["output"],
            1,
            "correctness",
            tpl_hash,
            9,
            passed=derived == "correct",
            label=derived,
            raw_verdict=raw,
            reason=reason,
            covered=covered,
            missed=missed,
            triggered=triggered,
        )
    return _write_split_run(
        store,
        v,
        c,
        run_id=run_id,
        gen_id="support-g1",
        hours=9,
        rubric=rubric,
        field_order=["correctness"],
        template=tpl,
        template_hash=tpl_hash,
        postprocess_version=POSTPROCESS_BUGGY,
        description="SIMULATED: made by evalcore's seeded simulator. Ternary correctness against must-have "
        "items. The post-processing (pp-2.1-buggy) forces 'wrong' whenever the answer contains "
        '"couldn\'t find", even where the judge said correct and listed every must-have as covered.',
    )


def write_support_ordinal(store: Store, seed: int, items, info, outputs, fail) -> dict:
    """`support-ordinal`: 0-5 scores (helpfulness pass at 3; accuracy and safety pass at 4 and are
    hard gates). Scores follow the truth: off-topic or rude answers are less helpful, ungrounded or
    fabricated ones less accurate; safety is nearly always high."""
    rng = _rng(seed, "support-ordinal")
    run_id = "support-ordinal"
    ordinal = {  # criterion: (description, pass threshold on the 0-5 scale, hard gate)
        "helpfulness": ("How useful is the answer to the customer?", 3, False),
        "accuracy": ("Are the facts right and supported?", 4, True),
        "safety": ("Free of harmful or privacy-risking advice?", 4, True),
    }
    thresholds = {name: threshold for name, (_, threshold, _) in ordinal.items()}
    rubric = S.Rubric(
        name="support-ordinal",
        criteria=[
            S.Criterion(name=name, kind="ordinal", description=text, scale_min=0, scale_max=5, threshold=t, gate=gate)
            for name, (text, t, gate) in ordinal.items()
        ],
    )
    tpl = "Score the answer 0-5 on {criterion}. Reason first, then the score.\n\n{input}\n\n{context}\n\n{output}"
    tpl_hash = H.text_hash(tpl)
    v, c = _Cols("verdicts"), _Cols("calls")
    col = {x: CRITERIA.index(x) for x in CRITERIA}
    call_no = 0
    for i, item in enumerate(items):
        f = fail[i]
        base = {
            "helpfulness": 4.3 - 2.3 * f[col["answers_question"]] - 1.0 * f[col["on_tone"]],
            "accuracy": 4.6 - 1.3 * f[col["grounded"]] - 1.5 * f[col["no_fabrication"]],
            "safety": 4.8 - (1.8 if rng.random() < 0.03 else 0.0),
        }
        for k, (name, mu) in enumerate(base.items()):
            call_no += 1
            score = float(np.clip(np.rint(mu + rng.normal(0, 0.6)), 0, 5))
            _split_call(
                rng,
                v,
                c,
                run_id,
                call_no,
                item,
                outputs[i]["output"],
                1,
                name,
                tpl_hash,
                10,
                passed=score >= thresholds[name],
                score=score,
                raw_verdict=str(int(score)),
                reason=f"Scored {int(score)} of 5 on {name} for {info[i]['subject']}.",
            )
    return _write_split_run(
        store,
        v,
        c,
        run_id=run_id,
        gen_id="support-g1",
        hours=10,
        rubric=rubric,
        field_order=rubric.names(),
        template=tpl,
        template_hash=tpl_hash,
        description="SIMULATED: made by evalcore's seeded simulator. Ordinal 0-5 scores with pass thresholds; "
        "accuracy and safety are hard gates.",
    )


def _cells(fail: np.ndarray, names: tuple[str, str]) -> np.ndarray:
    """Cell number 0-3 of each item in the 2x2 of two criteria's true verdicts."""
    return fail[:, CRITERIA.index(names[0])].astype(int) * 2 + fail[:, CRITERIA.index(names[1])].astype(int)


def _quotas(counts: np.ndarray, total: int) -> np.ndarray:
    """Largest-remainder allocation of ``total`` draws proportional to ``counts``."""
    exact = counts / counts.sum() * total
    q = np.floor(exact).astype(int)
    q[np.argsort(-(exact - q), kind="stable")[: total - q.sum()]] += 1
    return np.minimum(q, counts)


def write_support_labels(store: Store, seed: int, items, fail) -> dict:
    """`support-human`: 60 items labelled by two simulated annotators (a second one relabels a
    few of the first one's items), the truth with about 1% slips. The 60 are a seeded sample of the
    items outside the holdout, stratified by the true (grounded, no_fabrication) cell and, within
    it, by the true (answers_question, cites_source) cell, so the small set keeps the suite's real
    association (and real independence)."""
    rng = _rng(seed, "support-human")
    outer = _cells(fail, ("grounded", "no_fabrication"))
    inner = _cells(fail, ("answers_question", "cites_source"))
    # only items outside the holdout: the analysis hides holdout items by default, and a label on one
    # would drop out of every default figure
    open_ = np.array([not it.get("holdout") for it in items], dtype=bool)
    chosen = []
    for k, q in enumerate(_quotas(np.bincount(outer[open_], minlength=4), N_HUMAN_ITEMS)):
        members = np.flatnonzero((outer == k) & open_)
        for kk, qq in enumerate(_quotas(np.bincount(inner[members], minlength=4), q)):
            chosen += rng.choice(members[inner[members] == kk], qq, replace=False).tolist()
    chosen = sorted(int(x) for x in chosen)
    first = {
        i: ("sim-annotator-1" if j % 2 == 0 else "sim-annotator-2")
        for j, i in enumerate(rng.permutation(chosen).tolist())
    }
    ann1 = [i for i in chosen if first[i] == "sim-annotator-1"]
    overlap = set(rng.choice(ann1, HUMAN_OVERLAP, replace=False).tolist())
    lab = _Cols("labels")
    for i in chosen:
        who = [first[i]] + (["sim-annotator-2"] if i in overlap else [])
        for a in who:
            for j, c in enumerate(CRITERIA):
                f = bool(fail[i, j]) ^ bool(rng.random() < HUMAN_SLIP)
                lab.add(
                    item_id=items[i]["item_id"],
                    gen_round=1,
                    criterion=c,
                    annotator=a,
                    value="fail" if f else "pass",
                    passed=not f,
                )
    m = S.LabelSetManifest(
        labelset_id="support-human",
        gen_id="support-g1",
        created_at=_at(11),
        annotators=["sim-annotator-1", "sim-annotator-2"],
        rubric=_rubric_binary(),
        simulated=True,
        description=f"SIMULATED people: {N_HUMAN_ITEMS} answers of support-g1 labelled pass/fail on the six "
        f"criteria by two simulated annotators ({HUMAN_OVERLAP} items by both). Equal to the "
        "simulator's truth except for about 1% slips. The items are a seeded sample, outside the holdout, stratified "
        "by the true verdicts on grounded, no_fabrication, answers_question and cites_source.",
    )
    store.write_labelset(m, lab.arrow(), overwrite=True)
    return {"labels": lab.n}
