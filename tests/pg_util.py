"""A real PostgreSQL server for the tests of the label store and the ledger on PostgreSQL.

``EVALCORE_TEST_PG_URL`` names a server to use (each test gets its own schema in that database).
Without it, the first test that needs PostgreSQL starts a throwaway cluster from Debian's
``postgresql`` package (``/usr/lib/postgresql/<version>/bin``): ``initdb`` into a temporary
directory and ``pg_ctl start`` listening only on a unix socket in that directory (as root both run
as the ``postgres`` user through ``runuser``, since initdb refuses root). One cluster serves the
whole pytest session: the controlling process names its directory (``pytest_configure`` in
conftest.py), the pytest-xdist workers share it under a file lock, each worker works in its own
database (``evalcore_<worker>``) and each test in its own schema of it; the controlling process
stops the cluster and removes the directory at the end (``pytest_unconfigure``).

Without the binaries the PostgreSQL tests skip, unless ``EVALCORE_REQUIRE_PG=1`` (CI), where they fail.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT_ENV = "EVALCORE_TEST_PG_ROOT"  # the session's cluster directory, named by the controlling process
_schemas = itertools.count(1)


def unavailable(why: str):
    if os.environ.get("EVALCORE_REQUIRE_PG") == "1":
        pytest.fail(f"PostgreSQL is required (EVALCORE_REQUIRE_PG=1) but {why}")
    pytest.skip(why)


def bindir() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian's layout first, then PATH)."""
    found = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    if found:
        return max(found, key=lambda b: int(b.parent.name) if b.parent.name.isdigit() else 0)
    which = shutil.which("initdb")
    return Path(which).parent if which else None


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def new_root() -> str:
    """The name of a directory for this session's cluster (named by the controlling process,
    made by the first test that needs it)."""
    return str(Path(tempfile.gettempdir()) / f"evalcore-pg-{os.getpid()}-{os.urandom(4).hex()}")


def _make_root(root: Path) -> None:
    """Create the cluster's directory, owned by the postgres user when we are root."""
    if os.geteuid() == 0:
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError:
            unavailable("there is no postgres user to run initdb as (Debian's postgresql package creates it)")
        root.mkdir(mode=0o700, exist_ok=True)
        os.chown(root, pw.pw_uid, pw.pw_gid)
    else:
        root.mkdir(mode=0o700, exist_ok=True)


def _start(root: Path, bins: Path) -> dict[str, str]:
    data = root / "data"
    log = root / "server.log"
    initdb = [str(bins / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8"]
    r = subprocess.run(_as_owner(initdb + ["--no-sync"]), capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"initdb failed: {r.stderr.strip() or r.stdout.strip()}")
    opts = f"-h '' -k {root} -c max_connections=200 -c shared_buffers=32MB"
    start = [str(bins / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o", opts, "start"]
    r = subprocess.run(_as_owner(start), capture_output=True, text=True)
    if r.returncode != 0:
        tail = log.read_text()[-2000:] if log.exists() else ""
        pytest.fail(f"pg_ctl start failed: {r.stderr.strip() or r.stdout.strip()} {tail}")
    return {"url": f"postgresql:///postgres?host={quote(str(root))}&user=postgres", "data": str(data)}


def server_url() -> str:
    """The URL of this worker's database on the session's server (started on first use)."""
    given = os.environ.get("EVALCORE_TEST_PG_URL")
    if given:
        return given
    bins = bindir()
    if bins is None:
        unavailable("the PostgreSQL binaries are not installed (apt-get install postgresql)")
    root = Path(os.environ.get(ROOT_ENV) or new_root())
    os.environ.setdefault(ROOT_ENV, str(root))
    _make_root(root)
    with open(root / "lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        info_file = root / "cluster.json"
        if info_file.exists():
            info = json.loads(info_file.read_text())
        else:
            info = _start(root, bins)
            info_file.write_text(json.dumps(info))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    db = f"evalcore_{worker}"
    import psycopg

    with psycopg.connect(info["url"], autocommit=True) as con:
        if con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone() is None:
            con.execute(f'CREATE DATABASE "{db}"')
    return info["url"].replace("postgresql:///postgres?", f"postgresql:///{db}?")


def with_schema(url: str, schema: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}options={quote(f'-csearch_path={schema}')}"


def new_schema(base: str) -> tuple[str, str]:
    """A fresh schema for one test: (its URL, its name)."""
    import psycopg

    name = f"t_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}_{next(_schemas)}"
    with psycopg.connect(base, autocommit=True) as con:
        con.execute(f'CREATE SCHEMA "{name}"')
    return with_schema(base, name), name


def drop_schema(base: str, name: str) -> None:
    import psycopg

    try:
        with psycopg.connect(base, autocommit=True) as con:
            con.execute("SET lock_timeout = '5s'")
            con.execute(f'DROP SCHEMA "{name}" CASCADE')
    except psycopg.Error:  # a connection still busy in it: the cluster is thrown away anyway
        pass


def stop(root: str | None) -> None:
    """Stop the session's cluster (if one was started) and remove its directory."""
    if not root or not Path(root).is_dir():
        return
    info_file = Path(root) / "cluster.json"
    bins = bindir()
    if info_file.exists() and bins is not None:
        data = json.loads(info_file.read_text())["data"]
        subprocess.run(_as_owner([str(bins / "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]),
                       capture_output=True)
    shutil.rmtree(root, ignore_errors=True)
