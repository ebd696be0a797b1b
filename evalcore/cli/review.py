"""Review commands: ``evalcore queue detect | build | list | show | decide | undo | team | assign`` and
``evalcore agreement``.

The ``queue`` group works the adjudication queue of :mod:`evalcore.review.queue` (built queues and
decisions are appended to the label store in the state directory; the data is never written);
:func:`filter_options` adds the reason, criterion, run and class filters of ``queue show``.
``agreement`` prints the judge report card of :func:`evalcore.review.reportcard.agreement`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evalcore.cli._common import (
    FINITE,
    Ctx,
    _fmt,
    _table,
    cli,
    emit,
    exclude_class_option,
    page_options,
    role_option,
    slice_options,
)
from evalcore.cli.scores import alpha_level_option
from evalcore.cli.suite import holdout_option

if TYPE_CHECKING:
    from evalcore.review.agreement import SessionAgreement
    from evalcore.review.correct import Ppi, RunCorrection
    from evalcore.review.paircorrect import PairCorrection
    from evalcore.review.reportcard import ReportCard
    from evalcore.review.team import Agreement

# --------------------------------------------------------------------------- adjudication (issue 5)
# The review queue and the agreement / judge report card; docs/REVIEW.md.


def filter_options(f):
    f = click.option("--class", "classes", multiple=True, help="Only items of this class (repeatable).")(f)
    f = click.option("--run", "runs_", multiple=True, help="Only cases this run is involved in (repeatable).")(f)
    f = click.option("--criterion", "criteria", multiple=True, help="Only this criterion (repeatable).")(f)
    f = click.option(
        "--reason", "reasons", multiple=True, help="Only cases raised for this reason code, or `audit` (repeatable)."
    )(f)
    return f


@cli.group("queue")
def queue_group() -> None:
    """The review queue: disagreements plus a random audit, in the state directory."""


@queue_group.command("detect")
@click.argument("gen_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_detect(obj: Ctx, gen_id: str, as_json: bool) -> None:
    """Show what a queue on GEN_ID would hold (nothing is written but the stored detection)."""
    from evalcore.review.detect import detect

    d = detect(obj.store, gen_id)
    out = {k: d[k] for k in ("gen_id", "runs", "population", "counts")}
    out.update(raised=len(d["raised"]), agreed=len(d["agreed"]), cases=d["raised"])
    text = (
        f"{gen_id}: {d['population']} cases judged by {len(d['runs'])} runs; {len(d['raised'])} raised, "
        f"{len(d['agreed'])} agreed\n" + "\n".join(f"  {k}: {v}" for k, v in d["counts"].items())
    )
    emit(out, as_json, text)


@queue_group.command("build")
@click.argument("gen_id")
@click.option(
    "--audit-rate",
    type=FINITE,
    default=0.05,
    show_default=True,
    help="Share of each criterion's cases (raised or agreed) drawn into the audit (0-1).",
)
@click.option(
    "--audit",
    "audit",
    type=click.Choice(["uniform", "active"]),
    default="uniform",
    show_default=True,
    help="How the audit draws: every case alike, or raised cases twice as often (active).",
)
@click.option(
    "--audit-epsilon",
    type=FINITE,
    default=None,
    help="The active audit's epsilon: agreed cases' size against 0.5 + epsilon for raised ones (default 0.5).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the audit draw and the order.")
@click.option(
    "--reviewers", "reviewers_required", type=int, default=1, show_default=True, help="Reviewers each case needs (N)."
)
@click.option("--by", "created_by", default=None, help="Who built it (recorded).")
@click.option(
    "--criterion", "criteria", multiple=True, help="Only this criterion's cases (repeat for more; default: every one)."
)
@click.option("--item", "items", multiple=True, help="Only this item's cases (repeat for more; default: every one).")
@click.option(
    "--items-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Only the cases of the item ids in this file (one a line; blank lines and lines from # are skipped).",
)
@click.option("--progress", "show_progress", is_flag=True, help="Say each stage and the cases written on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_build(
    obj: Ctx, gen_id: str, as_json: bool, criteria: tuple, items: tuple, items_file: str | None, **kw
) -> None:
    """Build a review queue on GEN_ID (appended to the label store; the data is not written).
    --criterion, --item and --items-file build it on those criteria and items only."""
    from evalcore.review.build import build_queue

    if items_file is not None:
        with open(items_file, encoding="utf-8") as f:
            items += tuple(w for w in (line.split("#", 1)[0].strip() for line in f) if w)
    if kw.pop("show_progress"):
        kw["progress"] = lambda stage, fraction: click.echo(f"{stage}: {fraction:.0%}", err=True)
    # kw: the audit, seed, reviewers and --by options
    scoped = list(items) if items or items_file is not None else None  # (an empty file is said, not ignored)
    q = build_queue(obj.store, gen_id, criteria=list(criteria) or None, items=scoped, **kw)
    text = (
        f"queue {q['queue_id']}: {q['flagged']} raised cases + {q['audit_sampled']} audited of {q['agreed']} "
        f"agreed ({kw['audit']} audit); {q['reviewers_required']} reviewer(s) "
        f"per case\n" + "\n".join(f"  {k}: {v}" for k, v in q["counts"].items())
    )
    emit(q, as_json, text)


@queue_group.command("list")
@click.argument("gen_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def queue_list(obj: Ctx, gen_id: str | None, as_json: bool) -> None:
    """List the review queues (of GEN_ID), oldest first."""
    from evalcore.review.queue import Filters, progress, queues

    shown = Filters(include_holdout=obj.include_holdout)
    rows = [
        {
            **q,
            **{
                k: v
                for k, v in progress(obj.store, q["queue_id"], None, shown).items()
                if k in ("cases", "raised", "audited", "holdout_hidden", "complete")
            },
        }
        for q in queues(obj.store, gen_id)
    ]
    emit(
        rows,
        as_json,
        _table(
            rows,
            [
                ("queue_id", "queue", False),
                ("gen_id", "generation", False),
                ("created_at", "built", False),
                ("raised", "raised", False),
                ("audited", "audited", False),
                ("holdout_hidden", "holdout hidden", False),
                ("audit_rate", "audit rate", False),
                ("reviewers_required", "N", False),
                ("complete", "complete", False),
            ],
        ),
    )


@queue_group.command("show")
@click.argument("gen_id", required=False)
@click.option("--queue", "queue_id", default=None, help="Queue id (default: the latest of GEN_ID).")
@filter_options
@click.option("--reviewer", default=None, help="Mark what this reviewer has handled.")
@page_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@holdout_option()
@click.pass_obj
def queue_show(obj: Ctx, gen_id, queue_id, reasons, criteria, runs_, classes, reviewer, limit, offset, as_json) -> None:
    """The cases of a queue in priority order, with how many reviews each has."""
    from evalcore.review.queue import Filters, cases, get_queue, progress

    if gen_id is None and queue_id is None:
        raise click.UsageError("give GEN_ID or --queue")
    q = get_queue(obj.store, queue_id, gen_id=gen_id)
    f = Filters.of(reasons, criteria, runs_, classes, obj.include_holdout)
    page = cases(obj.store, q["queue_id"], f, reviewer, limit=limit, offset=offset)
    prog = progress(obj.store, q["queue_id"], reviewer, f)
    out = {
        "queue": q,
        "progress": prog,
        "total": prog["cases"],
        "offset": offset,
        "limit": limit,
        "cases": page,
    }
    text = _table(
        [{**r, "reasons": ",".join(r["reasons"]) or "audit"} for r in page],
        [
            ("rank", "rank", False),
            ("item_id", "item", False),
            ("gen_round", "round", False),
            ("criterion", "criterion", False),
            ("stratum", "stratum", False),
            ("reasons", "reasons", False),
            ("reviews", "reviews", False),
            ("mine", "mine", False),
        ],
    )
    emit(
        out,
        as_json,
        f"queue {q['queue_id']}: {prog['cases']} cases; showing {offset + 1}-{offset + len(page)}\n" + text,
    )


@queue_group.command("decide")
@click.option("--queue", "queue_id", required=True, help="Queue id.")
@click.option("--item", "item_id", required=True)
@click.option("--round", "gen_round", type=int, default=1, show_default=True, help="Generation round.")
@click.option("--criterion", required=True)
@click.option("--reviewer", required=True)
@click.option("--value", default=None, help="pass/fail, correct/partial/wrong or a score.")
@click.option("--test-wrong", is_flag=True, help="The test is wrong: flag the item for repair (say why in --note).")
@click.option("--skip", is_flag=True, help="Pass on the case.")
@click.option("--note", default=None)
@click.option("--tag", "tags", multiple=True, help="Free-form failure tag (repeatable).")
@role_option
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_decide(obj: Ctx, test_wrong, skip, as_json, **kw) -> None:
    """Record a decision on a case of a queue (an appended edit with the queue's provenance)."""
    from evalcore.review.queue import decide

    if sum(bool(x) for x in (kw["value"] is not None, test_wrong, skip)) != 1:
        raise click.UsageError("give exactly one of --value, --test-wrong, --skip")
    outcome = "test_wrong" if test_wrong else "skipped" if skip else "decided"
    row = decide(obj.store, outcome=outcome, **kw)  # kw: the case, reviewer, value, note, tags and role
    emit(
        row,
        as_json,
        f"edit {row['edit_id']}: {row['item_id']} r{row['gen_round']} {row['criterion']} "
        f"{row['outcome']} {row['value'] or ''} by {row['reviewer']} (queue {row['queue']})",
    )


@queue_group.command("next")
@click.option("--queue", "queue_id", required=True, help="Queue id.")
@click.option("--reviewer", required=True)
@click.option("--adjudicate", is_flag=True, help="The next case whose reviewers disagree (for an adjudicator).")
@filter_options
@click.option("--lease", "lease_seconds", type=FINITE, default=None, help="Seconds the case is held (default 900).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_next(obj: Ctx, queue_id, reviewer, adjudicate, reasons, criteria, runs_, classes, lease_seconds, as_json):
    """Claim the reviewer's next case: it is leased to them and offered to nobody else until it is
    decided, skipped or the lease runs out (docs/REVIEW.md, leases)."""
    from evalcore.review.claims import LEASE_SECONDS, next_case
    from evalcore.review.queue import Filters

    f = Filters.of(reasons, criteria, runs_, classes, obj.include_holdout)
    row = next_case(
        obj.store,
        queue_id,
        reviewer,
        f,
        role="adjudicator" if adjudicate else "reviewer",
        lease_seconds=LEASE_SECONDS if lease_seconds is None else lease_seconds,
    )
    emit(
        row,
        as_json,
        "nothing left for you in this queue"
        if row is None
        else f"case {row['rank']}: {row['item_id']} r{row['gen_round']} {row['criterion']} (leased to {reviewer})",
    )


@queue_group.command("leases")
@click.option("--queue", "queue_id", default=None, help="Queue id (default: every queue).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_leases(obj: Ctx, queue_id, as_json):
    """Who holds which case right now (live leases)."""
    from evalcore.review.claims import leases

    rows = leases(obj.store, queue_id)
    emit(
        rows,
        as_json,
        _table(
            rows,
            [
                ("queue_id", "queue", False),
                ("item_id", "item", False),
                ("gen_round", "round", False),
                ("criterion", "criterion", False),
                ("reviewer", "reviewer", False),
                ("expires_at", "until", False),
            ],
        ),
    )


@queue_group.command("undo")
@click.option("--queue", "queue_id", required=True, help="Queue id.")
@click.option("--reviewer", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def queue_undo(obj: Ctx, queue_id, reviewer, as_json) -> None:
    """Withdraw the reviewer's last edit in the queue (a withdrawn edit; nothing is deleted)."""
    from evalcore.review.queue import undo

    row = undo(obj.store, queue_id, reviewer)
    emit(
        row,
        as_json,
        "nothing to undo"
        if row is None
        else f"edit {row['edit_id']} withdraws edit {row['supersedes']} ({row['item_id']} r{row['gen_round']} "
        f"{row['criterion']})",
    )


def _agreement_text(a: Agreement, min_cases: int) -> str:
    """A kappa with its interval and count, or the count (below the minimum) or why there is none."""
    if a.kappa is None:
        return f"- ({a.cases} shared)" if a.cases < min_cases or not a.reason else f"- ({a.reason})"
    iv = f" [{a.lo:.2f}, {a.hi:.2f}]" if a.lo is not None and a.hi is not None else ""
    return f"{a.kappa:.2f}{iv} on {a.cases}"


@queue_group.command("team")
@click.argument("queue_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_team(obj: Ctx, queue_id: str, as_json: bool) -> None:
    """How the team is doing on QUEUE_ID: per reviewer, cases decided, skipped and flagged, time
    per case, cases per hour, and kappa against the adjudicator and gold (docs/REVIEW.md)."""
    from evalcore.review.team import team

    t = team(obj.store, queue_id)
    rows = [
        {
            **r.to_dict(),
            "adj": _agreement_text(r.with_adjudicator, t.min_cases),
            "gold": _agreement_text(r.with_gold, t.min_cases),
        }
        for r in t.reviewers
    ]
    text = (
        f"queue {t.queue_id}: {len(t.reviewers)} people; times leave out gaps over {t.break_seconds // 60} min; "
        f"kappa ({t.level:.0%} interval) on at least {t.min_cases} shared cases\n"
        + _table(
            rows,
            [
                ("reviewer", "reviewer", False),
                ("role", "role", False),
                ("decided", "decided", False),
                ("skipped", "skipped", False),
                ("test_wrong", "test wrong", False),
                ("median_seconds", "median s", False),
                ("cases_per_hour", "per hour", False),
                ("adj", "kappa vs adjudicator", False),
                ("gold", "kappa vs gold", False),
            ],
        )
    )
    emit(t, as_json, text)


def _assignment_rows(rows: list) -> str:
    return _table(
        [
            {
                **a.to_dict(),
                "slice": "; ".join(f"{k}: {', '.join(v)}" for k, v in a.slice.items() if v),
                "reviewers": ", ".join(a.reviewers) or "(taken back)",
            }
            for a in rows
        ],
        [
            ("assignment_id", "id", False),
            ("slice", "slice", False),
            ("cases", "cases", False),
            ("reviewers", "reviewers", False),
            ("assigned_by", "by", False),
            ("created_at", "when", False),
        ],
    )


@queue_group.command("assign")
@click.argument("queue_id")
@click.option("--reviewer", "reviewers", multiple=True, help="A reviewer the slice is given to (repeatable).")
@click.option("--class", "classes", multiple=True, help="Items of this class (repeatable).")
@click.option("--reason", "reasons", multiple=True, help="Cases raised for this reason code, or `audit` (repeatable).")
@click.option("--run", "runs_", multiple=True, help="Cases this run is involved in (repeatable).")
@click.option("--criterion", "criteria", multiple=True, help="This criterion (repeatable).")
@click.option("--clear", is_flag=True, help="Take the slice back: anyone may be handed its cases.")
@click.option("--by", default="", help="Who assigns (an adjudicator or an admin; recorded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_assign(obj: Ctx, queue_id, reviewers, classes, reasons, runs_, criteria, clear, by, as_json) -> None:
    """Give a slice of QUEUE_ID (classes, reason codes, runs, criteria) to named reviewers: its
    cases are handed to them only (docs/REVIEW.md, assignment)."""
    from evalcore.review.team import assign

    if bool(reviewers) == clear:
        raise click.UsageError("give --reviewer (one or more) or --clear")
    a = assign(obj.store, queue_id, reviewers, classes=classes, reasons=reasons, runs=runs_, criteria=criteria, by=by)
    emit(a, as_json, _assignment_rows([a]))


@queue_group.command("assignments")
@click.argument("queue_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def queue_assignments(obj: Ctx, queue_id: str, as_json: bool) -> None:
    """The slices of QUEUE_ID given to named reviewers."""
    from evalcore.review.team import assignments

    rows = assignments(obj.store, queue_id)
    emit(rows, as_json, _assignment_rows(rows) if rows else f"nothing of queue {queue_id} is assigned")


def _card_text(g: ReportCard) -> list[str]:
    """A generation's report card in lines: the summary in words first, as the page opens on it."""
    from evalcore.contract.results import OMIT
    from evalcore.review.ranking import points
    from evalcore.review.reportcard import Corrected

    lines = [
        f"== generation {g.gen_id}: gold on {g.gold.state} cases decided here, "
        f"{g.gold.shipped} from shipped labels ({g.gold.split} split, {g.gold.pending} pending)"
    ]
    if sl := g.slice:
        what = [f"classes {', '.join(sl.classes)}"] if sl.classes else []
        what += [f"{sl.items} named items"] if sl.items else []
        what += [f"classes other than {', '.join(sl.exclude_classes)}"] if sl.exclude_classes is not OMIT else []
        lines.append(f"slice: {' and '.join(what)} only (every figure below counts these items)")
    lines += [f"WARNING: {w}" for w in g.warnings]
    lines += g.summary.text
    for x in g.contradictions:
        lines.append(
            f"{x.run_id} ({x.postprocess_version}): post-processing rewrote the judge on "
            f"{x.postprocess_rewrite} cases; the judge's statement contradicts its verdict on "
            f"{x.statement_contradicts}"
        )
    for c in g.criteria:
        lines.append(
            f"-- {c.criterion} ({c.kind}{', weighted ' + c.weights if c.weights else ''}), {c.gold_cases} gold cases"
        )
        for j in c.judges:
            cr = j.corrected
            corr = (
                f"{_fmt(cr.value, True)} [{_fmt(cr.ci[0], True)}, {_fmt(cr.ci[1], True)}] ({cr.gold})"
                if isinstance(cr, Corrected) and cr.value is not None
                else "-"
            )
            ci = j.kappa_ci
            # leniency in points of pass rate, as the summary says it (a mean score difference on an ordinal scale)
            lenient = (
                "-"
                if not j.n
                else f"{j.leniency:+.4g} score"
                if j.mean_gold is not OMIT
                else f"{points(j.leniency)} points"
            )
            lines.append(
                f"   {j.run_id}: n={j.n} kappa {_fmt(j.kappa)}"
                + (f" [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci[0] is not None else "")
                + f" accuracy {_fmt(j.accuracy, True)} leniency {lenient}"
                f"; pass rate {_fmt(j.pass_rate, True)} corrected {corr}"
            )
        if (kr := c.reviewers.krippendorff) is not None:
            lines.append(f"   people: Krippendorff's alpha ({kr.level}) {_fmt(kr.alpha)} on {kr.n} cases")
        if c.ambiguous.flag:
            lines.append(
                f"   AMBIGUOUS: judges agree below kappa {c.ambiguous.threshold}: "
                + ", ".join(f"{p.a} ~ {p.b} {_fmt(p.kappa)}" for p in c.ambiguous.pairs)
            )
    if g.tags:
        lines.append("failure tags: " + ", ".join(f"{k} {v}" for k, v in g.tags.items()))
    return lines


def _session_text(s: SessionAgreement) -> list[str]:
    """A pairwise session's agreement in lines."""
    m, rv = s.majority, s.reviewers
    lines = [
        f"== session {s.session_id}: {s.pairs} pairs, majority left {m.left} / same {m.same} "
        f"/ right {m.right} ({m.no_majority} without a majority)"
    ]
    lines += [f"   {c.a} ~ {c.b}: Cohen's kappa {_fmt(c.kappa)} on {c.n} pairs" for c in rv.cohen]
    if rv.fleiss and rv.krippendorff:
        lines.append(f"   Fleiss' kappa {_fmt(rv.fleiss.kappa)}, Krippendorff's alpha {_fmt(rv.krippendorff.alpha)}")
    lines += [
        f"   {g.run_id} ({g.order}) vs people: accuracy {_fmt(g.accuracy, True)}, kappa "
        f"{_fmt(g.kappa)} on {g.n} pairs ({g.unparseable} unparseable counted as misses)"
        for g in s.graders
    ]
    lines += [
        f"   {p.a} ~ {p.b}: agreement {_fmt(p.agreement, True)}, kappa {_fmt(p.kappa)} "
        f"on {p.n} pairs ({p.dropped_unparseable} unparseable dropped)"
        for p in s.grader_pairs
    ]
    return lines


@cli.command("agreement")
@click.option("--gen", "gen_ids", multiple=True, help="Only this generation (repeatable; default: every judged one).")
@click.option(
    "--session",
    "session_ids",
    multiple=True,
    help="Only this closed pairwise session (repeatable; default: every closed one with choices).",
)
@click.option("--queue", "queue_id", default=None, help="Weight by this queue (default: the generation's latest).")
@click.option("--judge-round", type=int, default=1, show_default=True, help="Judge round read as each judge's verdict.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--n-boot", type=int, default=1000, show_default=True, help="Bootstrap resamples.")
@alpha_level_option
@slice_options
@exclude_class_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def agreement_cmd(obj: Ctx, gen_ids, session_ids, as_json, **kw) -> None:
    """The agreement and judge report card: judges against gold, people against each other
    (Krippendorff's alpha at --level, by default the criterion's), repeat consistency, judge against
    judge, corrected pass rates, same-family warnings."""
    from evalcore.review.agreement import agreement

    if kw["n_boot"] < 1:
        raise click.UsageError("--n-boot must be at least 1")
    given = bool(gen_ids or session_ids)
    r = agreement(
        obj.store,
        gen_ids=list(gen_ids) if given else None,
        session_ids=list(session_ids) if given else None,
        classes=obj.classes,
        items=obj.items,
        exclude_classes=obj.exclude_classes,
        **kw,  # --queue, --judge-round, --seed, --n-boot, --level (alpha_level)
    )
    lines = [x for g in r.generations for x in _card_text(g)] + [x for s in r.sessions for x in _session_text(s)]
    from evalcore.analysis.caveats import curated_note

    note = curated_note(obj.store, gen_ids=[g.gen_id for g in r.generations])  # the pages' caption (issue 44)
    emit({**r.to_dict(), "curated": note}, as_json, "\n".join(lines + ([note] if note else [])))


def _ppi_line(label: str, e: Ppi, sample: bool = True) -> str:
    """One PPI++ entry in words (``sample``: say how the labels were drawn)."""
    from evalcore.review.correct import PpiUnavailable, half_width_text

    if isinstance(e, PpiUnavailable) or e.value is None:
        return f"  {label}: PPI++ not available: {e.reason}"
    lo = e.labels_only
    return (
        f"  {label}: PPI++ {_fmt(e.value, True)} [{_fmt(e.ci[0], True)}, {_fmt(e.ci[1], True)}] "
        f"from {e.n_labels} labels worth {e.n_eff:.0f}{f' ({e.sample})' if sample else ''}; labels only "
        f"{_fmt(lo.value, True)} [{_fmt(lo.ci[0], True)}, {_fmt(lo.ci[1], True)}]; {half_width_text(e)}"
    )


def _correct_text(r: RunCorrection) -> str:
    from evalcore.review.reportcard import Corrected

    out = [f"run {r.run_id} on {r.gen_id} (queue {r.queue or 'none'}; {int(100 * r.level)}% intervals)"]
    for c in r.criteria:
        rg = c.rogan_gladen
        out.append(
            f"{c.criterion}: observed {_fmt(c.observed, True)} on {c.verdicts} verdicts; "
            f"sensitivity / specificity corrected {_fmt(rg.value, True)}"
            + (
                f" [{_fmt(rg.ci[0], True)}, {_fmt(rg.ci[1], True)}]"
                if isinstance(rg, Corrected) and rg.value is not None
                else ""
            )
        )
        out.append(_ppi_line("corrected", c.ppi))
    if r.all_pass is not None:
        out.append(_ppi_line("all-pass", r.all_pass))
    return "\n".join(out)


def _pair_correct(obj: Ctx, run_id, criteria, queue_id, level, target, as_json) -> bool:
    """``correct`` on a pairwise grader's run (issue 40): its corrected shares of each outcome
    against people's majority; False when the run is not one."""
    from evalcore.pairwise.grading import people_choices
    from evalcore.review.paircorrect import pair_correction, pair_session

    sid = pair_session(obj.store, run_id)
    if sid is None:
        return False
    if criteria or queue_id:
        raise click.BadParameter(
            f"run {run_id!r} grades pairs of session {sid!r}: it has no criteria and no queue",
            param_hint="--criterion" if criteria else "--queue",
        )
    out = pair_correction(obj.store, run_id, people_choices(obj.store, sid), level=level, target=target / 100)
    emit(out, as_json, _pair_correct_text(out))
    return True


def _pair_correct_text(r: PairCorrection) -> str:
    out = [
        f"run {r.run_id} grades session {r.session_id}: {r.pairs} pairs, {r.majority_pairs} decided by people's "
        f"majority ({int(100 * r.level)}% intervals; labelled pairs: {r.sample})"
    ]
    if r.arms_reason:
        out.append(r.arms_reason)
    for o in r.orders:
        out.append(f"{o.order}: {o.verdicts} pairs with a choice, {o.unparseable} without, {o.gold_pairs} with gold")
        for terms, rates in (("as shown", o.as_shown), ("per arm", o.by_arm or [])):
            out += [f" {terms}:"] if rates else []
            for rate in rates:
                out.append(_ppi_line(f"{rate.outcome} (grader {_fmt(rate.observed, True)})", rate.ppi, sample=False))
    return "\n".join(out)


@cli.command("correct")
@click.argument("run_id")
@click.option("--criterion", "criteria", multiple=True, help="Only this criterion (repeatable; default: every one).")
@click.option("--queue", "queue_id", default=None, help="The queue whose audit is the sample (default: the latest).")
@click.option(
    "--target",
    type=FINITE,
    default=5.0,
    show_default=True,
    help="The stopping rule's target: the interval's half-width in points of the rate.",
)
@click.option("--level", type=FINITE, default=0.95, show_default=True, help="Interval level.")
@click.option("--judge-round", type=int, default=1, show_default=True, help="Judge round read as the run's verdict.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def correct_cmd(obj: Ctx, run_id, criteria, queue_id, target, level, judge_round, as_json) -> None:
    """RUN_ID's pass rates corrected by PPI++ from the queue audit's decided cases (per criterion
    and all-pass), beside the labels-only and the sensitivity / specificity corrections, with
    how many more labels reach the target half-width."""
    from evalcore.review.correct import CorrectionRow, RunCorrection, correctable_gen
    from evalcore.review.reportcard import report_card

    if not (0 < target < 100):
        raise click.BadParameter(
            f"the target half-width is in points between 0 and 100, not {target!r}", param_hint="--target"
        )
    if not (0 < level < 1):
        raise click.BadParameter(f"the level lies strictly between 0 and 1, not {level!r}", param_hint="--level")
    if _pair_correct(obj, run_id, criteria, queue_id, level, target, as_json):
        return
    gen_id = correctable_gen(obj.store, run_id)
    rc = report_card(
        obj.store, gen_id, judge_round=judge_round, queue_id=queue_id, level=level, target=target / 100, n_boot=200
    )
    names = [c.criterion for c in rc.criteria]
    missing = [c for c in criteria if c not in names]
    if missing:
        raise click.BadParameter(
            f"{missing[0]!r} is not a criterion of {gen_id} ({', '.join(names)})", param_hint="--criterion"
        )
    rows = [
        CorrectionRow(c.criterion, j.pass_rate, j.verdicts, c.gold_cases, j.ppi, j.corrected)
        for c in rc.criteria
        for j in c.judges
        if j.run_id == run_id and (not criteria or c.criterion in criteria)
    ]
    all_pass = None if criteria else next((a.ppi for a in rc.all_pass if a.run_id == run_id), None)
    out = RunCorrection(run_id, gen_id, rc.queue, level, target / 100, rows, all_pass)
    from evalcore.analysis.thresholds import threshold_note

    note = threshold_note(run_id, obj.store.run(run_id).manifest.rubric)  # scores without pass / fail
    emit(out, as_json, _correct_text(out) + (f"\nnote: {note}" if note else ""))
