"""The seeded, SIMULATED demo world that ships in ``data/demo``: :func:`generate_demo` writes the
whole of it.

Nothing here came from a real system, a real judge or a real person. Every suite, generation,
run, label set and session is drawn from ONE model of truth with ``numpy.random.default_rng``
seeded by ``seed`` (each world piece gets its own stream, ``default_rng([seed, <piece tag>])``,
from :mod:`evalcore.demo.common`, so tuning one piece never reshuffles another). Timestamps are
fixed, so two calls with one seed write identical content.

* :func:`generate_demo` removes what the demo owns (:data:`OWNED`: its suites, generations, runs,
  sessions and label set, and the sessions' keys) together with leftovers of interrupted writes,
  then writes, in this order, the support suite, its generation, its binary, ternary and ordinal
  judge runs and its human labels, then the accounts suite, its two arms' generations, their judge
  runs and the pairwise sessions, and returns a summary of counts.
* the support part (600 customer-support items, the model of truth, the judges and the harnesses'
  carryover) is :mod:`evalcore.demo.support`, its ternary and ordinal runs and its people
  :mod:`evalcore.demo.scales`; the accounts part (120 items, two arms that differ in the writer
  prompt alone, a blinded pairwise session) is :mod:`evalcore.demo.accounts`; the settings of the
  model of truth are the constants of :mod:`evalcore.demo.common`, and the words are
  :mod:`evalcore.demo.text`.
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
