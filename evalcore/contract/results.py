"""Typed results: what a figure gives the app and ``--json``, as dataclasses (:class:`Result`)
whose :meth:`Result.to_dict` is the JSON object the command line prints, key for key and in the
fields' order. A field whose JSON key is not a Python name names it in its metadata
(``field(metadata={"key": "class"})``); a field left at :data:`OMIT` is absent from the JSON (not
``null``): the keys a figure gives only sometimes (a warning, a note).

Nested results, lists and dicts of them convert too (:func:`plain`), so a page reads
``r.criteria[0].fail_rate`` where the JSON says ``r["criteria"][0]["fail_rate"]``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final


class _Omit:
    """The value of a field absent from the JSON."""

    def __repr__(self) -> str:
        return "OMIT"

    def __reduce__(self) -> str:  # one instance, also through pickle (the app's caches)
        return "OMIT"


OMIT: Final[Any] = _Omit()


def key(name: str) -> dict[str, str]:
    """The metadata of a field whose JSON key is ``name`` (a Python keyword such as ``class``)."""
    return {"key": name}


@dataclasses.dataclass
class Result:
    """A figure's result (subclass it as a ``@dataclass``)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: each field under its key, in order; :data:`OMIT` fields left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if v is not OMIT:
                out[f.metadata.get("key", f.name)] = plain(v)
        return out


def plain(v: Any) -> Any:
    """``v`` with every :class:`Result` in it turned into its dict (lists, tuples and dicts walked)."""
    if isinstance(v, Result):
        return v.to_dict()
    if isinstance(v, list | tuple):
        return [plain(x) for x in v] if isinstance(v, list) or any(isinstance(x, Result) for x in v) else v
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v
