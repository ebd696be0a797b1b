"""``evalcore home``: what waits for one person, by role (:func:`evalcore.home.waiting`), the
figures of the app's Home page. Registered on the CLI group by evalcore.cli."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from evalcore.cli._common import Ctx, emit

if TYPE_CHECKING:
    from evalcore.home import Home

ROLES = ("reviewer", "adjudicator", "grader", "admin")


def text(h: Home) -> str:
    """The lines of ``evalcore home`` without --json."""
    who = h.name or "nobody in particular (no --name)"
    lines = [f"for {who}, roles {', '.join(h.roles) or 'none'}"]
    if h.cases is not None:
        whose = "for you" if h.cases.reviewer else "not yet complete"
        lines.append(f"review: {h.cases.waiting} cases {whose}")
        lines += [f"  {q.queue_id} ({q.gen_id}): {q.waiting}" for q in h.cases.queues]
    if h.disputes is not None:
        lines.append(f"adjudicate: {h.disputes.waiting} cases whose reviewers disagree")
        lines += [f"  {q.queue_id} ({q.gen_id}): {q.waiting}" for q in h.disputes.queues]
    if h.grading is not None:
        lines.append(f"grade: {h.grading.sessions} open sessions, {h.grading.pairs_left} pairs left")
        lines += [f"  {s.session_id}: {s.pairs_left} of {s.pairs} pairs left" for s in h.grading.open]
    if h.runs is not None:
        lines.append(f"runs: {h.runs.runs}, {h.runs.not_complete} not complete (partial or polluted)")
    return "\n".join(lines)


def register(cli: click.Group) -> None:
    """Add ``evalcore home`` to ``cli``."""

    @cli.command("home")
    @click.option("--name", default="", help="Whose work to count (the name decisions are recorded under).")
    @click.option(
        "--role",
        "roles",
        multiple=True,
        type=click.Choice(ROLES),
        help="A role to count for (repeat); default: the roles roles.toml leaves to NAME typed without login.",
    )
    @click.option(
        "--session",
        "sessions",
        multiple=True,
        metavar="ID",
        help="A grader-only person's assigned session (repeat); default: roles.toml's for NAME.",
    )
    @click.option("--json", "as_json", is_flag=True, help="Print JSON.")
    @click.pass_obj
    def home(obj: Ctx, name: str, roles: tuple[str, ...], sessions: tuple[str, ...], as_json: bool) -> None:
        """What waits for NAME: cases to review, disputes to settle, pairs to grade, runs (the app's Home page)."""
        from evalcore.home import waiting
        from evalcore.storage.roles import email_key, load_roles

        rf = load_roles(obj.store.state)
        entry = rf.entry(email_key(name), name)
        assigned = sessions or (entry.sessions if entry else ())
        h = waiting(obj.store, name, roles or rf.without_login(name).roles, assigned)
        emit(h, as_json, text(h))
