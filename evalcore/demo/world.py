"""The seeded, SIMULATED demo world that ships in ``data/demo``.

Nothing here came from a real system, a real judge or a real person. Every suite, generation,
run, label set and session is drawn from ONE model of truth with ``numpy.random.default_rng``
seeded by ``seed`` (each world piece gets its own stream, ``default_rng([seed, <piece tag>])``,
so tuning one piece never reshuffles another). Timestamps are fixed, so two calls with one seed
write identical content.

The model of truth
------------------
*Support suite* (600 customer-support items). Each item has a true pass/fail on six binary
criteria. ``grounded`` and ``no_fabrication`` are genuinely associated (an answer that strays
from the passage tends to invent details: phi about 0.55); every other pair is independent.

*Judges* read each (item, criterion) as the truth, except for a few fixed misreadings, and a
few "borderline" cells whose reading is a fresh coin in every judge round (round-to-round flips).

*Harnesses* then turn readings into verdicts:

* ``single``: one call emits all six fields in a fixed order. After a failed field the next one
  is forced to fail with probability ``c_k`` that rises with emission position ``k`` (the call
  conditions each field on what it already wrote). The carryover draw is fixed per item, so it
  does not itself add round-to-round flips. This manufactures association between unrelated
  criteria (answers_question and cites_source) and a position effect.
* ``single`` with the ``independent`` prompt variant: the same carryover, scaled by 0.9.
* ``grouped``: carryover only inside a group's call, and weaker.
* ``split``: one call per criterion, no carryover: what is left is the real association.

*Human labels* (60 items) are the truth with about 1% slips.

*Accounts suite* (120 items) is answered by two arms that differ in the writer prompt alone:
one writes long, heading-and-bullet answers, the other short ones; both sometimes bail, and
whether they bail flips across generation rounds for a few items. A blinded pairwise session
compares them; simulated reviewers and a model grader (with a first-position preference) choose.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from evalcore.demo.accounts import (
    accounts_items,
    write_accounts_generations,
    write_accounts_runs,
    write_accounts_sessions,
    write_accounts_suite,
)
from evalcore.demo.common import ACCOUNTS, ARMS, DEFAULT_SEED, SUPPORT
from evalcore.demo.scales import write_support_labels, write_support_ordinal, write_support_ternary
from evalcore.demo.support import (
    support_items,
    support_truth,
    write_support_generation,
    write_support_judged_runs,
    write_support_suite,
)
from evalcore.storage.paths import default_keys_dir
from evalcore.storage.store import Store

# --------------------------------------------------------------------------- the whole world

OWNED = {
    "suites": [SUPPORT, ACCOUNTS],
    "generations": ["support-g1", *ARMS.values()],
    "runs": [
        "support-single",
        "support-single-indep",
        "support-grouped",
        "support-split",
        "support-split-judgeB",
        "support-ternary",
        "support-polluted",
        "support-partial",
        "support-ordinal",
        *(f"{g}-split" for g in ARMS.values()),
        "accounts-ab-grader",
    ],
    "sessions": ["accounts-ab", "accounts-practice"],
    "labels": ["support-human"],
}


def _clean(out: Path, keys: Path) -> None:
    """Remove what the demo owns (and leftovers of interrupted writes), so regeneration is clean."""
    for sub, ids in OWNED.items():
        root = out / sub
        for i in ids:
            shutil.rmtree(root / i, ignore_errors=True)
        if root.is_dir():
            for p in root.iterdir():
                if p.name.startswith((".tmp-", ".old-")):
                    shutil.rmtree(p, ignore_errors=True)
    for sid in OWNED["sessions"]:
        shutil.rmtree(keys / sid, ignore_errors=True)


def generate_demo(out: Path, seed: int = DEFAULT_SEED, keys: Path | None = None) -> dict:
    """Write the SIMULATED demo world into ``out`` (keys into ``keys``, by default the sibling
    ``<out>-keys``) and return a summary of counts. Deterministic in ``seed``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    keys = Path(keys) if keys is not None else default_keys_dir(out)
    _clean(out, keys)
    with tempfile.TemporaryDirectory(prefix="evalcore-demo-state-") as state:
        store = Store(out, state_dir=state)
        fail = support_truth(seed)
        items, info = support_items(seed, fail)
        suite = write_support_suite(store, items)
        _, outputs = write_support_generation(store, seed, suite, items, info, fail)
        counts = {"verdicts": 0, "calls": 0}
        parts = [
            write_support_judged_runs(store, seed, items, info, outputs, fail),
            write_support_ternary(store, seed, items, info, outputs, fail),
            write_support_ordinal(store, seed, items, info, outputs, fail),
        ]
        labels = write_support_labels(store, seed, items, fail)
        acc_items, acc_info = accounts_items(seed)
        acc_suite = write_accounts_suite(store, acc_items)
        gens = write_accounts_generations(store, seed, acc_suite, acc_items, acc_info)
        parts.append(write_accounts_runs(store, seed, acc_items, gens))
        sess = write_accounts_sessions(store, seed, acc_items, gens, keys)
        for d in parts:
            counts["verdicts"] += d["verdicts"]
            counts["calls"] += d["calls"]
        return {
            "seed": int(seed),
            "suites": len(OWNED["suites"]),
            "generations": len(OWNED["generations"]),
            "runs": len(OWNED["runs"]),
            "sessions": len(OWNED["sessions"]),
            "labelsets": len(OWNED["labels"]),
            "items": len(items) + len(acc_items),
            "outputs": len(outputs) + sum(len(r) for g in gens.values() for r in g),
            "verdicts": counts["verdicts"],
            "calls": counts["calls"] + sess["grader_calls"],
            "labels": labels["labels"],
            "pairs": sess["pairs"],
            "judgments": sess["judgments"],
            "pair_verdicts": sess["pair_verdicts"],
        }
