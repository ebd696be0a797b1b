"""Ids and knobs of an import.

* ``_fresh_id`` picks a free id for what an import writes (``base``, else ``base-2``,
  ``base-3`` ...); ``_explicit_id`` checks an id given on the command line: a valid id that
  cannot leave the data directory and is not taken yet.
* :func:`parse_knobs` splits ``--knob`` pairs (read by :func:`evalcore.contract.knobs.parse_knobs`,
  as generate and judge read them) into generation knobs and run knobs: ``gen.K`` / ``run.K`` name
  the side, otherwise the generation's known knobs go to it and the rest to the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evalcore.contract import hashing as H
from evalcore.contract.knobs import parse_knobs as parse_knobs_text
from evalcore.errors import InputError, PathEscapeError
from evalcore.importers.frame import GENERATION_KNOBS

# --------------------------------------------------------------------------- ids and knobs


def _sanitise(stem: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")
    s = re.sub(r"\.{2,}", ".", s)
    return (s or "import")[:100]


def _fresh_id(data: Path, sub: str, base: str, taken: set[tuple[str, str]]) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever is free."""
    cand, k = base, 1
    while (data / sub / cand).exists() or (sub, cand) in taken:
        k += 1
        cand = f"{base}-{k}"
    taken.add((sub, cand))
    return cand


def _explicit_id(
    data: Path, sub: str, value: str, option: str, what: str, taken: set[tuple[str, str]], file: str | None = None
) -> str:
    """An id given on the command line: a valid id (nothing that could leave the data directory)
    that is not taken yet."""
    if not H.is_valid_id(value):
        raise PathEscapeError(
            f"{value!r} is not a valid {what} id (letters, digits, . _ -; no '..', no '/')", file=file, field=option
        )
    if (data / sub / value).exists() or (sub, value) in taken:
        raise InputError(f"{what} {value!r} already exists in {data}", file=str(data / sub / value), field=option)
    taken.add((sub, value))
    return value


def parse_knobs(
    pairs: Iterable[str], file: str, gen_pairs: Iterable[str] = (), judge_pairs: Iterable[str] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``--knob`` pairs -> (generation knobs, run knobs), values read by
    :func:`evalcore.contract.knobs.parse_knobs` (the same reading as generate and judge). A key
    ``gen.K`` or ``run.K`` names its side; otherwise the generation's known knobs go to it and the
    rest to the run. ``--gen-knob`` pairs (``gen_pairs``) always describe the system under test and
    ``--judge-knob`` pairs (``judge_pairs``) the judge, whatever their key (no prefix needed)."""
    gen: dict[str, Any] = {}
    run: dict[str, Any] = {}
    for key, val in parse_knobs_text(pairs, field="--knob", file=file).items():
        if key.startswith("gen.") or key.startswith("run."):
            side, key = key.split(".", 1)
            if not key:
                raise InputError(f"knob {side + '.'!r} has no name", file=file, field="--knob")
            (gen if side == "gen" else run)[key] = val
        elif key in GENERATION_KNOBS:
            gen[key] = val
        else:
            run[key] = val
    gen.update(parse_knobs_text(gen_pairs, field="--gen-knob", file=file))
    run.update(parse_knobs_text(judge_pairs, field="--judge-knob", file=file))
    return gen, run
