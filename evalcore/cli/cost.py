"""``evalcore cost``: calls, tokens, cost and latency of a run (overall, per criterion, its system
under test) with the single / grouped / split projection, or of every run side by side
(``--all``). Registered on the CLI group by evalcore.cli; the figures are
:func:`evalcore.analysis.cost.run_cost` and :func:`evalcore.analysis.cost.cost_table`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from evalcore.cli._common import _table, emit

if TYPE_CHECKING:
    from evalcore.analysis.cost import CostRow, RunCost
    from evalcore.analysis.projection import Projection, ProjectionCheck


def _total(cost: Any, unknown: int, n: int, unit: str) -> str:
    """A total cost with what is priced: "$X (0 calls with unknown cost)" when every call is priced,
    "$X (partly priced: N of M calls)" when some are not, "unknown (M calls with unknown cost)" when
    none is (:func:`evalcore.analysis.cost.cost_label`)."""
    from evalcore.analysis.cost import cost_label

    text = cost_label(cost, unknown, n, unit)
    return text if "partly priced" in text else f"{text} ({unknown} {unit} with unknown cost)"


def _priced(unknown: Any, n: Any) -> str:
    """The priced column of ``cost --all``: all, N of M (partly priced) or none."""
    if unknown is None or n is None:
        return "-"
    return "all" if not unknown else ("none" if unknown >= n else f"{n - unknown} of {n}")


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.0f} ms"


def _round(rows: list[dict], keys: tuple[str, ...], digits: int = 0) -> list[dict]:
    """Rows for a text table: ``keys`` rounded (to whole numbers by default; the JSON keeps them exact)."""

    def r_(v: Any) -> Any:
        return None if v is None else (round(v) if digits == 0 else round(v, digits))

    return [{**r, **{k: r_(r.get(k)) for k in keys}} for r in rows]


def _rstrip(text: str) -> str:
    """No trailing blanks (the padded last column), so the output can be quoted in docs as is."""
    return "\n".join(line.rstrip() for line in text.splitlines())


def _alias_note(run_id: str, warning: str | None) -> list[str]:
    """The line `evalcore runs` gives a judge model named by a floating alias (none otherwise)."""
    return [f"note: run {run_id}: {warning} (pinned? re-import with --judge-pinned)"] if warning else []


def format_run(r: RunCost) -> str:
    """The text form of a run's cost report."""
    p = r.projection
    note = _alias_note(r.run_id, r.judge_alias_warning)
    if not p.available:
        return "\n".join([*_measured_lines(r), f"projection: not available ({p.reason})", *note])
    checked = [_check_line(p.check)] if p.check else []
    warned = [f"WARNING: {w}" for w in p.warnings]
    return "\n".join([*_measured_lines(r), *_projection_lines(p), *checked, *warned, *note])


def _measured_lines(r: RunCost) -> list[str]:
    """The run as measured: the judge, the system under test, and per criterion."""
    j, s = r.judge, r.system
    return [
        f"run {r.run_id} ({r.mode}, judge {r.judge_model}, {r.status})" + (" - SIMULATED data" if r.simulated else ""),
        f"  {r.items} items, {r.answers} answers, judged {r.rounds} time(s) each"
        + (f" (slice: classes {', '.join(r.classes)} only)" if r.classes else ""),
        f"judge: {j.calls} calls ({j.failed_calls} failed), tokens in {j.tokens_in}, out {j.tokens_out}, "
        f"cost {_total(j.cost_usd, j.cost_unknown_calls, j.calls, 'calls')}, latency mean "
        f"{_ms(j.latency_ms_mean)}, p50 {_ms(j.latency_ms_p50)}, p95 {_ms(j.latency_ms_p95)}",
        f"system under test ({s.gen_id}): {s.outputs} outputs ({s.errored_outputs} errored), tokens in "
        f"{s.tokens_in}, out {s.tokens_out}, cost "
        f"{_total(s.cost_usd, s.cost_unknown_outputs, s.outputs, 'outputs')}, "
        f"latency mean {_ms(s.latency_ms_mean)}, p50 {_ms(s.latency_ms_p50)}, "
        f"p95 {_ms(s.latency_ms_p95)}",
        "",
        f"per criterion ({r.sharing_rule}):",
        _table(
            _round([c.to_dict() for c in r.per_criterion], ("tokens_in", "tokens_out", "latency_ms_mean")),
            [
                ("criterion", "criterion", False),
                ("calls", "calls", False),
                ("failed_calls", "failed", False),
                ("tokens_in", "tokens in", False),
                ("tokens_out", "tokens out", False),
                ("cost_usd", "cost $", False),
                ("cost_unknown_calls", "unpriced", False),
                ("latency_ms_mean", "latency ms", False),
            ],
        ),
        "",
    ]


def _fitted(p: Projection) -> tuple[str, str, str]:
    """The projection's fitted prices, latency and output per call, as text."""
    pr, la, out = p.prices, p.latency, p.output
    price = (
        "unknown"
        if pr is None
        else f"${pr.input_per_million:.4g} in / ${pr.output_per_million:.4g} out per million tokens (fitted)"
    )
    lat = (
        "unknown"
        if la is None
        else f"{la.ms_per_call:.0f} ms per call + {la.ms_per_output_token:.2f} ms per output token"
    )
    f_text = (
        f"f (output per call) = {out.tokens_per_call:.1f} tokens fitted over {out.calls} calls of "
        + ", ".join(out.runs)
        if out.identified
        else "f (output per call) = 0 ASSUMED (not identified by these calls)"
    )
    return price, lat, f_text


def _projection_lines(p: Projection) -> list[str]:
    """The single / grouped / split projection: its fitted parameters and one row per mode."""
    price, lat, f_text = _fitted(p)
    rows = [
        {
            **r.to_dict(),
            "out_from": r.tokens_out_run or "estimated",
            "wall_s": None if r.wall_ms is None else r.wall_ms / 1000,
        }
        for r in p.rows
    ]
    return [
        f"projection for {p.items} items x {p.rounds} judging(s), grouped = {p.groups} groups ({p.groups_source}):",
        f"  S (shared context per call) = {p.shared_tokens_in:.1f} tokens over {p.calls_measured} calls; "
        f"prices {price}; latency {lat}",
        f"  {f_text}; concurrency {p.concurrency} ({p.concurrency_source})",
        "  c_k / out per verdict: "
        + ", ".join(f"{c.criterion} {c.tokens_in}/{c.out_tokens_per_verdict or 0:.1f}" for c in p.criteria),
        _table(
            _round(
                _round(
                    rows, ("tokens_in", "tokens_out", "latency_ms_per_answer", "latency_ms_per_answer_fanout", "wall_s")
                ),
                ("tokens_in_x_single",),
                2,
            ),
            [
                ("mode", "mode", False),
                ("calls", "calls", False),
                ("tokens_in", "tokens in", False),
                ("tokens_out", "tokens out", False),
                ("out_from", "out from", False),
                ("cost_usd", "cost $", False),
                ("latency_ms_per_answer", "ms per answer", False),
                ("latency_ms_per_answer_fanout", "ms fanned out", False),
                ("wall_s", "wall s", False),
                ("tokens_in_x_single", "in x single", False),
            ],
        ),
        "  (ms per answer: the answer's calls one after another; fanned out: in parallel, the slowest call; "
        f"wall s: the whole run at concurrency {p.concurrency})",
    ]


def _check_line(c: ProjectionCheck) -> str:
    """The projection at the run's own size and mode against what the run measured."""
    return (
        f"check at the run's own size and mode ({c.mode}): {c.calls_projected} calls projected, "
        f"{c.calls_measured} completed; tokens in {c.tokens_in_projected:.0f} projected, "
        f"{c.tokens_in_measured} measured; tokens out {c.tokens_out_projected:.0f} projected, "
        f"{c.tokens_out_measured} measured"
        + (
            ""
            if c.wall_ms_measured is None or c.wall_ms_projected is None
            else f"; wall {c.wall_ms_projected / 1000:.0f} s projected, {c.wall_ms_measured / 1000:.0f} s "
            "measured (first call's start to last call's end)"
        )
    )


def format_table(rows: list[CostRow]) -> str:
    notes = [n for r in rows for n in _alias_note(r.run_id, r.judge_alias_warning)]
    return "\n".join([_table_text(rows), *notes])


def _table_text(rows: list[CostRow]) -> str:
    return _table(
        [
            {
                **r.to_dict(),
                "judge_priced": _priced(r.judge_cost_unknown_calls, r.judge_calls),
                "system_priced": _priced(r.system_cost_unknown_outputs, r.system_outputs),
            }
            for r in rows
        ],
        [
            ("run_id", "run", False),
            ("mode", "mode", False),
            ("status", "status", False),
            ("simulated", "simulated", False),
            ("judge_calls", "judge calls", False),
            ("judge_tokens_in", "judge in", False),
            ("judge_tokens_out", "judge out", False),
            ("judge_cost_usd", "judge $", False),
            ("judge_priced", "priced", False),
            ("judge_latency_ms_mean", "judge ms", False),
            ("gen_id", "generation", False),
            ("system_outputs", "outputs", False),
            ("system_cost_usd", "system $", False),
            ("system_priced", "priced", False),
            ("system_latency_ms_mean", "system ms", False),
        ],
    )


def register(cli: click.Group) -> None:
    """Add ``evalcore cost`` to ``cli``."""

    @cli.command()
    @click.argument("run_id", required=False)
    @click.option("--all", "all_runs", is_flag=True, help="Every run (configuration) side by side instead of one run.")
    @click.option("--items", type=int, default=None, help="Items N of the projection (default: the run's).")
    @click.option(
        "--rounds",
        type=int,
        default=None,
        help="Judgings per item in the projection (default: the run's generation x judge rounds).",
    )
    @click.option(
        "--groups",
        type=int,
        default=None,
        help="Calls per answer of the grouped harness (default: the run's rubric groups).",
    )
    @click.option(
        "--class",
        "classes",
        multiple=True,
        help="Only the calls and outputs of items of this class (repeatable): a slice. With --all, the runs on "
        "suites with these classes.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def cost(
        obj,
        run_id: str | None,
        all_runs: bool,
        items: int | None,
        rounds: int | None,
        groups: int | None,
        classes: tuple[str, ...],
        as_json: bool,
    ) -> None:
        """Calls, tokens, cost and latency of RUN_ID (overall, per criterion, its system under test) and the
        single / grouped / split projection; or of every run with --all."""
        from evalcore.analysis.cost import cost_table, run_cost
        from evalcore.errors import InputError

        if all_runs:
            if run_id is not None:
                raise InputError("give a run id or --all, not both", field="RUN_ID")
            for name, v in (("--items", items), ("--rounds", rounds), ("--groups", groups)):
                if v is not None:
                    raise InputError("applies to one run's projection, not to --all", field=name)
            rows = cost_table(obj.store, classes=tuple(classes))
            emit(rows, as_json, _rstrip(format_table(rows)))
            return
        if run_id is None:
            raise InputError("give a run id (evalcore cost RUN_ID) or --all", field="RUN_ID")
        r = run_cost(obj.store, run_id, items=items, rounds=rounds, groups=groups, classes=tuple(classes))
        emit(r, as_json, _rstrip(format_run(r)))
