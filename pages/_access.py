"""Who is reviewing (:func:`identity`): from ``st.login`` when ``[auth]`` is configured in the
secrets, with roles from the verified claims and ``<state>/roles.toml`` (:func:`login_access`),
otherwise a name asked once per browser session and kept in the link, with the roles the roles
file leaves to a typed name (:func:`typed_access`; docs/ACCESS.md); the line every page shows
without login (:func:`trust_banner`); and the pages shown instead of the app when login stands in
the way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

import evalcore
from pages._text import md_escape
from pages._ui import qp, set_qp, store

NAME_KEY = "_ui_name"  # the name given in this browser session (no login configured)
NAME_EPOCH = "_ui_name_epoch"  # bumped by "Change name": a fresh input; a late commit of the old one is ignored
NAME_PARAM = "reviewer"  # the query parameter that keeps the name across a reload
NAME_MAX = 80


@dataclass(frozen=True)
class Identity:
    """Who is reviewing: ``name`` is what judgments and decisions are recorded under."""

    name: str
    display: str
    login: bool  # True when it comes from st.login, False for a name typed in this browser session
    roles: frozenset[str]
    sessions: tuple[str, ...] = ()  # a grader-only login's assigned pairwise sessions

    @property
    def grader_only(self) -> bool:
        return self.roles == {"grader"}

    def may_grade(self, session_id: str) -> bool:
        return session_id in self.sessions if self.grader_only else bool(self.roles)


def login_configured() -> bool:
    """True when the secrets have an ``[auth]`` section (Streamlit's st.login is then used)."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:  # no secrets file at all (StreamlitSecretNotFoundError is one)
        return False


def claims() -> dict[str, Any] | None:
    """The login's claims as the core's writes check them at the moment they act (evalcore's
    ``acting``), or None without a login (the core then reads the typed name)."""
    if not login_configured() or not st.user.is_logged_in:
        return None
    return dict(st.user.to_dict())


def login_access() -> evalcore.Access | None:
    """The logged-in user's access (claims of st.user with ``<state>/roles.toml``), or None when
    login is not configured or nobody is logged in. A bad roles file raises its FormatError."""
    if not login_configured() or not st.user.is_logged_in:
        return None
    claims = {k: v for k, v in st.user.to_dict().items()}
    return evalcore.resolve_access(claims, evalcore.load_roles(store().state))


def typed_access(name: str = "") -> evalcore.Access:
    """Without login: the access of a typed name, the roles the roles file leaves to it
    (``require_login`` takes some away). A bad roles file raises its FormatError."""
    return evalcore.load_roles(store().state).without_login(name)


def shown(acc: evalcore.Access) -> str:
    """How a login is named on the page: its display name, with the name its judgments are
    recorded under when that differs (a display name is the provider's free text, never a key)."""
    return acc.display if acc.display == acc.name else f"{acc.display} ({acc.name})"


def _clean_name(value: Any) -> str:
    return " ".join(str(value or "").split())[:NAME_MAX]


def _take_name(key: str, epoch: int) -> None:
    """on_change of the name input: keep the name for this browser session and in the link. A
    commit from an input of an earlier epoch (or once a name is set) changes nothing."""
    if epoch != st.session_state.get(NAME_EPOCH, 0) or st.session_state.get(NAME_KEY):
        return
    name = _clean_name(st.session_state.get(key))
    if name:
        st.session_state[NAME_KEY] = name
        set_qp(**{NAME_PARAM: name})


def _forget_name() -> None:
    st.session_state.pop(NAME_KEY, None)
    st.session_state[NAME_EPOCH] = st.session_state.get(NAME_EPOCH, 0) + 1
    set_qp(**{NAME_PARAM: None})


def _local_name() -> str:
    """The typed name of this browser session; a link's ``?reviewer=`` (a reload, a deep link)
    sets it."""
    linked = _clean_name(qp(NAME_PARAM))
    if linked and st.session_state.get(NAME_KEY) != linked:
        st.session_state[NAME_KEY] = linked
    return str(st.session_state.get(NAME_KEY) or "")


def current_access() -> evalcore.Access | None:
    """Who acts, read again from the login (or the typed name) and the roles file at this moment,
    without drawing anything (for callbacks): None when nobody with a role is known or the roles
    file is broken."""
    try:
        acc = login_access() if login_configured() else typed_access(_local_name())
    except evalcore.EvalcoreError:
        return None
    return acc if acc is not None and acc.name and acc.roles else None


def current_name() -> str:
    """The reviewer's name without drawing anything (for callbacks): the login's name, else the
    name typed in this browser session, else ``""``."""
    acc = current_access()
    return acc.name if acc is not None else ""


def log_in_button(key: str = "login") -> None:
    st.button("Log in", key=key, type="primary", on_click=st.login)


def identity(page_key: str, *, verb: str = "Reviewing", label: str = "Your name") -> Identity | None:
    """Who is reviewing, drawn at the top of a page; None until someone is known (stop the page).

    * ``[auth]`` configured: the logged-in user, named by the provider's claims (no text box),
      with their roles; a log-in button while nobody is logged in.
    * otherwise: a name asked once per browser session. After Enter the text box is replaced by
      "VERB as NAME" and a "Change name" button, so the focus is not in a text field and no
      shortcut key can reach it; the name is kept in the link (``?reviewer=``) across a reload.
    """
    if login_configured():
        acc = login_access()
        if acc is None:
            st.info("Log in to continue.")
            log_in_button(key=f"{page_key}_login")
            return None
        st.markdown(f"{verb} as **{md_escape(shown(acc))}**")
        return Identity(acc.name, acc.display, True, acc.roles, acc.sessions)
    name = _local_name()
    if name:
        set_qp(**{NAME_PARAM: name})  # a page switch drops the query parameters: put it back
        c_who, c_change = st.columns([4, 1], vertical_alignment="center")
        c_who.markdown(f"{verb} as **{md_escape(name)}**")
        c_change.button("Change name", key=f"{page_key}_change_name", on_click=_forget_name)
        return Identity(name, name, False, typed_access(name).roles)
    epoch = int(st.session_state.get(NAME_EPOCH, 0))
    key = f"{page_key}_name_{epoch}"
    st.text_input(
        label,
        key=key,
        max_chars=NAME_MAX,
        placeholder="who is reviewing (press Enter)",
        on_change=_take_name,
        args=(key, epoch),
    )
    return None


def refusal() -> None:
    """What every page a role may not open shows instead of the page."""
    st.title("Not available")
    st.warning("This page is not available to your role.")


def login_refusal() -> None:
    """What a page shows without login when the roles file requires a login for every role that may open it."""
    st.title("Not available")
    st.warning(
        "This page needs a login: roles.toml requires one for "
        f"{', '.join(typed_access().require_login)}, and this app has no login configured (docs/ACCESS.md)."
    )


def trust_banner(acc: evalcore.Access) -> None:
    """The line every page shows without login: the app trusts whoever types a name, with the
    roles the roles file leaves to it (``acc``: :func:`typed_access`)."""
    kept = f"; {', '.join(acc.require_login)} need a login (roles.toml)" if acc.require_login else ""
    roles = ", ".join(r for r in evalcore.ACCESS_ROLES if r in acc.roles) or "none"
    st.caption(
        "No login is configured: this app trusts whoever types a name. Anyone may act under any name, "
        f"with the roles {roles}{kept}. docs/ACCESS.md says how to require a login."
    )


def login_page() -> None:
    """The only page while login is configured and nobody is logged in."""
    st.title("evalcore")
    st.info("Log in to continue.")
    log_in_button()


def no_role_page() -> None:
    """The only page of a login that neither the roles file nor a claim gives a role: it names
    the key the roles file would list it under."""
    st.title("No role")
    acc = login_access()
    as_who = f" as {shown(acc)}" if acc is not None else ""
    st.warning(
        md_escape(
            f"You are logged in{as_who} but have no role here: an admin gives you one in roles.toml of the state "
            "directory, under your verified email or ISSUER#SUB (docs/ACCESS.md)."
        )
    )
    st.button("Log out", key="no_role_logout", on_click=st.logout)
