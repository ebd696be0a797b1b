"""``evalcore pairs cell --session NAME --a ARM --b ARM``: the pairs behind one cell of a closed
session's win matrix (:func:`evalcore.pairwise.cells.cell_pairs`; issue 43). Attached to the
``pairs`` group when this module is imported (by ``evalcore/cli/__init__.py``)."""

from __future__ import annotations

import click

from evalcore.cli._common import Ctx, emit
from evalcore.cli.pairs import pairs


@pairs.command("cell")
@click.option("--session", "session_id", required=True)
@click.option("--a", "arm_a", required=True, help="The row arm (its wins are the cell's wins).")
@click.option("--b", "arm_b", required=True, help="The column arm.")
@click.option(
    "--source",
    default="people",
    show_default=True,
    help="Whose counts: people (people's strict majority per pair, the matrix the results page draws), "
    "a reviewer, or a model grader run id.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pairs_cell(obj: Ctx, session_id, arm_a, arm_b, source, as_json) -> None:
    """The original pairs of two arms in a closed, unblinded session, and their win matrix cell's counts."""
    from evalcore.pairwise.cells import cell_pairs, format_cell

    r = cell_pairs(obj.store, session_id, arm_a, arm_b, source=source)
    emit(r, as_json, format_cell(r))
