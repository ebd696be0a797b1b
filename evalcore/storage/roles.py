"""Who may do what in the app: the roles file of the state directory and the identity provider's claims.

``<state>/roles.toml`` (optional; docs/ACCESS.md)::

    claim = "roles"                  # the ID-token claim that lists roles (default "roles"; "groups" is read too)
    default_roles = []               # roles of a logged-in user that neither the file nor a claim names
    require_login = ["adjudicator", "admin"]   # roles a typed name (no login configured) does not get

    [users."ann@example.org"]        # a verified email (its domain compares without case)
    roles = ["reviewer", "adjudicator"]

    [users."https://idp.example.org#248289761001"]   # ISSUER#SUB: the provider's subject, scoped by its issuer
    roles = ["grader"]
    sessions = ["blind-1"]           # the pairwise sessions a grader may grade

A login is known by verified claims only (OpenID Connect Core 1.0, sections 2, 5.1 and 5.7): its
issuer and subject (``iss``, ``sub``), and its ``email`` when ``email_verified`` is JSON true.
``preferred_username`` and ``name`` are shown, never matched. :func:`login_name` is the name a
login's judgments are recorded under (the verified email, else ``ISSUER#SUB``);
:func:`resolve_access` gives its roles: those of its entry in the file (``ISSUER#SUB`` first, then
the verified email) together with the known roles named by the claim (unknown values of a claim,
such as the other groups of a ``groups`` claim, are ignored); ``default_roles`` apply only when
neither gives one. Someone whose only role is ``grader`` may grade the sessions listed for them and
reach nothing else (:attr:`Access.grader_only`); any other role lifts that limit. Without a login,
:meth:`RolesFile.without_login` gives a typed name :data:`TYPED_NAME_ROLES` less ``require_login``.
:func:`load_roles` reads and checks the file (one :class:`evalcore.errors.FormatError` naming the
file and the field). Pure Python: the app calls these with ``st.user``'s claims.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalcore.contract.readers import loads_toml
from evalcore.errors import FormatError, LabelError

ROLES_FILE = "roles.toml"
ACCESS_ROLES = ("reviewer", "adjudicator", "grader", "admin")
TYPED_NAME_ROLES = ("reviewer", "adjudicator", "admin")  # a typed name without login, less require_login
DEFAULT_CLAIM = "roles"
SUBJECT_SEP = "#"  # ISSUER#SUB: an issuer has no fragment (OIDC Core section 2), so the first # ends it
_NAME_MAX = 80  # a reviewer name's limit (evalcore.pairwise.grading)
_SUB_MAX = 255  # OIDC Core section 2: a sub is at most 255 ASCII characters
_TOP_KEYS = {"claim", "default_roles", "require_login", "users"}
_USER_KEYS = {"roles", "sessions"}


def email_key(email: str) -> str | None:
    """An email as the roles file compares it: the local part exactly, the domain in lower case
    (RFC 5321 section 2.4); None when it is not ``LOCAL@DOMAIN`` without spaces or control characters."""
    local, at, domain = email.rpartition("@")
    if not (at and local and domain) or any(c.isspace() or not c.isprintable() for c in email):
        return None
    return f"{local}@{domain.lower()}"


def subject_key(issuer: str, sub: str) -> str | None:
    """``ISSUER#SUB``, or None when the issuer is not a URL without a fragment or the subject is
    not 1 to 255 printable characters without spaces."""
    if "://" not in issuer or SUBJECT_SEP in issuer or not 0 < len(sub) <= _SUB_MAX:
        return None
    if any(c.isspace() or not c.isprintable() for c in issuer + sub):
        return None
    return f"{issuer}{SUBJECT_SEP}{sub}"


def _user_key(key: str) -> str | None:
    """A ``[users."..."]`` key as claims are compared with it: ``ISSUER#SUB`` exactly, an email by :func:`email_key`."""
    issuer, sep, sub = key.partition(SUBJECT_SEP)
    if sep and "://" in issuer:
        return subject_key(issuer, sub)
    return email_key(key) if "://" not in key else None


@dataclass(frozen=True)
class UserEntry:
    """One ``[users."..."]`` table: roles and, for a grader, the sessions they may grade."""

    roles: tuple[str, ...]
    sessions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Access:
    """One login's standing: the name their judgments are recorded under, roles and sessions.
    ``login`` is False for a name typed without a login (:meth:`RolesFile.without_login`)."""

    name: str
    display: str
    roles: frozenset[str]
    sessions: tuple[str, ...] = ()
    login: bool = True
    require_login: tuple[str, ...] = ()

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

    def why_not(self, role: str) -> str | None:
        """None when this access has ``role``, else the one line that says why not."""
        if role in self.roles:
            return None
        if not self.login and role in self.require_login:
            return (
                f"the {role} role needs a login here (roles.toml: require_login), and this app has no login configured"
            )
        return f"{self.name} has no {role} role (roles.toml of the state directory or the provider's claims)"


@dataclass(frozen=True)
class RolesFile:
    """The parsed roles file (``present`` is False when the state directory has none); ``users``
    is keyed as written, :meth:`entry` compares as :func:`_user_key` says."""

    path: Path
    present: bool = False
    claim: str = DEFAULT_CLAIM
    default_roles: tuple[str, ...] = ()
    require_login: tuple[str, ...] = ()
    users: Mapping[str, UserEntry] = field(default_factory=dict)

    def entry(self, *keys: str | None) -> UserEntry | None:
        """The entry of the first key that the file names (keys as :func:`email_key` or
        :func:`subject_key` give them)."""
        by_key = {_user_key(k): v for k, v in self.users.items()}
        for k in keys:
            if k and k in by_key:
                return by_key[k]
        return None

    def without_login(self, name: str) -> Access:
        """A typed name's access when no login is configured: :data:`TYPED_NAME_ROLES` less
        ``require_login`` (the app trusts whoever types a name: docs/ACCESS.md), and no more than the
        file's entry for that name gives, when it has one (a name typed proves nothing, so the file
        can take roles away from it, never add them)."""
        entry = self.entry(email_key(name), name)
        roles = frozenset(
            r for r in TYPED_NAME_ROLES if r not in self.require_login and (entry is None or r in entry.roles)
        )
        return Access(name=name, display=name, roles=roles, login=False, require_login=self.require_login)


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


def _users(users_raw: Any, path: Path) -> dict[str, UserEntry]:
    if not isinstance(users_raw, dict):
        raise FormatError('must be tables [users."EMAIL"] or [users."ISSUER#SUB"]', file=path, field="users")
    users: dict[str, UserEntry] = {}
    seen: set[str] = set()
    for key, entry in users_raw.items():
        where = f"users.{key}"
        if not key.strip():
            raise FormatError("a user key is empty", file=path, field="users")
        norm = _user_key(key.strip())
        if norm is None:
            raise FormatError(
                "is neither an email nor ISSUER#SUB (a subject alone may name a user of another provider: write "
                '"https://idp.example.org#SUB")',
                file=path,
                field=where,
            )
        if norm in seen:
            raise FormatError(
                "names the same user twice (an email's domain compares without case)", file=path, field=where
            )
        seen.add(norm)
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
    return users


def parse_roles(text: str, path: Path | str) -> RolesFile:
    """Check the text of a roles file; every problem is one FormatError naming the file and field."""
    path = Path(path)
    try:
        raw = loads_toml(text)
    except tomllib.TOMLDecodeError as err:
        raise FormatError(f"is not valid TOML ({err})", file=path, field="toml") from None
    extra = sorted(set(raw) - _TOP_KEYS)
    if extra:
        raise FormatError(f"unknown key (expected {', '.join(sorted(_TOP_KEYS))})", file=path, field=extra[0])
    claim = raw.get("claim", DEFAULT_CLAIM)
    if not isinstance(claim, str) or not claim.strip():
        raise FormatError("must be the name of a claim", file=path, field="claim")
    return RolesFile(
        path=path,
        present=True,
        claim=claim.strip(),
        default_roles=_roles(raw.get("default_roles", []), path, "default_roles"),
        require_login=_roles(raw.get("require_login", []), path, "require_login"),
        users=_users(raw.get("users", {}), path),
    )


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


def acting(
    state_dir: Path | str | None, *roles: str, name: str = "", claims: Mapping[str, Any] | None = None
) -> Access:
    """Whoever acts, at the moment of a write: the login of ``claims`` (the provider's, as the app
    holds them) or, without one, the typed ``name``, with the roles the roles file gives *now* (read
    again: a role taken away a moment ago is gone). Refuses in one line (:class:`LabelError`) unless
    it has one of ``roles``. The core's writes call it (decide, undo, queue build, ledger, suite
    repair), so that no page or script can act on a role it no longer has."""
    rf = load_roles(state_dir) if state_dir is not None else RolesFile(path=Path(ROLES_FILE))
    acc = resolve_access(claims, rf) if claims is not None else rf.without_login(name)
    if not acc.has(*roles):
        why = acc.why_not(roles[0]) if len(roles) == 1 else f"{acc.name} has none of the roles {', '.join(roles)}"
        raise LabelError(str(why), field="role")
    return acc


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


def _text_claim(claims: Mapping[str, Any], name: str) -> str:
    value = claims.get(name)
    return value if isinstance(value, str) else ""


def verified_email(claims: Mapping[str, Any]) -> str | None:
    """The login's email as :func:`email_key` gives it, only when ``email_verified`` is JSON true."""
    if claims.get("email_verified") is not True:
        return None
    return email_key(_text_claim(claims, "email"))


def login_subject(claims: Mapping[str, Any]) -> str | None:
    """The login's ``ISSUER#SUB`` (:func:`subject_key`), or None without a usable ``iss`` and ``sub``."""
    return subject_key(_text_claim(claims, "iss"), _text_claim(claims, "sub"))


def _fit(key: str) -> str:
    """A key as a reviewer name (at most 80 characters): itself, or its start and a hash of all of it."""
    if len(key) <= _NAME_MAX:
        return key
    return f"{key[:55]}{SUBJECT_SEP}{hashlib.sha256(key.encode()).hexdigest()[:24]}"


def login_name(claims: Mapping[str, Any]) -> str:
    """The name a login's judgments are recorded under: its verified email, else ``ISSUER#SUB``
    (a key over 80 characters keeps its first 55 and a hash of the whole)."""
    key = verified_email(claims) or login_subject(claims)
    if key is None:
        raise FormatError(
            "the identity provider gave neither a verified email (email_verified true) nor an issuer and subject "
            "(iss, sub)",
            field="claims",
        )
    return _fit(key)


def resolve_access(claims: Mapping[str, Any], roles: RolesFile) -> Access:
    """A login's access from the provider's claims and the roles file."""
    name = login_name(claims)
    entry = roles.entry(login_subject(claims), verified_email(claims))
    got = list(claim_roles(claims, roles.claim)) + list(entry.roles if entry else ())
    if not got:
        got = list(roles.default_roles)
    shown = " ".join((_text_claim(claims, "name") or _text_claim(claims, "preferred_username")).split())
    return Access(
        name=name,
        display=shown[:_NAME_MAX] or name,
        roles=frozenset(got),
        sessions=entry.sessions if entry else (),
    )
