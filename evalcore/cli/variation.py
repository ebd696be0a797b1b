"""``evalcore revision-cost``, ``evalcore bail-flips`` and ``evalcore temperature`` (issue 44): what
revision passes would cost (:func:`evalcore.analysis.revisions.revision_costs`), the items whose
answer-versus-bail flag flips (:func:`evalcore.analysis.abstention.bail_flips`) and judge runs that
differ only in temperature, side by side (:func:`evalcore.review.temperature.temperature_views`).
Registered on the CLI group by evalcore.cli."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evalcore.cli._common import Ctx, _table, emit

if TYPE_CHECKING:
    from evalcore.analysis.abstention import BailFlips
    from evalcore.analysis.revisions import RevisionCost
    from evalcore.review.temperature import TemperatureView


def _usd(v: float | None) -> str:
    return "unpriced" if v is None else f"${v:.6f}"


def revision_text(r: RevisionCost) -> str:
    head = (
        f"{r.gen_id}: revision budget {r.revision_budget}, {r.answers} answers, "
        + (
            f"{r.tokens_in_per_answer:,.0f} tokens in / {r.tokens_out_per_answer:,.0f} out per draft; "
            if r.tokens_in_per_answer is not None and r.tokens_out_per_answer is not None
            else ""
        )
        + f"prices: {r.price_source}"
    )
    rows = [
        {
            "k": f"{p.passes}{' (recorded)' if p.recorded_budget else ''}",
            "a_in": f"{p.appended_tokens_in:,.0f}",
            "f_in": f"{p.fresh_tokens_in:,.0f}",
            "a_cum": _usd(p.appended_cumulative_cost_usd),
            "f_cum": _usd(p.fresh_cumulative_cost_usd),
        }
        for p in r.passes
    ]
    cols = [
        ("k", "passes", False),
        ("a_in", "appended: tokens in", False),
        ("f_in", "fresh critic: tokens in", False),
        ("a_cum", "appended: cost per answer to here", False),
        ("f_cum", "fresh critic: cost per answer to here", False),
    ]
    return "\n".join(x.rstrip() for x in "\n".join([head, _table(rows, cols) if rows else "", r.note]).splitlines())


def flips_text(f: BailFlips) -> str:
    lines = [f"{f.suite_id} ({', '.join(f.generations)}): {f.text}"]
    for x in f.flipped_items:
        seen = ", ".join(f"{r.gen_id} r{r.round} {'bail' if r.abstained else 'answer'}" for r in x.readings)
        lines.append(f"  {x.item_id}: {seen}")
    return "\n".join(lines)


def temperature_text(v: TemperatureView) -> str:
    lines = [v.text]
    for g in v.groups:
        rows = [
            {
                "run": r.run_id,
                "t": f"{r.temperature:g}",
                "criterion": c.criterion,
                "rounds": c.judge_rounds,
                "unanimous": c.unanimous_share,
                "kappa": c.fleiss_kappa,
                "gold": c.gold_cases,
                "accuracy": c.accuracy,
            }
            for r in g.runs
            for c in r.criteria
        ]
        lines.append(f"{g.judge_model}, {g.mode}, prompt {g.prompt_variant}:")
        lines.append(
            _table(
                rows,
                [
                    ("run", "run", False),
                    ("t", "temperature", False),
                    ("criterion", "criterion", False),
                    ("rounds", "judge rounds", False),
                    ("unanimous", "rounds agree", True),
                    ("kappa", "Fleiss kappa", False),
                    ("gold", "gold cases", False),
                    ("accuracy", "accuracy on gold", True),
                ],
            )
        )
    return "\n".join(x.rstrip() for x in "\n".join(lines).splitlines())


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""

    @cli.command("revision-cost")
    @click.argument("gen_ids", nargs=-1)
    @click.option("--passes", type=int, default=3, show_default=True, help="Project passes 0..N (at least the budget).")
    @click.option("--price", default=None, help="IN,OUT US dollars per million tokens of the generator.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def revision_cost_cmd(obj: Ctx, gen_ids, passes, price, as_json) -> None:
        """Cost per revision pass of generations that record revision_budget: an appended transcript
        (quadratic) against a fresh-context critic (linear), from the generation's own tokens."""
        from evalcore.analysis.revisions import revision_costs
        from evalcore.llm.client import parse_price

        rs = revision_costs(obj.store, tuple(gen_ids), passes=passes, price=parse_price(price))
        emit(rs, as_json, "\n\n".join(revision_text(r) for r in rs) or "no generation records revision_budget")

    @cli.command("bail-flips")
    @click.argument("gen_ids", nargs=-1)
    @click.option("--include-holdout", is_flag=True, help="Count the suite's holdout items too.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def bail_flips_cmd(obj: Ctx, gen_ids, include_holdout, as_json) -> None:
        """Items whose abstained flag flips between answering and bailing, between the generation
        rounds and between the generations named (one suite; default: each suite's generations)."""
        from evalcore.analysis.abstention import bail_flips, suite_bail_flips

        fs = (
            [bail_flips(obj.store, tuple(gen_ids), include_holdout=include_holdout)]
            if gen_ids
            else suite_bail_flips(obj.store, include_holdout=include_holdout)
        )
        emit(fs, as_json, "\n".join(flips_text(f) for f in fs) or "no generations")

    @cli.command("temperature")
    @click.argument("gen_ids", nargs=-1)
    @click.option("--judge-round", type=int, default=1, show_default=True, help="Judge round read against gold.")
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def temperature_cmd(obj: Ctx, gen_ids, judge_round, as_json) -> None:
        """Judge runs that differ only in temperature, side by side: each one's repeat consistency
        and accuracy on gold, per criterion (default: every judged generation)."""
        from evalcore.review.temperature import temperature_views

        vs = temperature_views(obj.store, tuple(gen_ids), judge_round=judge_round)
        emit(vs, as_json, "\n\n".join(temperature_text(v) for v in vs) or "no judged generations")
