"""``evalcore pairs make | label | close | report``: blinded pairwise sessions.

``make`` pairs two arms by item, normalises and draws sides, and writes the session (no arm name)
and its key (:func:`evalcore.pairwise.sessions.make_session`, with the identifiability check of
:mod:`evalcore.pairwise.leakage`); ``label`` appends one person's choice on a pair of an open
session to the state and ``close`` unblinds a session into the state directory, the only step
that reads a key (:mod:`evalcore.pairwise.grading`); ``report`` shows the results of a closed
session (:mod:`evalcore.pairwise.results`). ``schedule`` (with the keys, by the session's owner)
queues the next pairs where a judgment settles most which arm is best and asks the stopping rule
(:mod:`evalcore.pairwise.active`); ``progress`` says where that stands without the key.
"""

from __future__ import annotations

from pathlib import Path

import click

from evalcore.cli._common import FINITE, Ctx, cli, emit

# --------------------------------------------------------------------------- pairwise sessions
# make -> label -> close (the one step given the keys directory) -> report. See docs/PAIRWISE.md.


@cli.group()
def pairs() -> None:
    """Blinded pairwise sessions: make, label, schedule, close (unblind), report."""


@pairs.command("make")
@click.option("--session", "session_id", required=True, help="Id of the new session (must not name an arm).")
@click.option(
    "--arm",
    "arms",
    multiple=True,
    required=True,
    help="NAME=GENERATION_OR_FILE, once per arm (two or more). A file has columns item_id and output "
    "(csv, tsv, jsonl, json, parquet).",
)
@click.option(
    "--keys",
    "keys_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keys directory (default: <data>-keys, beside the data directory; never inside data or state).",
)
@click.option(
    "--normalise",
    default="headings,bullets,blank-lines",
    show_default=True,
    help="Comma-separated normalisations (headings, bullets, blank-lines); 'none' for none.",
)
@click.option("--length-match", is_flag=True, help="Trim the longer answer of each pair to about the shorter's length.")
@click.option(
    "--mirror",
    type=FINITE,
    default=0.0,
    show_default=True,
    help="Share of pairs shown again with the sides swapped (position consistency).",
)
@click.option(
    "--holdout", type=int, default=0, show_default=True, help="Pairs held out of the headline (drawn at random)."
)
@click.option(
    "--pairs-per-item",
    type=int,
    default=1,
    show_default=True,
    help="Original pairs per item, each of two distinct arms (at most K(K-1)/2 for K arms), balanced over the "
    "pairs of arms and the sides.",
)
@click.option("--seed", type=int, default=None, help="Seed of ids, holdouts and mirrors (default: drawn; recorded).")
@click.option(
    "--key-seed", type=int, default=None, help="Secret seed of the sides, kept in the keys directory (default: drawn)."
)
@click.option(
    "--round", "gen_round", type=int, default=1, show_default=True, help="Generation round of generation arms."
)
@click.option(
    "--instructions",
    default=None,
    help="What the graders read before the first pair: what 'better' means in this session (no arm name).",
)
@click.option(
    "--instructions-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The instructions from a UTF-8 text file (instead of --instructions).",
)
@click.option(
    "--by", "created_by", default=None, help="Who makes the session: graders are told to tell them when done."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_make(obj: Ctx, session_id, arms, keys_dir, normalise, instructions, instructions_file, as_json, **kw) -> None:
    """Pair two arms or more by item, normalise, draw sides; write the session (no arm name) and the key."""
    from evalcore.pairwise.leakage import describe
    from evalcore.pairwise.sessions import make_session

    steps = [] if normalise.strip().lower() == "none" else normalise.split(",")
    keys = Path(keys_dir) if keys_dir else None
    text = _instructions(instructions, instructions_file)
    s = make_session(obj.store, session_id, list(arms), keys_dir=keys, normalise=steps, instructions=text, **kw)
    over = f"{s['original_pairs']} items" if "arms" not in s else _arms_line(s)
    described = describe if "arms" not in s else _described
    lines = [
        f"session {s['session_id']}: {s['pairs']} pairs ({over}, {s['mirrors']} mirrored, "
        f"{s['holdout']} held out), status open, seed {s['seed']}",
        f"normalised: {', '.join(s['normalise']) or 'nothing'}" + ("; lengths matched" if s["length_match"] else ""),
        f"identifiability before normalisation{_most(s)}: {described(s['identifiability']['before'])}",
        f"identifiability as shown{_most(s)}: {described(s['identifiability']['after'])}",
        *(
            f"  --arm {c['arms'][0]} and {c['arms'][1]} ({c['pairs']} pairs) as shown: {described(c['after'])}"
            for c in s["identifiability"].get("by_arm_pair", [])
        ),
        *(f"WARNING: {w}" for w in s["warnings"]),
        *([f"instructions to the graders: {len(s['instructions'])} characters"] if s.get("instructions") else []),
        f"session: {s['path']}",
        f"key: {s['keys']} (give it to `evalcore pairs close` only)",
    ]
    emit(s, as_json, "\n".join(lines))


def _most(s: dict) -> str:
    """Which arm pair a session of more than two arms headlines (the one most easily told apart as shown)."""
    most = s["identifiability"].get("most_identifiable")
    return f" (--arm {most[0]} and {most[1]}, the pair of arms most easily told apart)" if most else ""


def _described(check: dict) -> str:
    """:func:`evalcore.pairwise.leakage.describe` with its interval's level to a tenth of a percent:
    a session of more than two arms checks each pair of arms at a Bonferroni level (99.5% is not 100%)."""
    from evalcore.pairwise.leakage import describe

    text = describe(check)
    if check.get("accuracy") is None:
        return text
    return text.replace(f"({100 * check['level']:.0f}% interval", f"({100 * check['level']:.1f}% interval", 1)


def _arms_line(s: dict) -> str:
    """How a session of more than two arms spreads its original pairs (no arm named)."""
    return (
        f"{s['original_pairs']} original pairs of {s['arms']} arms, {s['pairs_per_item']} per item over "
        f"{s['items']} items"
    )


def _instructions(text: str | None, path: str | None) -> str:
    """The graders' instructions: ``--instructions`` or the UTF-8 text of ``--instructions-file``
    (refused past four bytes a character of the limit, before it is read)."""
    from evalcore.errors import InputError
    from evalcore.pairwise.sessions import INSTRUCTIONS_MAX

    if path is None:
        return text or ""
    if text:
        raise InputError("give --instructions or --instructions-file, not both", field="--instructions-file")
    size = Path(path).stat().st_size
    if size > 4 * INSTRUCTIONS_MAX:
        raise InputError(f"{size} bytes, more than instructions may be", file=Path(path), field="--instructions-file")
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", file=Path(path), field="--instructions-file") from None


@pairs.command("label")
@click.option("--session", "session_id", required=True)
@click.option("--pair", "pair_id", default=None, help="The pair (with --reviewer and --choice).")
@click.option("--reviewer", default=None)
@click.option("--choice", type=click.Choice(["left", "right", "same"]), default=None, help="As shown.")
@click.option("--seconds", type=FINITE, default=None, help="Time the judgment took.")
@click.option(
    "--queue-inconsistent",
    "grader_run",
    default=None,
    metavar="RUN",
    help="Instead of a choice: queue the pairs model grader RUN judged differently in its two orders "
    "as the ones people grade first (reason grader_inconsistent; open sessions only).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_label(obj: Ctx, session_id, pair_id, reviewer, choice, seconds, grader_run, as_json) -> None:
    """Record one person's choice on a pair of an open session (appended to the state), or queue a
    model grader's inconsistent pairs to be graded first."""
    from evalcore.errors import InputError
    from evalcore.pairwise.grading import progress, record_judgment
    from evalcore.pairwise.verdicts import queue_inconsistent

    if grader_run is not None:
        if pair_id or reviewer or choice:
            raise InputError(
                "--queue-inconsistent takes no --pair, --reviewer or --choice", field="--queue-inconsistent"
            )
        q = queue_inconsistent(obj.store, session_id, grader_run)
        emit(
            q,
            as_json,
            f"{q['inconsistent_pairs']} pair(s) of {session_id} judged inconsistently by {grader_run}: {q['queued']} "
            f"queued for people first ({q['already_queued']} already were; reason {q['reason']}); "
            f"{q['first_in_session']} pair(s) now come first for every reviewer",
        )
        return
    missing = [o for o, v in (("--pair", pair_id), ("--reviewer", reviewer), ("--choice", choice)) if not v]
    if missing:
        raise InputError(f"a choice needs {', '.join(missing)}", field=missing[0])
    row = record_judgment(obj.store, session_id, pair_id, reviewer, choice, seconds, via="cli")
    p = progress(obj.store, session_id, row["reviewer"])
    emit(
        {**row, "graded": p.graded, "total": p.total},
        as_json,
        f"judgment {row['judgment_id']}: {pair_id} = {choice} by {row['reviewer']} "
        f"({p.graded} of {p.total} pairs graded)",
    )


def _keys_option(why: str = ""):
    """``--keys DIR``: the one step of a session that reads its key says where it is."""
    return click.option(
        "--keys",
        "keys_dir",
        type=click.Path(file_okay=False),
        required=True,
        help=f"The keys directory the session's key was written to{why}.",
    )


@pairs.command("close")
@click.option("--session", "session_id", required=True)
@_keys_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_close(obj: Ctx, session_id, keys_dir, as_json) -> None:
    """Close a session and unblind it into the state directory (the only step that reads a key)."""
    from evalcore.pairwise.grading import close_session
    from evalcore.pairwise.rankstore import refresh

    r = close_session(obj.store, session_id, Path(keys_dir))
    refresh(obj.store, session_id)  # more than two arms: the ranking stored for the results page's first render
    emit(
        r,
        as_json,
        f"closed {session_id}: {r['pairs']} pairs, {r['judgments']} judgments; unblinded into {r['unblinded']}",
    )


@pairs.command("report")
@click.option("--session", "session_id", required=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap intervals.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_report(obj: Ctx, session_id, seed, as_json) -> None:
    """Results of a closed, unblinded session (refused while it is open); more than two arms are ranked."""
    from evalcore.pairwise.presentation import format_presentation, presentation
    from evalcore.pairwise.ranking import RankingReport, format_ranking
    from evalcore.pairwise.results import format_report, report

    r = report(obj.store, session_id, seed=seed)
    text = format_ranking(r) if isinstance(r, RankingReport) else format_report(r)
    emit(r, as_json, "\n\n".join(filter(None, [text, format_presentation(presentation(obj.store, session_id))])))


@pairs.command("sitting")
@click.option("--session", "session_id", required=True)
@click.option("--reviewer", required=True)
@click.option("--cap-judgments", type=click.IntRange(min=1), default=40, show_default=True,
              help="Suggest a break after this many judgments in one sitting.")  # fmt: skip
@click.option("--cap-minutes", type=click.FloatRange(min=1), default=45.0, show_default=True,
              help="... or after this many minutes.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_sitting(obj: Ctx, session_id, reviewer, cap_judgments, cap_minutes, as_json) -> None:
    """A grader's current sitting: judgments and minutes since their last break, and whether one is suggested."""
    from evalcore.pairwise.fatigue import sitting

    s = sitting(obj.store, session_id, reviewer, cap_judgments=cap_judgments, cap_minutes=cap_minutes)
    emit(
        s,
        as_json,
        s.message
        or f"{s.reviewer}: {s.judgments} judgments over {s.minutes:.0f} minutes in this sitting "
        f"(a break is suggested at {s.cap_judgments} judgments or {s.cap_minutes:.0f} minutes)",
    )


@pairs.command("drift")
@click.option("--session", "session_id", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_drift(obj: Ctx, session_id, as_json) -> None:
    """Each grader's first third of their judgments against their last: left share and agreement with the others."""
    from evalcore.pairwise.fatigue import drift

    d = drift(obj.store, session_id)

    def pct(p) -> str:
        return "-" if p.share is None else f"{100 * p.share:.1f}% of {p.n}"

    lines = [f"{d.session_id}: {d.ordered} judgments recorded in order, {d.unordered} shipped without an order"]
    for g in d.graders:
        lines.append(
            f"  {g.reviewer} ({g.judgments}): left share {pct(g.first.left)} -> {pct(g.last.left)}; "
            f"with the others' majority {pct(g.first.with_majority)} -> {pct(g.last.with_majority)}"
        )
    if d.too_few:
        lines.append(f"  fewer than 6 ordered judgments: {', '.join(d.too_few)}")
    emit(d, as_json, "\n".join(lines + d.caveats))


@pairs.command("presentation")
@click.option("--session", "session_id", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_presentation(obj: Ctx, session_id, as_json) -> None:
    """What normalisation removed from what graders saw, and the structure check per arm (once unblinded)."""
    from evalcore.pairwise.presentation import format_presentation, presentation

    p = presentation(obj.store, session_id)
    emit(p, as_json, format_presentation(p) or f"{session_id}: normalisation removed no structure")


@pairs.command("schedule")
@click.option("--session", "session_id", required=True)
@_keys_option(" (the schedule maps pairs to arms with it)")
@click.option("--next", "n", type=int, default=1, show_default=True, help="How many pairs to queue.")
@click.option("--level", type=FINITE, default=0.9, show_default=True, help="The stopping rule's level of P(best).")
@click.option("--seed", type=int, default=None, help="Seed of the choice (default: the session's seed; recorded).")
@click.option(
    "--n-boot", type=click.IntRange(min=50), default=1000, show_default=True,
    help="Bootstrap replicates of the stopping rule's P(best).",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_schedule(obj: Ctx, session_id, keys_dir, n, level, seed, n_boot, as_json) -> None:
    """Queue the next pairs of an open session where a judgment settles most which arm is best (the
    active schedule, recorded in the state by pair id), and say whether the top arm is settled."""
    from evalcore.pairwise.active import format_scheduled, schedule

    s = schedule(obj.store, session_id, Path(keys_dir), n=n, level=level, seed=seed, n_boot=n_boot)
    emit(s, as_json, format_scheduled(s))


@pairs.command("progress")
@click.option("--session", "session_id", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_progress(obj: Ctx, session_id, as_json) -> None:
    """A session's original pairs judged, and the active schedule's progress (no key: no arm named)."""
    from evalcore.pairwise.grading import session_schedule

    obj.store.session(session_id)
    p = session_schedule(obj.store, session_id)
    emit(p, as_json, f"{session_id}: {p.sentence()}")
