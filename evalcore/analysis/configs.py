"""Configurations and their differences: every knob of a generation and a run (``knob_values``), the
knob-by-knob diff of two configurations (held, differs, one side, not recorded), and what a
diff means for a comparison (rival explanations; a measurement change when only the judge
changed over identical outputs). ``evalcore diff`` prints it; compare and gate start from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalcore.analysis.selection import manifest_variant_warning
from evalcore.contract import hashing as H
from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.errors import InputError, NotFoundError
from evalcore.storage.store import Store

# generation knob -> keys in GenerationManifest.knobs that may hold it (first present wins);
# the list, in its order.
GEN_KNOBS: list[tuple[str, str, tuple[str, ...]]] = [
    ("generator_model", "generator model snapshot", ("generator_model", "generator", "model")),
    ("generator_temperature", "generator temperature", ("temperature",)),
    ("writer_prompt_hash", "writer prompt hash", ("writer_prompt_hash", "system_prompt_hash")),
    ("revision_budget", "revision budget", ("revision_budget",)),
    ("token_budget", "token budget", ("token_budget", "max_tokens")),
    ("corpus_snapshot", "corpus snapshot", ("corpus_snapshot",)),
    ("retrieval", "retrieval settings", ("retrieval", "retriever", "retrieval_settings")),
]
KNOB_LABELS: dict[str, str] = {
    "suite_hash": "suite content hash",
    **{k: label for k, label, _ in GEN_KNOBS},
    "judge_model": "judge model snapshot",
    "judge_prompt_hash": "judge prompt hash",
    "rubric_hash": "rubric hash",
    "judge_temperature": "judge temperature",
    "judge_seed": "judge seed",
    "harness_mode": "harness mode",
    "field_order": "field order",
    "prompt_variant": "prompt variant",
    "postprocess_version": "post-processing version",
    "retry_policy": "retry policy",
    "structured_output": "structured-output mode",
    "cache_use": "cache use",
    "price_map_version": "price map version",
    "generation_rounds": "generation rounds",
    "judge_rounds": "judge rounds",
}

# keys that are bookkeeping, not settings (paths, counters, aliases of a knob above, free text)
GEN_IGNORED = {
    "description",
    "note",
    "journal",
    "cache_hits",
    "reported_models",
    "requested_model",
    "writer_prompt_source",
    "writer_prompt",
    "seed_per_round",
}
RUN_IGNORED = {
    "description",
    "note",
    "journal",
    "requested_model",
    "reported_models",
    "template",
    "prompt_variant_text",
    "rubric_file",
    "rubric_file_hash",
    "prices",
    "seed_per_round",
}


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, (str, list, dict, tuple)) and len(v) == 0)


def knob_values(gen: S.GenerationManifest, run: S.RunManifest | None = None) -> list[dict[str, Any]]:
    """Every knob of a configuration as ``{knob, side, label, value}`` (value None = not recorded).
    ``run`` None gives the generation's knobs only."""
    gk = dict(gen.knobs or {})
    out: list[dict[str, Any]] = [{"knob": "suite_hash", "side": "suite", "value": gen.suite_hash}]
    used: set[str] = set()
    for name, _label, keys in GEN_KNOBS:
        val = None
        for k in keys:
            if not _missing(gk.get(k)):
                val = gk[k]
                used.add(k)
                break
        used.update(keys)
        if name == "writer_prompt_hash" and val is not None and not _missing(gk.get("writer_prompt")):
            val = f"{val} ({gk['writer_prompt']})"
        out.append({"knob": name, "side": "system", "value": val})
    for k in sorted(set(gk) - used - GEN_IGNORED):
        out.append({"knob": f"system.{k}", "side": "system", "value": gk[k]})
    out.append({"knob": "generation_rounds", "side": "protocol", "value": gen.rounds})
    if run is None:
        return _labelled(out)
    mode = run.mode if run.mode != "grouped" else f"grouped {run.groups}"
    variant = run.prompt_variant
    vt = (run.knobs or {}).get("prompt_variant_text")
    if variant != "default" and vt:
        variant = f"{variant} ({H.text_hash(vt)})"
    out += [
        {"knob": "judge_model", "side": "judge", "value": run.judge_model},
        {"knob": "judge_prompt_hash", "side": "judge", "value": run.prompt_hash or None},
        {"knob": "rubric_hash", "side": "judge", "value": run.rubric_hash},
        {"knob": "judge_temperature", "side": "judge", "value": run.temperature},
        {"knob": "judge_seed", "side": "judge", "value": run.seed},
        {"knob": "harness_mode", "side": "judge", "value": mode},
        {"knob": "field_order", "side": "judge", "value": run.field_order},
        {"knob": "prompt_variant", "side": "judge", "value": variant},
        {"knob": "postprocess_version", "side": "judge", "value": run.postprocess_version},
        {"knob": "retry_policy", "side": "judge", "value": run.retry_policy or None},
        {"knob": "structured_output", "side": "judge", "value": run.structured_output},
        {"knob": "cache_use", "side": "judge", "value": "on (--reuse)" if run.reuse_cache else "off"},
        {"knob": "price_map_version", "side": "judge", "value": run.price_map_version},
        {"knob": "judge_rounds", "side": "protocol", "value": run.judge_rounds},
    ]
    rk = dict(run.knobs or {})
    for k in sorted(set(rk) - RUN_IGNORED):
        out.append({"knob": f"judge.{k}", "side": "judge", "value": rk[k]})
    return _labelled(out)


def _labelled(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:
        r["label"] = KNOB_LABELS.get(r["knob"], r["knob"].split(".", 1)[-1] + " (recorded key=value)")
    return rows


def diff_knobs(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Knob by knob: held, differs, one side, or not recorded (missing on both: never held)."""
    av = {r["knob"]: r for r in a}
    bv = {r["knob"]: r for r in b}
    names = [r["knob"] for r in a] + [r["knob"] for r in b if r["knob"] not in av]
    out = []
    for n in names:
        ra, rb = av.get(n), bv.get(n)
        va = None if ra is None else ra["value"]
        vb = None if rb is None else rb["value"]
        ma, mb = _missing(va), _missing(vb)
        status = "not recorded" if ma and mb else "one side" if ma or mb else "held" if va == vb else "differs"
        r0 = ra or rb
        assert r0 is not None  # every name is a knob of a or b
        out.append({"knob": n, "label": r0["label"], "side": r0["side"], "status": status, "a": va, "b": vb})
    return out


@dataclass
class Config:
    kind: str  # "run" or "generation"
    id: str
    gen: S.GenerationManifest
    run: S.RunManifest | None


def config_of(store: Store, id_: str) -> Config:
    """A run or a generation by id (runs first)."""
    if id_ in store.ids("run"):
        m = store.run(id_).manifest
        return Config("run", id_, store.generation(m.gen_id).manifest, m)
    if id_ in store.ids("generation"):
        return Config("generation", id_, store.generation(id_).manifest, None)
    raise NotFoundError(f"no run or generation {id_!r} in {store.data}", field="run or generation id")


def fmt_value(v: Any) -> str:
    return "(not recorded)" if _missing(v) else (", ".join(map(str, v)) if isinstance(v, list) else str(v))


@dataclass
class DiffSide(Result):
    """One side of :func:`diff`: a run or a generation, its generation and whether it is simulated."""

    kind: str
    id: str
    gen_id: str
    outputs_hash: str
    simulated: bool


@dataclass
class Knob(Result):
    """One knob of :func:`diff` (a row of :func:`diff_knobs`)."""

    knob: str
    label: str
    side: str
    status: str
    a: Any
    b: Any


@dataclass
class Diff(Result):
    """:func:`diff`: what ``evalcore diff --json`` prints and the Compare page shows first."""

    a: DiffSide
    b: DiffSide
    knobs: list[Knob]
    changed: list[str]
    under_test: str | None
    rivals: list[str]
    kind: str
    measurement_change: bool
    instrument_changes: list[str]
    instrument_text: str
    warnings: list[str]
    counts: dict[str, int]


def _diff_side(c: Config) -> DiffSide:
    return DiffSide(
        c.kind, c.id, c.gen.gen_id, c.gen.outputs_hash, bool(c.gen.simulated or (c.run and c.run.simulated))
    )


def diff(store: Store, a: str, b: str, *, under_test: str | None = None) -> Diff:
    """The knob diff of two runs or two generations, with what it means: rival explanations
    (every differing knob but the one under test), and whether the change is a measurement change
    (only the judge changed over identical outputs) or a system change."""
    ca, cb = config_of(store, a), config_of(store, b)
    if ca.kind != cb.kind:
        raise InputError(f"{a!r} is a {ca.kind} and {b!r} a {cb.kind}: give two runs or two generations", field="A B")
    rows = diff_knobs(knob_values(ca.gen, ca.run), knob_values(cb.gen, cb.run))
    known = {r["knob"] for r in rows}
    if under_test is not None and under_test not in known:
        raise InputError(f"unknown knob {under_test!r}; knobs here: {', '.join(sorted(known))}", field="--under-test")
    return Diff(
        a=_diff_side(ca),
        b=_diff_side(cb),
        knobs=[Knob(**r) for r in rows],
        **_with_variant(
            meaning(rows, ca.gen.outputs_hash == cb.gen.outputs_hash, under_test),
            [c.run for c in (ca, cb) if c.run is not None],
        ),
        counts={s: sum(1 for r in rows if r["status"] == s) for s in ("held", "differs", "one side", "not recorded")},
    )


def _with_variant(m: dict[str, Any], runs: list[S.RunManifest]) -> dict[str, Any]:
    """``meaning`` with the warning of a side whose judge was asked to judge criteria independently."""
    m["warnings"] += [w for r in runs if (w := manifest_variant_warning(r))]
    return m


#: judge-side knobs that record how the calls were made, not what measures: a change of one alone
#: leaves the instrument as it was (a "protocol change")
CALL_KNOBS = frozenset({"judge_seed", "retry_policy", "cache_use", "price_map_version"})


def instrument_changes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The differing knobs that change the instrument rather than the system under test: the
    judge's (model, prompt, rubric, temperature, harness, field order, variant, post-processing,
    structured output, recorded judge keys), its rounds and the suite. The one classification that
    the knob diff, compare, the gate, the trend's breaks and the ledger's typing read."""
    return [
        r
        for r in rows
        if r["status"] in ("differs", "one side")
        and (r["side"] in ("judge", "suite") or r["knob"] == "judge_rounds")
        and r["knob"] not in CALL_KNOBS
    ]


def instrument_text(changes: list[dict[str, Any]]) -> str:
    """One line for a measurement change: what changed, and each knob's two values."""
    if not changes:
        return ""
    sides = dict.fromkeys("suite" if r["side"] == "suite" else "judge" for r in changes)
    return (
        f"{' and '.join(sides)} changed: this compares instruments, not systems ("
        + "; ".join(f"{r['label']}: {fmt_value(r['a'])} → {fmt_value(r['b'])}" for r in changes)
        + ")"
    )


def meaning(rows: list[dict[str, Any]], same_outputs: bool, under_test: str | None = None) -> dict[str, Any]:
    """What a knob diff means. Pure: tested with hand-made rows."""
    changed = [r for r in rows if r["status"] in ("differs", "one side")]
    names = [r["knob"] for r in changed]
    if under_test is None and len(changed) == 1:
        under_test = changed[0]["knob"]
    rivals = [r for r in changed if r["knob"] != under_test]
    judge_side = instrument_changes(changed)
    system_side = [r for r in changed if r["side"] in ("system", "suite")]
    warnings = []
    if rivals:
        warnings.append(
            (
                f"{len(changed)} knobs differ"
                if under_test is None
                else f"besides {under_test}, {len(rivals)} more differ"
            )
            + "; each is a rival explanation of any difference: "
            + "; ".join(f"{r['label']} ({fmt_value(r['a'])} → {fmt_value(r['b'])})" for r in rivals)
        )
    if same_outputs and judge_side and not system_side:
        kind = "measurement change"
        warnings.append(
            "only the judge changed and the answers are identical (same outputs hash): this is a "
            "measurement change, not a system change; levels are not comparable across it"
        )
    elif system_side and judge_side:
        kind = "system and measurement change"
    elif system_side or not same_outputs:
        kind = "system change" if system_side else "repeat with new outputs"
    else:
        kind = "identical configuration" if not changed else "protocol change"
    if not same_outputs and not system_side:
        warnings.append(
            "the answers differ while every recorded setting of the system is held: generation "
            "noise, or a setting nobody recorded"
        )
    return {
        "changed": names,
        "under_test": under_test,
        "rivals": [r["knob"] for r in rivals],
        "kind": kind,
        "measurement_change": kind == "measurement change",
        "instrument_changes": [r["knob"] for r in judge_side],
        "instrument_text": instrument_text(judge_side),
        "warnings": warnings,
    }
