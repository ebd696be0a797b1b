"""``evalcore correlate`` and ``evalcore reliability``: scores as scores (docs/SCORES.md).
Registered on the CLI group by evalcore.cli; the figures are
:func:`evalcore.analysis.scores.correlate`, :func:`evalcore.analysis.judgescores.correlate_judges`,
:func:`~evalcore.analysis.scores.criterion_matrix` and :func:`~evalcore.analysis.scores.reliability`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import click

from evalcore.cli._common import FINITE, Ctx, _table, emit
from evalcore.cli.suite import holdout_option, read_suites

if TYPE_CHECKING:
    from evalcore.analysis.judgescores import JudgeAgainstJudge
    from evalcore.analysis.scores import CriterionMatrix, JudgeAgainstPeople, Reliability
    from evalcore.stats.reliability import Level

#: the levels of Krippendorff's alpha (evalcore.stats.reliability.LEVELS; not imported: numpy)
ALPHA_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def alpha_level_option(f):
    """``--level nominal|ordinal|interval|ratio``: the level of Krippendorff's alpha."""
    return click.option(
        "--level",
        "alpha_level",
        type=click.Choice(ALPHA_LEVELS),
        default=None,
        help="The level of Krippendorff's alpha (default: the criterion's kind: interval for continuous, "
        "ordinal for ordinal, nominal for labels).",
    )(f)


def _common(f):
    f = holdout_option("Count holdout items too (hidden by default; logged).")(f)
    f = click.option(
        "--class",
        "classes",
        multiple=True,
        metavar="C",
        help="Only items of this class (the suite's items `class` column); repeat for several.",
    )(f)
    f = click.option(
        "--exclude-class",
        "exclude",
        multiple=True,
        metavar="C",
        help="Leave out the items of this class (items without a class stay); repeat for several.",
    )(f)
    f = click.option(
        "--gen",
        "gen_ids",
        multiple=True,
        metavar="GEN",
        help="With --people: read people on this generation (repeat to pool several; default: every "
        "generation with a label set).",
    )(f)
    f = click.option("--people", is_flag=True, help="People's scores as an instrument (label sets and gold).")(f)
    f = click.option(
        "--run", "run_ids", multiple=True, metavar="RUN", help="A judge run (repeat to pool one run per generation)."
    )(f)
    return f


def _scope_text(r: JudgeAgainstPeople | JudgeAgainstJudge | CriterionMatrix | Reliability) -> str:
    bits = []
    if r.classes:
        bits.append("classes " + ", ".join(r.classes))
    if isinstance(r.exclude_classes, list):
        bits.append("classes left out " + ", ".join(r.exclude_classes))
    bits.append("holdout items included" if r.include_holdout else "holdout items left out")
    return "; ".join(bits)


def correlate_text(r: JudgeAgainstPeople | JudgeAgainstJudge) -> str:
    from evalcore.analysis.judgescores import JudgeAgainstJudge
    from evalcore.analysis.scores import ClassMeans
    from evalcore.stats.reliability import METHODS

    pct = int(round(100 * r.level))
    other = f"judge ({', '.join(r.against_runs)}; {r.against})" if isinstance(r, JudgeAgainstJudge) else "people"
    lines = [
        f"judge ({', '.join(r.runs)}; {r.judge}) against {other}, per criterion; {_scope_text(r)}",
        f"{pct}% bootstrap intervals over items (seed {r.seed}, {r.n_boot} resamples)",
    ]
    rows = []
    for c in r.criteria:
        row: dict[str, Any] = {"criterion": c.criterion, "n": c.answers_both, "items": c.items}
        for m in METHODS:
            row[m] = getattr(c.pooled, m).text()
            row[f"w_{m}"] = getattr(c.within_items, m).text()
        row["class_kendall"] = c.by_class.kendall.text() if c.by_class else "-"
        rows.append(row)
    lines.append(
        _table(
            rows,
            [
                ("criterion", "criterion", False),
                ("n", "answers", False),
                ("items", "items", False),
                ("pearson", "pooled Pearson", False),
                ("spearman", "pooled Spearman", False),
                ("kendall", "pooled Kendall", False),
                ("w_pearson", "within-item Pearson", False),
                ("w_spearman", "within-item Spearman", False),
                ("w_kendall", "within-item Kendall", False),
                ("class_kendall", "Kendall of class means", False),
            ],
        )
    )
    mo = r.mean_over_criteria
    if mo.pooled_kendall is not None:
        lines.append(
            f"mean over criteria: pooled Kendall {mo.pooled_kendall:.3f}"
            + ("" if mo.by_class_kendall is None else f", Kendall of class means {mo.by_class_kendall:.3f}")
        )
    for c in r.criteria:
        if isinstance(g := c.by_generation, ClassMeans):
            lines.append(
                f"{c.criterion}: system level over {g.classes} generations (means per generation): "
                f"Pearson {g.pearson.text()}, Spearman {g.spearman.text()}, Kendall {g.kendall.text()}"
            )
    notes = sorted({getattr(c.within_items, m).reason for c in r.criteria for m in METHODS} - {None})
    lines += [f"within items: {n}" for n in notes]
    if isinstance(r.group_by, str):
        lines.append(_groups_text(r))
    lines += [f"WARNING: {w}" for w in r.warnings]
    return "\n".join(line.rstrip() for line in "\n".join(lines).splitlines())


def _groups_text(r: JudgeAgainstPeople | JudgeAgainstJudge) -> str:
    """The correlations within the groups of ``--group-by``, averaged, with the groups used and skipped."""
    from evalcore.stats.reliability import METHODS

    rows = []
    for c in r.criteria:
        w = c.within_groups
        row: dict[str, Any] = {"criterion": c.criterion, "groups": c.groups, "none": c.answers_without_group}
        for m in METHODS:
            row[m] = getattr(w, m).text()
            row[f"{m}_n"] = f"{getattr(w, m).groups_used} / {getattr(w, m).groups_skipped}"
        rows.append(row)
    return f"within groups of {r.group_by} (the mean of each group's own correlation; groups used / skipped):\n" + _table(
        rows,
        [
            ("criterion", "criterion", False),
            ("groups", "groups", False),
            ("none", "answers without a group", False),
            *((k, f"{m.title()}{' used / skipped' if k.endswith('_n') else ''}", False)
              for m in METHODS for k in (m, f"{m}_n")),
        ],
    )  # fmt: skip


def matrix_text(r: CriterionMatrix) -> str:
    lines = []
    for inst in r.instruments:
        crit = inst.criteria
        lines.append(f"{inst.instrument} {inst.name}: {inst.n} answers with every criterion; {_scope_text(r)}")
        for m, title in ((inst.pearson, "Pearson"), (inst.spearman, "Spearman"), (inst.kendall, "Kendall tau-b")):
            rows = [{"c": a, **{b: m[a][b] for b in crit}} for a in crit]
            lines.append(f"{title}:")
            lines.append(_table(rows, [("c", "", False), *((b, b, False) for b in crit)]))
        lines.append("")
    return "\n".join(line.rstrip() for line in "\n".join(lines).rstrip().splitlines())


def reliability_text(r: Reliability) -> str:
    from evalcore.analysis.scores import PeopleReliability

    lines = [_scope_text(r)]
    for inst in r.instruments:
        head = f"{inst.instrument} {inst.name}"
        if isinstance(inst, PeopleReliability):
            head += f" ({', '.join(inst.annotators) or 'no annotators'}; {inst.rater_kind})"
        lines.append(head + ":")
        if inst.note:
            lines.append(f"  {inst.note}")
        rows = []
        for c in inst.criteria:
            i = c.icc
            rows.append(
                {
                    "criterion": c.criterion,
                    "level": c.level,
                    "items": c.items,
                    "raters": c.raters,
                    "alpha": c.alpha,
                    "icc1": i and i.icc1,
                    "icc1k": i and i.icc1k,
                    "icc2_1": i and i.icc2_1,
                    "icc3_1": i and i.icc3_1,
                    "fleiss": c.fleiss,
                }
            )
        if rows:
            lines.append(
                _table(
                    [{k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in row.items()} for row in rows],
                    [
                        ("criterion", "criterion", False),
                        ("level", "alpha level", False),
                        ("items", "items", False),
                        ("raters", "raters", False),
                        ("alpha", "Krippendorff alpha", False),
                        ("icc1", "ICC(1)", False),
                        ("icc1k", "ICC(1,k)", False),
                        ("icc2_1", "ICC(2,1)", False),
                        ("icc3_1", "ICC(3,1)", False),
                        ("fleiss", "Fleiss kappa", False),
                    ],
                )
            )
    return "\n".join(line.rstrip() for line in "\n".join(lines).splitlines())


def _check_correlate(people: bool, gen_ids: tuple[str, ...], n_boot: int, level: float) -> None:
    """The judge against people: refuse what only the matrix or reliability takes, and bad figures."""
    from evalcore.errors import InputError

    if people:
        raise InputError(
            "people against people is `evalcore reliability --people`; with --matrix, their criterion matrix",
            field="--people",
        )
    if gen_ids:
        raise InputError("--gen goes with --people; a run names its own generation", field="--gen")
    if n_boot < 1:
        raise InputError(f"must be at least 1, got {n_boot}", field="--n-boot")
    if not 0 < level < 1:
        raise InputError(f"must lie between 0 and 1, got {level}", field="--level")


def _read_suites(run_ids: tuple[str, ...], gen_ids: tuple[str, ...]) -> None:
    """The suites of the runs and generations named; with neither (people on every labelled
    generation) no look is logged, as the commands always did."""
    if not (run_ids or gen_ids):
        read_suites([])


@click.command()
@_common
@click.option(
    "--matrix",
    is_flag=True,
    help="The criterion-by-criterion Pearson, Spearman and Kendall matrix of each instrument (--run, --people) "
    "instead of the judge against people.",
)
@click.option(
    "--judge-round", type=int, default=None, help="Read this judge round (default: the mean over the rounds)."
)
@click.option(
    "--against-run",
    "against_runs",
    multiple=True,
    metavar="RUN",
    help="Another judge in people's place: its run on the same generation (repeat, one per --run's generation; "
    "the same run with --against-round for two judge rounds of one run).",
)
@click.option(
    "--against-round", type=int, default=None, help="With --against-run: its judge round (default: --judge-round)."
)
@click.option(
    "--group-by",
    default=None,
    metavar="COLUMN",
    help="Also correlate within the groups of this column (an items column such as class or difficulty, "
    "gen_id for the generation), averaged over the groups.",
)
@click.option("--n-boot", type=int, default=1000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option("--level", type=FINITE, default=0.95, show_default=True, help="Interval level.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def correlate(obj: Ctx, run_ids: tuple[str, ...], gen_ids: tuple[str, ...], matrix: bool, **kw: Any) -> None:
    """A judge's scores against people's per criterion: Pearson, Spearman and Kendall's tau-b,
    pooled over answers and averaged within each item's outputs (or, with --group-by, within
    groups), with bootstrap intervals (--run RUN ...); against another judge's scores with
    --against-run; or, with --matrix, the criterion-by-criterion Pearson, Spearman and Kendall
    matrix of a run (--run) and of people (--people, pooled over --gen GEN ... or every
    labelled generation)."""
    from evalcore.analysis.scores import criterion_matrix

    cls, exclude = list(kw.pop("classes")) or None, list(kw.pop("exclude")) or None
    as_json = kw.pop("as_json")
    res: CriterionMatrix | JudgeAgainstPeople | JudgeAgainstJudge
    if matrix:
        _check_matrix(kw)
        res = criterion_matrix(
            obj.store,
            run_ids=list(run_ids),
            people=kw["people"],
            gen_ids=list(gen_ids) or None,
            judge_round=kw["judge_round"],
            classes=cls,
            include_holdout=obj.include_holdout,
            exclude=exclude,
        )
        text = matrix_text(res)
    else:
        _check_correlate(kw.pop("people"), gen_ids, kw["n_boot"], kw["level"])
        res = _correlate(obj, list(run_ids), cls, exclude, **kw)
        text = correlate_text(res)
    emit(res, as_json, text)
    _read_suites(run_ids, gen_ids)


def _check_matrix(kw: dict[str, Any]) -> None:
    """Refuse the options the matrix does not take."""
    from evalcore.errors import InputError

    for name in ("against_runs", "against_round", "group_by"):
        if kw[name]:
            flag = "--" + name.replace("_runs", "_run").replace("_", "-")
            raise InputError("the criterion matrix correlates criteria, not judges or groups", field=flag)


def _correlate(
    obj: Ctx, run_ids: list[str], cls: list[str] | None, exclude: list[str] | None, **kw: Any
) -> JudgeAgainstPeople | JudgeAgainstJudge:
    """The judge against people, or with --against-run against another judge."""
    from evalcore.analysis.judgescores import correlate_judges
    from evalcore.analysis.scores import correlate as correlate_scores
    from evalcore.errors import InputError

    against, against_round = list(kw.pop("against_runs")), kw.pop("against_round")
    common = dict(classes=cls, exclude=exclude, include_holdout=obj.include_holdout, **kw)
    if against:
        return correlate_judges(obj.store, run_ids, against, against_round=against_round, **common)
    if against_round is not None:
        raise InputError("--against-round goes with --against-run", field="--against-round")
    return correlate_scores(obj.store, run_ids, **common)


@click.command()
@_common
@alpha_level_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def reliability(
    obj: Ctx,
    run_ids: tuple[str, ...],
    people: bool,
    gen_ids: tuple[str, ...],
    classes: tuple[str, ...],
    exclude: tuple[str, ...],
    alpha_level: str | None,
    as_json: bool,
) -> None:
    """Reliability per criterion: across the judge rounds of each run (--run RUN ...) and across
    people (--people, the annotators of the label sets of --gen GEN ..., pooled): Krippendorff's
    alpha (at --level, by default interval / ordinal / nominal by the criterion's kind), ICC(1) and
    ICC(1,k), ICC(2,1) and ICC(3,1) where the raters are fixed people (not rater slots, not judge
    rounds), the spread of one answer's scores, Fleiss' kappa with each value a category."""
    from evalcore.analysis.scores import reliability as reliability_of
    from evalcore.errors import InputError

    if gen_ids and not people:
        raise InputError("--gen goes with --people; a run names its own generation", field="--gen")
    res = reliability_of(
        obj.store,
        run_ids=list(run_ids),
        people=people,
        gen_ids=list(gen_ids) or None,
        classes=list(classes) or None,
        include_holdout=obj.include_holdout,
        exclude=list(exclude) or None,
        level=cast("Level | None", alpha_level),
    )
    emit(res, as_json, reliability_text(res))
    _read_suites(run_ids, gen_ids)


def register(cli: click.Group) -> None:
    """Add ``evalcore correlate`` and ``evalcore reliability`` to ``cli``."""
    cli.add_command(correlate)
    cli.add_command(reliability)
