"""Knobs: the settings a manifest records as ``key=value`` (``--knob`` on generate, judge and every
importer). One parser, so that the same text means the same value wherever it is given.

A value is read as JSON when it parses as anything but ``null``: numbers, ``true`` / ``false``,
lists and objects (``retrieval_k=[5,10]`` is the list ``[5, 10]``, ``temperature=0.2`` the number
0.2); anything else, ``null`` included, is kept as the text itself, with surrounding white space
removed. Before issue 12 the importers turned lists into text, so a generated and an imported
generation with ``retrieval_k=[5,10]`` compared as "differs" against each other.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from evalcore.contract.readers import loads_json
from evalcore.errors import InputError


def knob_value(text: str) -> Any:
    """The value of one ``key=value`` setting (see the module docstring)."""
    text = text.strip()
    try:
        value = loads_json(text)
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError) and e.msg.startswith("names the key"):
            raise InputError(f"{text[:80]!r} {e.msg}", field="--knob") from None
        return text
    return text if value is None else value


def parse_knobs(pairs: Iterable[str], *, field: str = "--knob", file: str | None = None) -> dict[str, Any]:
    """``key=value`` pairs -> {key: value}; a later pair with the same key wins. A pair without
    ``=`` or with an empty key is refused naming ``field`` (and ``file`` when one is being read)."""
    out: dict[str, Any] = {}
    for p in pairs:
        if "=" not in p:
            raise InputError(f"{p!r} is not key=value", file=file, field=field)
        k, v = p.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"{p!r} has an empty key", file=file, field=field)
        out[k] = knob_value(v)
    return out
