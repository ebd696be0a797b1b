"""Browsing: runs, generations, suites, one answer, validation, the data contract and the demo."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from evalcore.cli._common import Ctx, _table, class_option, cli, emit, pct_ci
from evalcore.cli.suite import holdout_option

if TYPE_CHECKING:
    from evalcore.storage.store import Store

# --------------------------------------------------------------------------- browsing


@cli.command()
@class_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def runs(obj: Ctx, as_json: bool) -> None:
    """List runs: status, judge, mode, the all-pass rate (judge round 1) with its 95% interval and its
    spread over judge rounds, the ternary headline, each ordinal and continuous criterion's mean score,
    calls, cost."""
    from evalcore.analysis.summary import runs_summary

    rows = runs_summary(obj.store, obj.include_holdout, classes=obj.classes)
    text = _table(
        [
            {
                **r.to_dict(),
                "all_pass_text": pct_ci(r.all_pass.rate, r.all_pass.ci95) if r.all_pass else None,
                "ternary_text": "; ".join(f"{t.criterion} {pct_ci(t.headline, t.ci95)}" for t in r.ternary) or None,
                "means_text": "; ".join(m.text() for m in r.means) or None,
            }
            for r in rows
        ],
        [
            ("run_id", "run", False),
            ("status", "status", False),
            ("mode", "mode", False),
            ("judge_model", "judge", False),
            ("judge_rounds", "rounds", False),
            ("items", "items", False),
            ("all_pass_text", "all pass [95% CI]", False),
            ("all_pass_spread", "spread", True),
            ("ternary_text", "ternary headline", False),
            ("means_text", "mean score [95% t]", False),
            ("calls", "calls", False),
            ("cost_usd", "cost $", False),
        ],
    )
    if rows:
        text += (
            "\nall pass: answers passing every criterion in judge round 1, of the complete answers (Wilson; "
            "items as clusters where generation rounds are pooled); spread: max - min of it over judge rounds"
        )
    for r in rows:
        if isinstance(r.threshold_note, str):  # absent (OMIT) when every scored criterion has one
            text += f"\nnote: {r.threshold_note}"
        if r.judge_alias_warning:
            text += f"\nnote: run {r.run_id}: {r.judge_alias_warning} (pinned? re-import with --judge-pinned)"
    emit(rows, as_json, text)


@cli.command()
@class_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def generations(obj: Ctx, as_json: bool) -> None:
    """List generations: suite, rounds, outputs, abstention, tokens, cost, latency, knobs."""
    from evalcore.analysis.summary import generations_summary

    rows = generations_summary(obj.store, obj.include_holdout, classes=obj.classes)
    emit(
        rows,
        as_json,
        _table(
            rows,
            [
                ("gen_id", "generation", False),
                ("suite_id", "suite", False),
                ("status", "status", False),
                ("rounds", "rounds", False),
                ("outputs", "outputs", False),
                ("abstained_rate", "abstained", True),
                ("cost_usd", "cost $", False),
            ],
        ),
    )


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def suites(obj: Ctx, as_json: bool) -> None:
    """List suites: items, holdout items, curated, content hash."""
    from evalcore.analysis.summary import suites_summary

    rows = suites_summary(obj.store)
    emit(
        rows,
        as_json,
        _table(
            rows,
            [
                ("suite_id", "suite", False),
                ("items", "items", False),
                ("holdout_items", "holdout", False),
                ("curated", "curated", False),
                ("content_hash", "hash", False),
            ],
        ),
    )


@cli.command()
@click.argument("run_id")
@click.argument("item_id")
@click.option("--gen-round", type=int, default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def show(obj: Ctx, run_id: str, item_id: str, gen_round: int, as_json: bool) -> None:
    """Show one answer with its item and every verdict on it in RUN_ID."""
    from evalcore.analysis.summary import item_view

    v = item_view(obj.store, run_id, item_id, gen_round, obj.include_holdout)
    lines = [
        f"item {item_id} (round {gen_round}) in run {run_id}",
        "",
        "INPUT:",
        v.input,
        "",
        "OUTPUT:",
        str(v.output),
        "",
        "VERDICTS:",
    ]
    for d in v.verdicts:
        lines.append(f"  r{d.judge_round} {d.criterion}: {d.raw_verdict} -> passed={d.passed}  {d.reason or ''}")
    emit(v, as_json, "\n".join(lines))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def validate(obj: Ctx, as_json: bool) -> None:
    """Check every file in the data directory against the data contract."""
    counts = obj.store.validate()
    emit({"ok": True, **counts}, as_json, "ok: " + ", ".join(f"{v} {k}" for k, v in counts.items()))


@cli.command()
@click.option("--markdown", is_flag=True, help="Print docs/FORMAT.md (the default).")
def schema(markdown: bool) -> None:
    """Print the data contract (docs/FORMAT.md is this command's output)."""
    from evalcore.contract.schema import format_markdown

    click.echo(format_markdown(), nl=False)


@cli.command()
@click.option("--check", is_flag=True, help="Only say which sets are current; write nothing.")
@click.option("--force", is_flag=True, help="Rebuild every set, current or not.")
@click.option(
    "--into",
    type=click.Choice(["data", "state"]),
    default="data",
    show_default=True,
    help="Write the sets beside the runs (data) or into the state directory.",
)
@click.option(
    "--no-detection",
    is_flag=True,
    help="Leave the review detection out (it is computed when the review queue or report card first needs it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("ids", nargs=-1)
@click.pass_obj
def index(
    obj: Ctx, check: bool, force: bool, into: str, no_detection: bool, as_json: bool, ids: tuple[str, ...]
) -> None:
    """Build the derived tables (sufficient statistics) of runs and generations: every one, or
    those named. A set is current while its sources hash to what it recorded; a stale one is
    rebuilt, and no figure reads it meanwhile. Then the pair tables of every two runs on one
    generation (their answers joined once, for flips, association and compare), the integer keys of
    the labelled items, and the review detection of each generation with runs (every case and why
    it is raised), stored in the state directory."""
    import warnings

    from evalcore.errors import DerivedTablesWarning

    store = obj.store
    todo = [(k, i) for k in ("generation", "run") for i in store.ids(k) if not ids or i in ids]
    unknown = sorted(set(ids) - {i for _, i in todo})
    if unknown:
        raise click.BadParameter(f"no run or generation {unknown[0]!r} in {store.data}", param_hint="IDS")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DerivedTablesWarning)
        rows = _index_rows(store, todo, check, force, into, no_detection, ids)
    failed = [w for w in said if issubclass(w.category, DerivedTablesWarning)]
    for w in said:
        if w not in failed:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if failed:  # a full disk or a read-only directory: one line, not one warning per product (issue 38)
        from evalcore.errors import StateError

        first = str(failed[0].message).split(" and the build is not tried again")[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise StateError(
            f"{first}{more}: nothing partial is left; free space (or make it writable), then run `evalcore index` again",
            file=store.state if into == "state" else store.data,
            field="--into",
        )
    text = _table(
        rows,
        [("kind", "kind", False), ("id", "id", False), ("state", "state", False), ("where", "where", False)],
    )
    emit(rows, as_json, text)


def _index_rows(
    store: Store, todo: list[tuple[str, str]], check: bool, force: bool, into: str, no_detection: bool, ids: tuple
) -> list[dict]:
    """The rows of :func:`index`: each set built (or checked), then the pair tables, keys, suite
    checks and detections."""
    import time

    from evalcore.storage import aggregates, derived

    rows = []
    for kind, eid in todo:
        t0 = time.perf_counter()
        if check:
            cur = derived.read(store, kind, eid)
            row: dict = {"kind": kind, "id": eid, "state": "current" if cur else "missing or stale"}
            row.update(where=cur.where if cur else None, path=str(cur.dir) if cur else None)
        else:
            row = aggregates.index(store, kind, eid, where=into, force=force)
        s = derived.read(store, kind, eid) if row.get("path") else None
        if s is not None and "not_derived" in (s.memo.get("answers") or {}):
            row["note"] = "answers table not derived: " + s.memo["answers"]["not_derived"]
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
    rows += _pairs(store, ids, check, force)
    rows += _keys(store, ids, check, force)
    rows += _suite_checks(store, ids, check, force)
    if not no_detection:
        rows += _detections(store, ids, check, force)
    return rows


def _pairs(store: Store, ids: tuple[str, ...], check: bool, force: bool) -> list[dict]:
    """``evalcore index``'s rows for the pair tables of every two runs on one generation (of those
    named, or of the generations named), stored in the state directory."""
    import time

    from evalcore.review.detect import runs_on
    from evalcore.storage.pairs import pair_table

    named = set(ids)
    rows = []
    for g in store.ids("generation"):
        runs = runs_on(store, g)
        pick = runs if not ids or g in named else [r for r in runs if r in named]
        for i, a in enumerate(runs):
            for b in runs[i + 1 :]:
                if a not in pick and b not in pick:
                    continue
                t0 = time.perf_counter()
                had = pair_table(store, a, b, build=False)
                t = had if check else pair_table(store, a, b, force=force)
                state = "current" if had else ("missing or stale" if check else "built")
                if had and force and not check:
                    state = "rebuilt"
                if t is None and not check:
                    state = "not stored"
                row: dict[str, Any] = {"kind": "pairs", "id": f"{a}+{b}", "state": state}
                row.update(where="state" if t else None, path=t[0] if t else None)
                row["seconds"] = round(time.perf_counter() - t0, 3)
                rows.append(row)
    return rows


def _keys(store: Store, ids: tuple[str, ...], check: bool, force: bool) -> list[dict]:
    """``evalcore index``'s rows for the integer keys of the labelled items in each run's answers
    table (storage.itemkeys; runs whose generation has a label set), kept in the state directory."""
    import time

    from evalcore.storage.itemkeys import DIR, label_keys

    rows = []
    for rid in store.ids("run"):
        if ids and rid not in ids and store.run(rid).manifest.gen_id not in ids:
            continue
        t0 = time.perf_counter()
        got = label_keys(store, rid, check=check, force=force)
        if got is None:
            continue
        state = "current" if got["current"] else ("missing or stale" if check else "built")
        if force and not check:
            state = "rebuilt"
        rows.append(
            {
                "kind": "keys",
                "id": rid,
                "state": state,
                "where": None if state == "missing or stale" else "state",
                "path": None if state == "missing or stale" else str(Path(store.state) / "derived" / DIR),
                "labelled_items": got["labelled_items"],
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
    return rows


def _suite_checks(store: Store, ids: tuple[str, ...], check: bool, force: bool) -> list[dict]:
    """``evalcore index``'s rows for the admission checks on each suite's current version (of every
    suite, or of the suites of the runs and generations named), kept in the state directory."""
    import time

    from evalcore.review.detect import runs_on
    from evalcore.review.suites import index_checks

    named = set(ids)
    suites = set(store.ids("suite")) if not ids else set()
    for g in store.ids("generation") if ids else ():
        if g in named or named & set(runs_on(store, g)):
            suites.add(store.generation(g).manifest.suite_id)
    rows = []
    for sid in sorted(suites):
        t0 = time.perf_counter()
        got = index_checks(store, sid, peek=check, force=force)
        state = "current" if got["current"] else ("missing or stale" if check else "built")
        if force and not check:
            state = "rebuilt"
        if not check and not got["stored"]:
            state = "not stored"
        rows.append(
            {
                "kind": "suite checks",
                "id": f"{sid} v{got['version']}",
                "state": state,
                "where": "state" if got["stored"] else None,
                "path": str(Path(store.state) / "derived" / "memo") if got["stored"] else None,
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
    return rows


def _detections(store: Store, ids: tuple[str, ...], check: bool, force: bool) -> list[dict]:
    """``evalcore index``'s rows for the review detection of every generation with runs (or of
    those named, or judged by the runs named), stored in the state directory."""
    import shutil
    import time

    from evalcore.review.detect import current_detection, refresh_detections, runs_on

    named = set(ids)
    gens = [
        g
        for g in store.ids("generation")
        if runs_on(store, g) and (not ids or g in named or named & set(runs_on(store, g)))
    ]
    rows = []
    for g in gens:
        t0 = time.perf_counter()
        cur = current_detection(store, g)
        row: dict[str, Any]
        if check:
            row = {"kind": "detection", "id": g, "state": "current" if cur else "missing or stale"}
            row.update(where="state" if cur else None, path=str(cur) if cur else None)
        else:
            import duckdb

            from evalcore.errors import EvalcoreError

            if cur is not None and force:
                shutil.rmtree(cur)
            state = "current" if cur is not None and not force else ("rebuilt" if cur is not None else "built")
            try:
                (det,) = refresh_detections(store, [g])
                row = {"kind": "detection", "id": g, "state": state, "where": "state", "path": str(det.path.parent)}
            except (duckdb.Error, EvalcoreError) as e:  # said; the queue computes it when needed
                why = e.message if isinstance(e, EvalcoreError) else str(e).splitlines()[0]
                row = {"kind": "detection", "id": g, "state": "not stored", "where": None, "path": None, "note": why}
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
    return rows


@cli.command()
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Data directory to write.")
@click.option("--seed", type=int, default=None, help="Seed of the simulated world (default: the demo's).")
@click.option("--keys", type=click.Path(file_okay=False), default=None, help="Keys directory (default: <out>-keys).")
@click.option(
    "--items",
    type=click.IntRange(min=1),
    default=None,
    help="Write the demo's support model at this many items instead (vectorised: a single and a split run, "
    "people's labels; no texts, sessions or keys). The benchmarks use it.",
)
def demo(out: str, seed: int | None, keys: str | None, items: int | None) -> None:
    """Write the SIMULATED demo world (suites, generations, runs, labels, sessions)."""
    if items is not None:
        from evalcore.demo.scale import SEED, write_scaled

        if keys is not None:
            raise click.UsageError("--keys goes with the full demo; the scaled world has no sessions")
        info = write_scaled(Path(out), items, SEED if seed is None else seed, log=lambda _m: None)
        click.echo(f"wrote the scaled simulated world to {out}: " + ", ".join(f"{k}={v}" for k, v in info.items()))
        return
    from evalcore.demo.common import DEFAULT_SEED
    from evalcore.demo.world import generate_demo

    summary = generate_demo(Path(out), DEFAULT_SEED if seed is None else seed, Path(keys) if keys else None)
    click.echo(f"wrote simulated demo to {out}: " + ", ".join(f"{k}={v}" for k, v in summary.items()))
