"""Typed errors of evalcore.

Every error that bad input can cause is an :class:`EvalcoreError`, raised in the core and turned
into one line at the edge (``evalcore`` prints ``error: <message>`` on stderr and exits 2; a page
shows ``st.error``). Anything else that escapes is a bug and keeps its traceback.

    EvalcoreError              one line: "<file>: <field>: <problem>"
    ├── FormatError            a file breaks the data contract (columns, types, keys, JSON)
    │   └── SchemaVersionError a file was written by a newer evalcore
    ├── NotFoundError          a suite, generation, run, session or item that is not there
    ├── PathEscapeError        an id or path that would leave the data or state directory
    ├── InputError             a command-line argument or an imported file is unusable
    ├── LabelError             a label that cannot be recorded
    └── StateError             a database or directory of the state cannot be used as it is
                               (damaged, missing beside its log, read-only, out of space)
"""

from __future__ import annotations

import errno
import re
from pathlib import Path

#: local path prefix -> how a user named it (a mirror of object storage -> its URL): a message
#: names the file as the user knows it (filled by evalcore.storage.remote)
PATH_ALIASES: dict[str, str] = {}


def _aliased(path: str) -> str:
    for local, shown in PATH_ALIASES.items():
        if path == local or path.startswith(local + "/"):
            return shown + path[len(local) :]
    return path


_LONG_RUN = re.compile(r"\S{201,}")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def one_line(text: str) -> str:
    """``text`` as one printable line: whitespace runs become one space, control and direction
    characters (a terminal's escape sequences, a right-to-left override) are shown escaped
    (``\\x1b``), and a run of more than 200 characters without a space is cut to its first 80
    and its length (a data value quoted in a message stays readable)."""
    text = _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )
    text = " ".join(text.split())
    return _LONG_RUN.sub(lambda m: f"{m.group()[:80]}... ({len(m.group()):,} characters)", text)


#: errno values of a failure of the machine, not of evalcore: read-only, no access, no space, not a
#: directory, an I/O error (the command line says them in one line and exits 2; a derived table's
#: build that meets one is remembered instead of retried, :mod:`evalcore.storage.derived`)
MACHINE_ERRNOS = frozenset(
    {errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT, errno.ENOTDIR, errno.EIO}
)


class EvalcoreError(Exception):
    """Base class: carries the file, the field and the problem, and renders them on one line."""

    def __init__(self, problem: str, *, file: str | Path | None = None, field: str | None = None):
        self.problem = one_line(str(problem))  # one line, always
        self.file = _aliased(str(file)) if file is not None else None
        self.field = one_line(field) if field is not None else None
        super().__init__(self.message)

    @property
    def message(self) -> str:
        parts = [p for p in (self.file, self.field) if p]
        return ": ".join(parts + [self.problem])

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.message


class FormatError(EvalcoreError):
    """A file does not follow the data contract."""


class SchemaVersionError(FormatError):
    """A file carries a schema_version newer than this evalcore reads."""


class NotFoundError(EvalcoreError):
    """Something named by id is not in the data or state directory."""


class PathEscapeError(EvalcoreError):
    """An id or a path would resolve outside the directory it must stay in."""


class InputError(EvalcoreError):
    """A command-line argument or an imported file cannot be used."""


class LabelError(EvalcoreError):
    """A label cannot be recorded (unknown item or criterion, bad value, missing reviewer)."""


class StateError(EvalcoreError):
    """The state directory or a database in it cannot be used as it is: damaged or not a
    database, missing beside its write-ahead log, read-only, unwritable or out of space. Nothing is
    written when it is raised."""


class DerivedTablesWarning(UserWarning):
    """A derived table could not be built for a reason of the machine (no space, no memory, a
    read-only state directory): the figures read the full data instead, with the same numbers,
    and the build is not tried again until the entity's files change
    (:func:`evalcore.storage.derived.expected_failure`). Given once per entity."""
