"""Who may do what in the app: the roles file of the state directory and the identity provider's claims.

``<state>/roles.toml`` (optional; docs/ACCESS.md)::

    claim = "roles"                  # the ID-token claim that lists roles (default "roles"; "groups" is read too)
    default_roles = []               # roles of a logged-in user that neither the file nor a claim names

    [users."ann@example.org"]        # a login's email (any case) or its subject ("sub")
    roles = ["reviewer", "adjudicator"]

    [users."gus@example.org"]
    roles = ["grader"]
    sessions = ["blind-1"]           # the pairwise sessions a grader may grade

The roles are :data:`ACCESS_ROLES`. A user's roles are those of their entry in the file together
with the known roles named by the claim (unknown values of a claim, such as the other groups of a
``groups`` claim, are ignored); ``default_roles`` apply only when neither gives one. Someone whose
only role is ``grader`` may grade the sessions listed for them and reach nothing else
(:attr:`Access.grader_only`); any other role lifts that limit. :func:`load_roles` reads and checks
the file (one :class:`evalcore.errors.FormatError` naming the file and the field), and
:func:`resolve_access` combines it with the claims of one login. Pure Python: the app calls these
with ``st.user``'s claims.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.errors import FormatError

ROLES_FILE = "roles.toml"
ACCESS_ROLES = ("reviewer", "adjudicator", "grader", "admin")
DEFAULT_CLAIM = "roles"
_NAME_MAX = 80
_TOP_KEYS = {"claim", "default_roles", "users"}
_USER_KEYS = {"roles", "sessions"}


@dataclass(frozen=True)
class UserEntry:
    """One ``[users."..."]`` table: roles and, for a grader, the sessions they may grade."""

    roles: tuple[str, ...]
    sessions: tuple[str, ...] = ()


@dataclass(frozen=True)
class RolesFile:
    """The parsed roles file (``present`` is False when the state directory has none)."""

    path: Path
    present: bool = False
    claim: str = DEFAULT_CLAIM
    default_roles: tuple[str, ...] = ()
    users: Mapping[str, UserEntry] = field(default_factory=dict)

    def entry(self, *keys: str | None) -> UserEntry | None:
        """The entry of the first key that the file names (emails compare without case)."""
        by_lower = {k.lower(): v for k, v in self.users.items()}
        for k in keys:
            if k and k.strip().lower() in by_lower:
                return by_lower[k.strip().lower()]
        return None


@dataclass(frozen=True)
class Access:
    """One login's standing: the name their judgments are recorded under, roles and sessions."""

    name: str
    display: str
    roles: frozenset[str]
    sessions: tuple[str, ...] = ()

    @property
    def grader_only(self) -> bool:
        """True when the only role is ``grader``: the grading page of :attr:`sessions`, nothing else."""
        return self.roles == {"grader"}

    def has(self, *roles: str) -> bool:
        return bool(self.roles & set(roles))

    def may_grade(self, session_id: str) -> bool:
        """A grader-only login grades its assigned sessions; any other role grades any session."""
        if not self.roles:
            return False
        return session_id in self.sessions if self.grader_only else True


def _strings(value: Any, path: Path, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise FormatError("must be a list of non-empty strings", file=path, field=where)
    return tuple(dict.fromkeys(v.strip() for v in value))


def _roles(value: Any, path: Path, where: str) -> tuple[str, ...]:
    out = _strings(value, path, where)
    bad = [r for r in out if r not in ACCESS_ROLES]
    if bad:
        raise FormatError(f"unknown role {bad[0]!r} (one of {', '.join(ACCESS_ROLES)})", file=path, field=where)
    return out


def parse_roles(text: str, path: Path | str) -> RolesFile:
    """Check the text of a roles file; every problem is one FormatError naming the file and field."""
    path = Path(path)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise FormatError(f"is not valid TOML ({err})", file=path, field="toml") from None
    extra = sorted(set(raw) - _TOP_KEYS)
    if extra:
        raise FormatError(f"unknown key (expected {', '.join(sorted(_TOP_KEYS))})", file=path, field=extra[0])
    claim = raw.get("claim", DEFAULT_CLAIM)
    if not isinstance(claim, str) or not claim.strip():
        raise FormatError("must be the name of a claim", file=path, field="claim")
    default_roles = _roles(raw.get("default_roles", []), path, "default_roles")
    users_raw = raw.get("users", {})
    if not isinstance(users_raw, dict):
        raise FormatError('must be tables [users."EMAIL"]', file=path, field="users")
    users: dict[str, UserEntry] = {}
    seen: set[str] = set()
    for key, entry in users_raw.items():
        where = f"users.{key}"
        if not key.strip():
            raise FormatError("a user key is empty", file=path, field="users")
        if key.strip().lower() in seen:
            raise FormatError("names the same user twice (emails compare without case)", file=path, field=where)
        seen.add(key.strip().lower())
        if not isinstance(entry, dict):
            raise FormatError("must be a table with roles = [...]", file=path, field=where)
        unknown = sorted(set(entry) - _USER_KEYS)
        if unknown:
            raise FormatError("unknown key (expected roles, sessions)", file=path, field=f"{where}.{unknown[0]}")
        if "roles" not in entry:
            raise FormatError("is missing", file=path, field=f"{where}.roles")
        roles = _roles(entry["roles"], path, f"{where}.roles")
        sessions = _strings(entry.get("sessions", []), path, f"{where}.sessions")
        if sessions and "grader" not in roles:
            raise FormatError("sessions are assigned to graders only", file=path, field=f"{where}.sessions")
        users[key.strip()] = UserEntry(roles=roles, sessions=sessions)
    return RolesFile(path=path, present=True, claim=claim.strip(), default_roles=default_roles, users=users)


def load_roles(state_dir: Path | str) -> RolesFile:
    """The roles file of a state directory, checked; an empty RolesFile when there is none."""
    path = Path(state_dir) / ROLES_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RolesFile(path=path)
    except (OSError, UnicodeDecodeError) as err:
        raise FormatError(f"cannot be read ({err})", file=path, field="toml") from None
    return parse_roles(text, path)


def claim_roles(claims: Mapping[str, Any], claim: str = DEFAULT_CLAIM) -> tuple[str, ...]:
    """The known roles named by a claim (a list, or a string of names separated by spaces or
    commas) and by a ``groups`` claim; other values are ignored."""
    out: list[str] = []
    for name in dict.fromkeys((claim, "groups")):
        value = claims.get(name)
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        if isinstance(value, Sequence) and not isinstance(value, str):
            out += [v.strip() for v in value if isinstance(v, str) and v.strip() in ACCESS_ROLES]
    return tuple(dict.fromkeys(out))


def login_name(claims: Mapping[str, Any]) -> str:
    """The name a login's judgments are recorded under: its email, else preferred_username, else sub."""
    for key in ("email", "preferred_username", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:_NAME_MAX]
    raise FormatError("the identity provider gave no email, preferred_username or sub", field="claims")


def resolve_access(claims: Mapping[str, Any], roles: RolesFile) -> Access:
    """A login's access from the provider's claims and the roles file."""
    name = login_name(claims)
    sub = claims.get("sub") if isinstance(claims.get("sub"), str) else None
    entry = roles.entry(claims.get("email") if isinstance(claims.get("email"), str) else None, sub, name)
    got = list(claim_roles(claims, roles.claim)) + list(entry.roles if entry else ())
    if not got:
        got = list(roles.default_roles)
    display = claims.get("name")
    return Access(
        name=name,
        display=" ".join(display.split())[:_NAME_MAX] if isinstance(display, str) and display.strip() else name,
        roles=frozenset(got),
        sessions=entry.sessions if entry else (),
    )
