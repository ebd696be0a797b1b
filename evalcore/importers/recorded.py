"""What a harness records beside the verdicts, read from a user's table (``import long`` /
``import wide``; docs/IMPORT.md, "What the harness recorded").

* :class:`HarnessOpts` holds ``--mode`` (single, grouped, split), ``--group``, ``--field-order``,
  the columns of the emission position, the judge's raw verdict, its covered / missed /
  triggered lists and the system's ``abstained`` flag, and ``--judge-family`` /
  ``--prompt-variant``.
* :func:`check_mode` checks the mode and its groups against the rubric's criteria;
  :func:`call_of` names the call a criterion was judged in; :func:`default_positions` is each
  criterion's emission position from the field order (0 in a one-criterion call);
  :func:`field_order_of` is the run's ``field_order`` from the positions a file records (the
  common order, or ``rotate`` when it differs between answers).
* :func:`list_cell` reads a covered / missed / triggered (or must-have / wrong-if) cell: a JSON
  list, the JSON text of one, or statements separated by ``|``; :func:`position_cell` an emission
  position (a whole number >= 0); :func:`flag_cell` a yes / no flag such as ``abstained``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import InputError
from evalcore.importers.frame import BINARY_FALSE, BINARY_TRUE, Frame, _is_missing, loads_json

MODES = ("single", "grouped", "split")
#: wide format: a column ``<criterion><suffix>`` holds what the harness recorded for that criterion
WIDE_SUFFIXES = {
    "raw_verdict": "_raw_verdict",
    "position": "_position",
    "covered": "_covered",
    "missed": "_missed",
    "triggered": "_triggered",
}
#: long format: the default column of each recorded field (used when the file has it)
LONG_COLUMNS = {
    "raw_verdict": "raw_verdict",
    "position": "position",
    "covered": "covered",
    "missed": "missed",
    "triggered": "triggered",
}


@dataclass
class HarnessOpts:
    """How the verdicts were judged, and the columns of what the harness recorded."""

    mode: str | None = None  # None: `imported` (how the criteria were called is not known)
    groups: list[str] = field(default_factory=list)  # --group a,b (repeatable), grouped mode
    field_order: str | None = None  # --field-order a,b,c
    position_col: str | None = None
    raw_verdict_col: str | None = None
    covered_col: str | None = None
    missed_col: str | None = None
    triggered_col: str | None = None
    abstained_col: str | None = None
    judge_family: str | None = None
    prompt_variant: str | None = None

    def given(self) -> list[str]:
        """The options given that describe a judge (refused with --human)."""
        named = {
            "--mode": self.mode,
            "--field-order": self.field_order,
            "--position-col": self.position_col,
            "--raw-verdict-col": self.raw_verdict_col,
            "--covered-col": self.covered_col,
            "--missed-col": self.missed_col,
            "--triggered-col": self.triggered_col,
            "--judge-family": self.judge_family,
            "--prompt-variant": self.prompt_variant,
        }
        return [k for k, v in named.items() if v is not None] + (["--group"] if self.groups else [])


def _names(text: str, file: str, option: str) -> list[str]:
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise InputError(f"{text!r} names no criterion", file=file, field=option)
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise InputError(f"criteria listed twice: {', '.join(dupes)}", file=file, field=option)
    return names


def check_mode(file: str, h: HarnessOpts, criteria: list[str]) -> tuple[str, list[list[str]] | None, list[str]]:
    """(mode, groups, field order) of the run, checked against the rubric's ``criteria``: grouped
    needs ``--group`` covering every criterion exactly once; ``--group`` and ``--field-order``
    name criteria of the file."""
    mode = h.mode or "imported"
    if h.mode is not None and h.mode not in MODES:
        raise InputError(f"mode {h.mode!r} is not one of {', '.join(MODES)}", file=file, field="--mode")
    groups: list[list[str]] | None = None
    if h.groups:
        if mode != "grouped":
            raise InputError("--group applies only with --mode grouped", file=file, field="--group")
        groups = [_names(g, file, "--group") for g in h.groups]
        seen: dict[str, int] = {}
        for k, g in enumerate(groups):
            for c in g:
                if c not in criteria:
                    raise InputError(
                        f"unknown criterion {c!r} (the file has: {', '.join(criteria)})", file=file, field="--group"
                    )
                if c in seen:
                    raise InputError(f"criterion {c!r} is in two groups", file=file, field="--group")
                seen[c] = k
        left = [c for c in criteria if c not in seen]
        if left:
            raise InputError(f"criteria in no group: {', '.join(left)}", file=file, field="--group")
    elif mode == "grouped":
        raise InputError(
            "--mode grouped needs the criteria of each call: --group a,b --group c (repeatable)",
            file=file,
            field="--group",
        )
    order = list(criteria)
    if h.field_order is not None:
        order = _names(h.field_order, file, "--field-order")
        if sorted(order) != sorted(criteria):
            raise InputError(
                f"must list every criterion once (the file has: {', '.join(criteria)})",
                file=file,
                field="--field-order",
            )
    return mode, groups, order


def call_of(mode: str, groups: list[list[str]] | None, criterion: str) -> int:
    """The call (0, 1, ...) a criterion was judged in, within one answer and judge round: every
    criterion in one call (single), one per group (grouped) or one per criterion (split)."""
    if mode == "grouped" and groups:
        return next(k for k, g in enumerate(groups) if criterion in g)
    return 0


def default_positions(mode: str, groups: list[list[str]] | None, order: list[str]) -> dict[str, int]:
    """Each criterion's emission position within its call from the field order: its index among
    the criteria of its call (single: all of them; grouped: its group); 0 in a one-criterion call
    (split) and for a run whose harness is not known (imported)."""
    if mode == "single":
        return {c: k for k, c in enumerate(order)}
    if mode == "grouped" and groups:
        return {c: [x for x in order if x in g].index(c) for g in groups for c in g}
    return dict.fromkeys(order, 0)


def field_order_of(per_answer: dict[Any, dict[str, int]], mode: str, groups, criteria: list[str]) -> list[str] | str:
    """The run's ``field_order`` from the positions recorded per answer (and judge round): the
    criteria by (call, position), the same for every answer, else ``rotate``."""
    orders = set()
    for pos in per_answer.values():
        orders.add(tuple(sorted(pos, key=lambda c: (call_of(mode, groups, c), pos[c], criteria.index(c)))))
    if len(orders) == 1:
        only = list(next(iter(orders)))
        return only + [c for c in criteria if c not in only]
    return "rotate" if orders else list(criteria)


def list_cell(frame: Frame, col: str, i: int, v: Any) -> list[str] | None:
    """A list of statements: a JSON list (or its JSON text, as a CSV holds it), or text with the
    statements separated by ``|``; an empty cell is no list (not recorded), ``[]`` an empty one."""
    if _is_missing(v):
        return None
    if isinstance(v, str) and v.strip().startswith("["):
        try:
            v = loads_json(v)
        except json.JSONDecodeError as e:
            raise frame.err(f"{v[:60]!r} is not a JSON list of statements: {e.msg}", col, i) from None
    if isinstance(v, (list, tuple)):
        if not all(isinstance(x, str) for x in v):
            raise frame.err("a list of statements must hold text only", col, i)
        return [x.strip() for x in v]
    if isinstance(v, str):
        return [x.strip() for x in v.split("|") if x.strip()]
    raise frame.err(f"{v!r} is not a list of statements (a JSON list, or statements separated by |)", col, i)


def position_cell(frame: Frame, col: str, i: int, v: Any) -> int | None:
    """An emission position within its call: a whole number >= 0 (empty: not recorded)."""
    if _is_missing(v):
        return None
    x: int | None = None
    if isinstance(v, bool):
        x = None
    elif isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
        x = int(v)
    elif isinstance(v, str) and v.strip().isdigit():
        x = int(v.strip())
    if x is None or x < 0:
        raise frame.err(f"{v!r} is not an emission position (a whole number from 0)", col, i)
    return x


def flag_cell(frame: Frame, col: str, i: int, v: Any) -> bool:
    """A yes / no flag (true/false, yes/no, 1/0, ...); empty is no."""
    if _is_missing(v):
        return False
    tok = ("true" if v else "false") if isinstance(v, bool) else str(v).strip().lower()
    if isinstance(v, float) and v.is_integer():
        tok = str(int(v))
    if tok in BINARY_TRUE:
        return True
    if tok in BINARY_FALSE:
        return False
    raise frame.err(f"{v!r} is not a yes / no flag (true/false, yes/no, 1/0)", col, i)
