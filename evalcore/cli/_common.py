"""What every command module of the ``evalcore`` command line shares.

* :func:`cli`: the click group, with ``--data`` (``EVALCORE_DATA``), ``--state``
  (``EVALCORE_STATE``) and ``--db`` (``EVALCORE_DB``: the label store and ledger on PostgreSQL); its
  context object is a :class:`Ctx`, which opens the :class:`~evalcore.storage.store.Store` on first
  use (bound to ``--db``) and carries ``--include-holdout``.
* :func:`emit` prints a result as JSON (``--json``) or as text; ``_table`` lays rows out in columns.
* :func:`selection_options` (``--judge-round``, ``--majority``, ``--gen-round``) and ``_selection``
  build the :class:`~evalcore.analysis.selection.Selection` of the analysis commands;
  :func:`page_options` (``--offset``, ``--limit``) page their drill-downs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from evalcore.scope import Written
    from evalcore.storage.store import Store


class FiniteFloat(click.ParamType):
    """A float option that refuses nan and infinities (``--threshold nan`` would store every
    score as failed), in click's one line."""

    name = "number"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        import math

        try:
            x = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number", param, ctx)
        if not math.isfinite(x):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return x


#: every float option of the command line (see FiniteFloat)
FINITE = FiniteFloat()


class Ctx:
    def __init__(self, data: str | None, state: str | None, db: str | None = None):
        self.data_opt = data
        self.state_opt = state
        self.db_opt = db
        # set by --include-holdout (evalcore.cli.suite): every command passes it on explicitly
        self.include_holdout = False
        # set by --class on the analysis commands (selection_options): a slice of the items
        self.classes: tuple[str, ...] = ()
        # set by --exclude-class (exclude_class_option): classes left out of the slice
        self.exclude_classes: tuple[str, ...] = ()
        # set by --items FILE (selection_options): the item ids a user names, one per line
        self.items: tuple[str, ...] = ()
        self._store: Store | None = None
        self.written: list[Written] = []  # the entities this command wrote (evalcore.scope)

    @property
    def store(self) -> Store:
        if self._store is None:
            from evalcore.storage.db import use_database
            from evalcore.storage.store import Store

            self._store = Store(self.data_opt, self.state_opt)
            use_database(self._store, self.db_opt)  # LabelStore(store) and Ledger(store) use it
        return self._store


def emit(obj: Any, as_json: bool, text: str | None = None) -> None:
    """Print ``obj`` as JSON (a typed result as its dict: evalcore.contract.results), else ``text``."""
    if as_json:
        from evalcore.contract.results import plain

        click.echo(json.dumps(plain(obj), indent=1, default=str, allow_nan=False) if obj is not None else "null")
    elif text is not None:
        click.echo(text)


def _fmt(v: Any, pct: bool = False) -> str:
    if v is None:
        return "-"
    if pct:
        return f"{100 * v:.1f}%"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def pct_ci(rate: float | None, ci: Sequence[float | None] | None) -> str:
    """A rate with its interval: ``40.0% [36.0, 44.2]`` (a dash for no rate)."""
    if rate is None:
        return "-"
    if not ci or ci[0] is None or ci[1] is None:
        return f"{100 * rate:.1f}%"
    return f"{100 * rate:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _table(rows: Sequence[Any], cols: list[tuple[str, str, bool]]) -> str:
    """Rows (dicts, or typed results: evalcore.contract.results) as a text table of ``cols``."""
    from evalcore.contract.results import plain

    head = [c[1] for c in cols]
    body = [[_fmt(r.get(k), pct) for k, _, pct in cols] for r in plain(list(rows))]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--data",
    envvar="EVALCORE_DATA",
    type=click.Path(file_okay=False),
    default=None,
    help="Data directory (suites, generations, runs, sessions). Default: $EVALCORE_DATA or the bundled demo.",
)
@click.option(
    "--state",
    envvar="EVALCORE_STATE",
    type=click.Path(file_okay=False),
    default=None,
    help="Writable state directory (labels, judgments, ledger). Default: $EVALCORE_STATE or ./.evalcore-state.",
)
@click.option(
    "--db",
    envvar="EVALCORE_DB",
    default=None,
    metavar="URL",
    help="The label store and ledger on PostgreSQL (postgresql://user:password@host/db, a team server). "
    "Default: $EVALCORE_DB or SQLite in the state directory.",
)
@click.version_option(package_name="evalcore")
@click.pass_context
def cli(ctx: click.Context, data: str | None, state: str | None, db: str | None) -> None:
    """evalcore: an adjudication workbench for LLM-as-a-judge evaluations."""
    from evalcore.scope import pinned, recording

    ctx.obj = Ctx(data, state, db)
    ctx.obj.written = ctx.with_resource(recording())  # what this command writes (read by _after)
    ctx.with_resource(pinned())  # each manifest read once per command


@cli.result_callback()
@click.pass_obj
def _after(obj: Ctx, *_args: Any, **_kw: Any) -> None:
    """After a command that wrote runs (judge, import, rederive, repair, ...): store the review
    detection of their generations and the pair tables of their runs, so that the review queue,
    the report card, flips and association do not compute them on a page's first render. A detection that cannot be stored now is said on stderr and
    computed when first needed; the runs are written either way."""
    gens: dict[tuple[Path, Path], list[str]] = {}
    for data, state, kind, eid in obj.written:
        if kind == "run":
            gens.setdefault((data, state), []).append(eid)
    if not gens:
        return
    import duckdb

    from evalcore.errors import EvalcoreError
    from evalcore.review.detect import refresh_detections, runs_on
    from evalcore.storage.itemkeys import label_keys
    from evalcore.storage.pairs import refresh_pairs
    from evalcore.storage.store import Store

    for (data, _writer_state), run_ids in gens.items():
        try:
            # the command's own state directory (--state): a writer's Store may not have been given it
            st = Store(data, obj.state_opt)
            gen_ids = [st.run(r).manifest.gen_id for r in run_ids]
            refresh_detections(st, gen_ids)
            for g in dict.fromkeys(gen_ids):  # two runs' answers joined once, for flips, association and compare
                refresh_pairs(st, runs_on(st, g))
            for r in run_ids:  # the labelled items' integer keys, for the report card and association
                label_keys(st, r)
        except (EvalcoreError, duckdb.Error) as e:
            why = e.message if isinstance(e, EvalcoreError) else str(e).splitlines()[0]
            click.echo(
                f"note: the review detection was not stored now ({why}); it is computed when first needed",
                err=True,
            )


# --------------------------------------------------------------------------- analysis


def _selection(obj: Ctx, judge_round: int | None, majority: bool, gen_round: int | None):
    from evalcore.analysis.selection import Selection

    if majority and judge_round is not None:
        raise click.UsageError("--judge-round and --majority exclude each other")
    return Selection(
        judge_round=judge_round or 1,
        majority=majority,
        gen_round=gen_round,
        include_holdout=obj.include_holdout,
        classes=tuple(obj.classes),
        items=tuple(obj.items),
    )


def _take_classes(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    if value and isinstance(ctx.obj, Ctx):
        ctx.obj.classes = tuple(value)


def role_option(f):
    """``--role reviewer|adjudicator`` of the commands that record a decision."""
    return click.option(
        "--role",
        type=click.Choice(["reviewer", "adjudicator"]),
        default="reviewer",
        show_default=True,
        help="An adjudicator's decision settles the case (docs/REVIEW.md, gold).",
    )(f)


def class_option(f):
    """``--class C`` (repeatable): a slice of the items, kept on the context for :func:`_selection`."""
    return click.option(
        "--class",
        "item_classes",
        multiple=True,
        expose_value=False,
        callback=_take_classes,
        help="Only items of this class (repeatable; `(none)` for items without one): a slice.",
    )(f)


def _take_excluded(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    if value and isinstance(ctx.obj, Ctx):
        ctx.obj.exclude_classes = tuple(value)


def exclude_class_option(f):
    """``--exclude-class C`` (repeatable): the items of these classes left out of the slice, kept on
    the context (``Ctx.exclude_classes``) beside ``--class``."""
    return click.option(
        "--exclude-class",
        "excluded_classes",
        multiple=True,
        metavar="C",
        expose_value=False,
        callback=_take_excluded,
        help="Leave out the items of this class (repeatable; `(none)` for items without one).",
    )(f)


def _take_items(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is None or not isinstance(ctx.obj, Ctx):
        return
    from evalcore.errors import InputError

    try:
        text = Path(value).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the item list: {e}", file=value, field="--items") from None
    ids = tuple(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")))
    if not ids:
        raise InputError(
            "the item list names no item (one id per line; # starts a comment)", file=value, field="--items"
        )
    ctx.obj.items = ids


def slice_options(f):
    """``--class C`` (repeatable) and ``--items FILE``: a slice of the items, kept on the context."""
    f = click.option(
        "--items",
        "item_list",
        type=click.Path(dir_okay=False),
        default=None,
        expose_value=False,
        callback=_take_items,
        help="Only the items listed in this file (one id per line): a slice.",
    )(f)
    return class_option(f)


def selection_options(f):
    f = slice_options(f)
    f = click.option("--gen-round", type=int, default=None, help="Only this generation round (default: all).")(f)
    f = click.option("--majority", is_flag=True, help="Majority over judge rounds (a tie fails).")(f)
    f = click.option("--judge-round", type=int, default=None, help="Judge round to read (default 1).")(f)
    return f


# --------------------------------------------------------------------------- drill-downs
# The answers behind a figure of the analysis commands, one page at a time.


def page_options(f):
    f = click.option("--offset", type=int, default=0, show_default=True, help="Skip this many answers.")(f)
    f = click.option("--limit", type=int, default=25, show_default=True, help="Answers per page (at most 500).")(f)
    return f
