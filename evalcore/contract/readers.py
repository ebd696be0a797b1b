"""One reader for each text format evalcore reads from a person (JSON, TOML, YAML), each bounded the
same way, and the one comparison of names people type (issue 38).

* Nesting: deeper than :data:`MAX_DEPTH` levels of arrays and objects (``EVALCORE_MAX_DEPTH``, at
  most :data:`DEPTH_CAP`) is refused, as each format's own error (``json.JSONDecodeError``,
  ``tomllib.TOMLDecodeError``, ``yaml.YAMLError``), which every caller already turns into one line
  naming the file. Python's JSON and TOML parsers and PyYAML's composer recurse, so a file nested
  3,000 deep used to end in a ``RecursionError`` and 3,000 lines of traceback.
* Duplicate keys: a JSON object or a YAML mapping that names a key twice is refused (both parsers
  keep the last one without a word); TOML refuses them itself.
* Names: :func:`name_key` is how two ids or names are compared (Unicode NFC, no zero-width or
  direction characters, no space around); :func:`lookalikes` finds two spellings that compare equal.
"""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Iterable
from typing import Any

from evalcore.errors import InputError

#: the deepest nesting read (``EVALCORE_MAX_DEPTH``, levels of arrays and objects / tables)
MAX_DEPTH = 100
DEPTH_CAP = 900  # EVALCORE_MAX_DEPTH at most: Python's recursion limit is 1,000

_CONTAINERS = (list, dict)


def env_limit(name: str, default: int) -> int:
    """A whole-number limit from the environment variable ``name``, else ``default``."""
    v = os.environ.get(name)
    try:
        return int(v) if v else default
    except ValueError:
        raise InputError(f"{v!r} is not a whole number", field=name) from None


def depth_cap() -> int:
    return max(1, min(env_limit("EVALCORE_MAX_DEPTH", MAX_DEPTH), DEPTH_CAP))


def too_deep(cap: int) -> str:
    return (
        f"nests arrays or objects more than {cap} deep, too deeply to read (EVALCORE_MAX_DEPTH raises the limit, "
        f"to at most {DEPTH_CAP})"
    )


def deeper_than(value: Any, cap: int) -> int:
    """The depth at which ``value`` (parsed JSON, TOML or YAML) passes ``cap`` levels of arrays and
    objects, or 0: a walk level by level that stops there (0.13 s over 300,000 small records,
    against 1.1 s to parse them)."""
    level, depth = ([value] if type(value) in _CONTAINERS else []), 1
    while level:
        if depth > cap:
            return depth
        level = [k for o in level for k in (o.values() if type(o) is dict else o) if type(k) in _CONTAINERS]
        depth += 1
    return 0


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"names the key {k!r} twice in one object (which one is meant?)")
            seen.add(k)
    return out


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)  # built once: json.loads builds one per call given a hook


def loads_json(text: str, **kw: Any) -> Any:
    """``json.loads`` refusing nesting deeper than the limit and an object naming a key twice, as a
    ``json.JSONDecodeError``. The depth is walked only when the text holds more opening brackets
    than the limit (a cell of a few brackets costs nothing)."""
    cap = depth_cap()
    try:
        value = (json.JSONDecoder(object_pairs_hook=_unique_pairs, **kw) if kw else _DECODER).decode(text)
    except RecursionError:  # past Python's own limit (about 1,000 levels)
        raise json.JSONDecodeError(too_deep(cap), text, 0) from None
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            raise
        raise json.JSONDecodeError(str(e), text, 0) from None
    if text.count("[") + text.count("{") > cap and deeper_than(value, cap):
        raise json.JSONDecodeError(too_deep(cap), text, 0)
    return value


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` refusing nesting deeper than the limit as a ``tomllib.TOMLDecodeError``."""
    import tomllib

    cap = depth_cap()
    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(too_deep(cap)) from None
    if deeper_than(value, cap):
        raise tomllib.TOMLDecodeError(too_deep(cap))
    return value


def loads_yaml(text: str) -> Any:
    """``yaml.safe_load`` refusing nesting deeper than the limit and a mapping naming a key twice, as
    a ``yaml.YAMLError`` (the depth is counted while the document is composed, before PyYAML
    recurses past it)."""
    import yaml

    cap = depth_cap()

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            if self.depth > cap:
                raise yaml.YAMLError(too_deep(cap))
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:  # the mapping's own keys (a merged `<<` may be overridden)
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    k = self.construct_object(key_node)
                    if k in seen:
                        raise yaml.YAMLError(
                            f"names the key {k!r} twice in one mapping (line {key_node.start_mark.line + 1}: "
                            "which one is meant?)"
                        )
                    seen.add(k)
            return super().construct_mapping(node, deep=deep)

    try:
        return yaml.load(text, Loader=Loader)  # a SafeLoader subclass: safe_load with two checks
    except RecursionError:
        raise yaml.YAMLError(too_deep(cap)) from None


# --------------------------------------------------------------------------- names


#: characters that show nothing or turn the text around: zero-width spaces and joiners, the byte
#: order mark, the soft hyphen, and the bidirectional marks, embeddings, overrides and isolates
INVISIBLE = frozenset(
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff"
)


def name_key(name: str) -> str:
    """How two ids or names compare: Unicode NFC, without zero-width or direction characters and
    without space around. Two spellings with the same key look the same on a screen."""
    return "".join(c for c in unicodedata.normalize("NFC", name) if c not in INVISIBLE).strip()


def lookalikes(names: Iterable[str], *, fold_case: bool = False) -> tuple[str, str] | None:
    """The first two different spellings in ``names`` with the same :func:`name_key` (and, with
    ``fold_case``, the same up to case), or None."""
    first: dict[str, str] = {}
    for n in names:
        k = name_key(n)
        k = k.casefold() if fold_case else k
        other = first.setdefault(k, n)
        if other != n:
            return other, n
    return None


def spelled(name: str) -> str:
    """A name as a message shows it: its repr with every invisible character escaped."""
    return "'" + "".join(f"\\u{ord(c):04x}" if c in INVISIBLE else c for c in name) + "'"
