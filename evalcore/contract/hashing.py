"""Ids and content hashes of the data contract: what a valid id is, and the sha256 of a canonical JSON
form that makes two suites, two sets of outputs or two texts compare equal exactly when their
content does."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_ID_RE = re.compile(ID_PATTERN)


def is_valid_id(value: str) -> bool:
    """True for ids of 1-128 letters, digits, dot, dash and underscore, not starting with a dot
    or dash (so no id is ``..`` or a hidden file)."""
    return bool(_ID_RE.match(value or "")) and ".." not in value


def canonical_json(obj: Any) -> str:
    """The canonical JSON of ``obj`` that :func:`content_hash` hashes (sorted keys, no spaces)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def content_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys), as ``sha256:<hex16>``."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()[:16]


def text_hash(text: str) -> str:
    """sha256 of a text, as ``sha256:<hex16>`` (prompt templates, rendered prompts)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def outputs_hash(rows: Any) -> str:
    """A generation's ``outputs_hash``: content_hash over sorted (item_id, round, output), so
    equal hashes mean identical answers whatever the row order."""
    return content_hash(sorted([r["item_id"], int(r["round"]), r["output"]] for r in rows))


#: the columns of an item its suite's content hash covers, in this order
SUITE_HASH_KEYS = (
    "item_id",
    "input",
    "context",
    "reference",
    "must_have",
    "nice_to_have",
    "wrong_if",
    "expected_doc_ids",
)


def _suite_row(item: Any) -> list:
    return [item.get(k) for k in SUITE_HASH_KEYS]


def suite_hash(items: Any) -> str:
    """A suite's ``content_hash``: ids, inputs, context, references and requirement lists."""
    return content_hash(sorted((_suite_row(it) for it in items), key=lambda r: r[0]))


class SuiteHash:
    """:func:`suite_hash` of items given a batch at a time, already in item id order (the same
    value: the canonical JSON of the list of rows, streamed), so that a million items need not be
    held at once."""

    def __init__(self) -> None:
        self._h = hashlib.sha256(b"[")
        self._rows = 0

    def update(self, items: list[Any]) -> None:
        if items:
            text = ",".join(canonical_json(_suite_row(it)) for it in items)
            self._h.update((("," if self._rows else "") + text).encode("utf-8"))
            self._rows += len(items)

    def value(self) -> str:
        h = self._h.copy()
        h.update(b"]")
        return "sha256:" + h.hexdigest()[:16]
