"""``evalcore import summeval DIR``: SummEval (Fabbri et al., TACL 2021) as packaged by BARTScore:
100 CNN/DailyMail articles x 16 summarisers = 1,600 summaries with the mean of 3 expert ratings x
4 criteria (1-5), read from ``summeval_expert_avg.jsonl`` (or ``.jsonl.gz``), one JSON object per
summary (:func:`read_summeval`).

:func:`plan_summeval` makes suite ``summeval`` (one item per article, item_id = doc_id; the article
text is not in the file), one generation ``summeval-<system>`` per summariser (knobs
generator_model = the system id) and its label set ``summeval-<system>-experts`` (annotator
``mean``, continuous criteria); no run, since the file has no judge scores. :func:`import_summeval`
reads and checks everything first, refuses ids that already exist, and writes; docs/DATASETS.md
gives the reasons for each mapping.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]

from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.datasets.hanna import (
    DEFAULT_THRESHOLD,
    SUMMEVAL_CRITERIA,
    SUMMEVAL_FILE,
    SUMMEVAL_KEYS,
    SUMMEVAL_SUITE,
    WHOLE_FILE,
    Bundle,
    SummEvalSource,
    Values,
    _find,
    _import_scored,
    _in_scale,
    _label_table,
    _Num,
    _number,
    _read_text,
    _rubric,
    _source_dir,
)
from evalcore.importers.frame import loads_json
from evalcore.importers.plan import imported_generation, suite_manifest
from evalcore.storage.paths import utcnow


def read_summeval(source: str | Path) -> SummEvalSource:
    """Read and check ``summeval_expert_avg.jsonl[.gz]``."""
    src = _source_dir(source)
    path = _find(src, SUMMEVAL_FILE)
    text = _read_text(path)
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, str], int] = {}
    key: str | tuple[str, str]  # a field name, then the record's (doc_id, system_id)
    for ln, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rec = loads_json(line, parse_float=_Num, parse_int=_Num, parse_constant=_Num)
        except json.JSONDecodeError as e:
            raise InputError(
                f"line {ln}: does not parse as JSON: {e.msg} (column {e.colno})", file=str(path), field="row"
            ) from None
        if not isinstance(rec, dict):
            raise InputError(
                f"line {ln}: is a JSON {type(rec).__name__}, expected an object", file=str(path), field="row"
            )
        out: dict[str, Any] = {"line": ln}
        for key in SUMMEVAL_KEYS:
            if key not in rec or rec[key] is None:
                raise InputError(f"line {ln}: missing", file=str(path), field=key)
            if not isinstance(rec[key], str) or isinstance(rec[key], _Num):
                raise InputError(f"line {ln}: {rec[key]!r} is not text", file=str(path), field=key)
            if key != "summary" and not rec[key].strip():
                raise InputError(f"line {ln}: empty", file=str(path), field=key)
            out[key] = rec[key] if key == "summary" else rec[key].strip()
        if not H.is_valid_id(f"summeval-{out['system_id']}"):
            raise InputError(
                f"line {ln}: {out['system_id']!r} cannot name a generation (letters, digits, . _ -)",
                file=str(path),
                field="system_id",
            )
        for crit, _d in SUMMEVAL_CRITERIA:
            if crit not in rec:
                raise InputError(f"line {ln}: missing", file=str(path), field=crit)
            x = _number(rec[crit], path, crit, f"line {ln}")
            if not _in_scale(x):
                raise InputError(f"line {ln}: {str(rec[crit])!r} is outside the 1-5 scale", file=str(path), field=crit)
            out[crit] = (str(rec[crit]), x)
        key = (out["doc_id"], out["system_id"])
        if key in seen:
            raise InputError(
                f"line {ln}: document {key[0]!r} system {key[1]!r} appears twice (also line {seen[key]})",
                file=str(path),
                field="doc_id,system_id",
            )
        seen[key] = ln
        records.append(out)
    if not records:
        raise InputError("has no records", file=str(path), field=WHOLE_FILE)
    return SummEvalSource(path, records)


def _system_order(name: str) -> tuple:
    m = re.fullmatch(r"([A-Za-z]*)(\d+)", name)
    return (m.group(1), int(m.group(2)), "") if m else (name, -1, name)


def summeval_gen_id(system: str) -> str:
    return f"summeval-{system}"


def summeval_labelset_id(system: str) -> str:
    return f"summeval-{system}-experts"


def plan_summeval(data: Path, se: SummEvalSource, threshold: float) -> tuple[Bundle, dict[str, Any]]:

    now = utcnow()
    order = [c[0] for c in SUMMEVAL_CRITERIA]
    docs = list(dict.fromkeys(r["doc_id"] for r in se.records))
    systems = sorted({r["system_id"] for r in se.records}, key=_system_order)
    items = [
        {"item_id": d, "input": f"(CNN/DailyMail article {d}: its text is not in {SUMMEVAL_FILE})", "holdout": False}
        for d in docs
    ]
    b = Bundle(data)
    sm = suite_manifest(
        SUMMEVAL_SUITE,
        items,
        now,
        source=f"SummEval expert annotations as packaged by neulab/BARTScore, {se.path.name}, via evalcore import "
        f"summeval",
        description=f"SummEval: {len(items)} CNN/DailyMail articles (item_id = doc_id), summarised by "
        f"{len(systems)} systems; the article text is not in the file",
    )
    b.suites.append((sm, pa.Table.from_pylist(items)))
    rubric = _rubric("summeval-expert-mean", "continuous", SUMMEVAL_CRITERIA, threshold)
    per_system = []
    for system in systems:
        recs = sorted((r for r in se.records if r["system_id"] == system), key=lambda r: docs.index(r["doc_id"]))
        outputs = [{"item_id": r["doc_id"], "round": 1, "output": r["summary"], "abstained": False} for r in recs]
        gid, lid = summeval_gen_id(system), summeval_labelset_id(system)
        gm = imported_generation(
            outputs,
            gen_id=gid,
            suite_id=SUMMEVAL_SUITE,
            suite_hash=sm.content_hash,
            created_at=now,
            rounds=1,
            status="complete" if len(recs) == len(docs) else "partial",
            knobs={"generator_model": system, "system_id": system, "dataset": "SummEval"},
        )
        b.generations.append((gm, pa.Table.from_pylist(outputs)))
        cols = {c: Values([r[c][0] for r in recs], [r[c][1] for r in recs]) for c in order}
        b.labelsets.append(
            (
                S.LabelSetManifest(
                    labelset_id=lid,
                    gen_id=gid,
                    created_at=now,
                    annotators=["mean"],
                    rubric=rubric,
                    description=f"SummEval: the mean of 3 expert ratings (1-5) of system {system}'s summaries, as packaged "
                    f"by BARTScore (the individual experts' ratings are not in the file)",
                ),
                pa.table(_label_table([r["doc_id"] for r in recs], order, cols, "mean", threshold)),
            )
        )
        per_system.append(
            {
                "system_id": system,
                "gen_id": gid,
                "labelset_id": lid,
                "outputs": len(recs),
                "labels": len(recs) * len(order),
                "status": gm.status,
            }
        )
    summary = {
        "dataset": "SummEval",
        "source": str(se.path),
        "data": str(data),
        "suite_id": SUMMEVAL_SUITE,
        "items": len(items),
        "systems": systems,
        "gen_ids": [p["gen_id"] for p in per_system],
        "outputs": sum(p["outputs"] for p in per_system),
        "labelsets": {p["labelset_id"]: {"labels": p["labels"], "annotators": ["mean"]} for p in per_system},
        "labels": sum(p["labels"] for p in per_system),
        "threshold": threshold,
        "per_system": per_system,
    }
    return b, summary


def import_summeval(
    data_opt: str | Path | None, source: str | Path, threshold: float = DEFAULT_THRESHOLD
) -> dict[str, Any]:
    """Read, check and write SummEval into the data directory ``data_opt`` (the --data option)."""
    return _import_scored(data_opt, source, threshold, read_summeval, plan_summeval, "SummEval")
