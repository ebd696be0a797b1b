"""The app container's entry point: Streamlit's secrets from the environment, then the app.

With the OpenID Connect variables set, it writes the ``[auth]`` section docs/ACCESS.md describes to
a secrets file only this user can read (outside every volume, so no secret lands in a backup) and
hands it to Streamlit with ``--secrets.files``; with none of them set, the app runs without login.
An empty variable counts as unset (compose.yaml passes each one, empty when not given); one missing
from a partial set, or an unreadable ``*_FILE``, is one line naming it on stderr and exit 2, before
anything is written.

  EVALCORE_OIDC_METADATA_URL     the provider's /.well-known/openid-configuration URL
  EVALCORE_OIDC_CLIENT_ID        the client registered at the provider
  EVALCORE_OIDC_CLIENT_SECRET    its secret (or EVALCORE_OIDC_CLIENT_SECRET_FILE: a file holding it)
  EVALCORE_OIDC_REDIRECT_URI     the public https URL + /oauth2callback
  EVALCORE_COOKIE_SECRET         signs Streamlit's login cookie (or EVALCORE_COOKIE_SECRET_FILE);
                                 the same on every app server behind one proxy

With ``EVALCORE_DB`` a ``postgresql://`` URL, the start waits until PostgreSQL accepts a connection
(at most ``EVALCORE_DB_WAIT`` seconds, 120 by default; then one line and exit 2): compose starts the
app beside its database, and not every compose tool waits for the database's health check.

Any arguments are passed on to ``streamlit run`` (``--server.port`` etc. after the defaults).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

AUTH = {  # secrets.toml's [auth] key -> the variable that gives it
    "server_metadata_url": "EVALCORE_OIDC_METADATA_URL",
    "client_id": "EVALCORE_OIDC_CLIENT_ID",
    "client_secret": "EVALCORE_OIDC_CLIENT_SECRET",
    "redirect_uri": "EVALCORE_OIDC_REDIRECT_URI",
    "cookie_secret": "EVALCORE_COOKIE_SECRET",
}


class ConfigError(Exception):
    pass


def read(name: str) -> str | None:
    """``$NAME``, else the contents of the file ``$NAME_FILE`` (stripped), else None (unset or empty)."""
    if os.environ.get(name):
        value = os.environ[name]
    elif os.environ.get(name + "_FILE"):
        path = os.environ[name + "_FILE"]
        try:
            with open(path, encoding="utf-8") as f:
                value = f.read().strip()
        except OSError as e:
            raise ConfigError(f"{name}_FILE: cannot read {path}: {e.strerror}") from None
    else:
        return None
    return value if value.strip() else None


def auth_section() -> str | None:
    """The ``[auth]`` section, or None when no OIDC variable is set."""
    values = {key: read(var) for key, var in AUTH.items()}
    given = [AUTH[k] for k, v in values.items() if v is not None]
    if not given:
        return None
    missing = [AUTH[k] for k, v in values.items() if v is None]
    if missing:
        raise ConfigError(f"{missing[0]} is not set or empty (the login needs it with {', '.join(given)})")
    if not str(values["redirect_uri"]).endswith("/oauth2callback"):
        raise ConfigError("EVALCORE_OIDC_REDIRECT_URI must be the app's public URL + /oauth2callback")
    lines = ["[auth]", *(f"{k} = {toml_string(str(v))}" for k, v in values.items()), ""]
    return "\n".join(lines)


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: backslash and quote escaped, control characters as \\uXXXX."""
    out = (f"\\u{ord(c):04X}" if ord(c) < 0x20 or ord(c) == 0x7F else "\\" + c if c in '"\\' else c for c in value)
    return '"' + "".join(out) + '"'


def db_wait() -> float:
    raw = os.environ.get("EVALCORE_DB_WAIT") or "120"
    try:
        return float(raw)
    except ValueError:
        raise ConfigError(f"EVALCORE_DB_WAIT must be a number of seconds, not {raw!r}") from None


def wait_for_db(url: str | None, timeout: float) -> None:
    """Return once the PostgreSQL server of ``url`` accepts a connection (at once for no URL or SQLite)."""
    if not url or not url.startswith(("postgresql://", "postgres://")):
        return
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=5).close()
            return
        except psycopg.OperationalError as e:
            if time.monotonic() >= deadline:
                why = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ConfigError(
                    f"EVALCORE_DB: PostgreSQL did not accept a connection in {timeout:g} s ({why})"
                ) from None
        time.sleep(1)


def streamlit_args(secrets: str | None) -> list[str]:
    args = [
        "streamlit",
        "run",
        "app.py",
        "--server.address",
        "0.0.0.0",
        "--server.port",
        "8501",
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--browser.gatherUsageStats",
        "false",
    ]
    if secrets is not None:
        fd, path = tempfile.mkstemp(prefix="evalcore-secrets-", suffix=".toml")  # mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(secrets)
        args += ["--secrets.files", path]
    return args + sys.argv[1:]


def main() -> None:
    try:
        secrets = auth_section()
        wait_for_db(os.environ.get("EVALCORE_DB"), db_wait())
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    args = streamlit_args(secrets)
    os.execvp(args[0], args)


if __name__ == "__main__":
    main()
