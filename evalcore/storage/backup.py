"""The state directory's backup and restore (``evalcore state backup OUT`` / ``restore IN``).

A backup is one tar archive (gzip-compressed when its name ends in ``.gz`` or ``.tgz``):

* ``state/...``: the state directory's files. Each SQLite database (a file starting with SQLite's
  header: the label store, the ledger, pairwise choices, suite looks) is copied through SQLite's
  online backup API (:meth:`sqlite3.Connection.backup`, in one step on a read transaction of its
  own): one committed moment of that database, taken while reviewers keep writing (WAL: a reader
  never blocks a writer). Its ``-wal`` and ``-shm`` are not copied: the snapshot holds what they held.
  Every other file is read through one descriptor opened once: evalcore writes those files under a
  temporary name and renames them into place (:mod:`evalcore.storage.files`), so the descriptor
  reads one whole version of each; an append-only journal of a run in progress is copied as the
  records written when it was read (a last line cut short is what a killed run leaves, and resuming
  drops it, :mod:`evalcore.llm.engine`). Files are consistent one by one, not with each other at
  one instant: a queue built between two files' reads may be in one and not the other, as after a
  crash. Left out (:data:`LEFT_OUT`): products rebuilt by their first reader, the index of an
  object-storage data directory, records of running processes, and temporary files of writes in
  progress.
* ``postgres/evalcore.dump``: with the label store and ledger on PostgreSQL (``EVALCORE_DB`` /
  ``--db``), ``pg_dump --format=custom`` of the URL's schema (one repeatable-read snapshot of every
  table at once; writers are not blocked), by the newest ``pg_dump`` installed.
* ``keys/...``: the pairwise sessions' keys, only when asked (``--keys DIR``). Keys unblind open
  sessions: a backup holding them must be kept apart from the state's backups, as the keys are
  kept apart from the state.
* ``manifest.json`` (last): what, when, by which versions, and the size and sha256 of every other
  member.

:func:`restore_state` checks the archive (a tar, the manifest's format, every member named in it
with its sha256) before it writes anything, refuses a non-empty state directory or database
unless ``force``, writes the state into a temporary directory beside the target and renames it
into place; a PostgreSQL dump is restored in one transaction (``pg_restore --single-transaction``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from evalcore.errors import InputError, LabelError, StateError
from evalcore.storage.db import mask
from evalcore.storage.files import atomic_file, fsync_path, replace_directory
from evalcore.storage.integrity import SQLITE_HEADER, check_database
from evalcore.storage.paths import links_inside, utcnow

FORMAT = "evalcore-state-backup"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
DUMP = "postgres/evalcore.dump"
#: top-level entries of the state directory a backup leaves out, and why
LEFT_OUT = {
    "derived": "derived products (sufficient statistics, pair tables, queue copies): rebuilt by their first reader",
    "remote": "the index of an object-storage data directory: rebuilt from the bucket",
    "jobs": "records of processes running on this machine (queue builds in progress)",
}
_SIDE_FILES = ("-wal", "-shm", "-journal")  # a database's log, index and rollback journal
_CHUNK = 1 << 20


# --------------------------------------------------------------------------- backup


def backup_state(state: Path, out: Path, *, url: str | None = None, keys: Path | None = None) -> dict[str, Any]:
    """Write a backup of ``state`` (and of the PostgreSQL schema of ``url``, and of the keys
    directory ``keys`` when given) to the new file ``out``; returns the manifest."""
    state, out = Path(state), Path(out)
    if not state.is_dir():
        raise StateError("is not a state directory: there is nothing to back up", file=state, field="--state")
    links_inside(state)
    if os.path.lexists(out):
        raise InputError("exists: a backup is written to a new file, never over one", file=out, field="OUT")
    for root, what in ((state, "state"), (keys, "keys")):
        if root is not None and out.resolve().is_relative_to(Path(root).resolve()):
            raise InputError(f"is inside the {what} directory it would back up", file=out, field="OUT")
    if keys is not None and not Path(keys).is_dir():
        raise InputError("is not a directory of pairwise keys", file=keys, field="--keys")
    out.parent.mkdir(parents=True, exist_ok=True)
    files: list[dict[str, Any]] = []
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created_at": utcnow().isoformat(),
        "versions": _versions(),
        "state": str(state.resolve()),
        "database": {"kind": "postgres" if url else "sqlite"},
        "schema_versions": {},
        "left_out": LEFT_OUT,
        "keys": None,
        "files": files,
    }
    with (
        tempfile.TemporaryDirectory(dir=out.parent, prefix=".backup-") as scratch,
        atomic_file(out) as tmp,
        tarfile.open(tmp, _mode(out, "w")) as tar,
    ):
        for path, rel in _state_files(state):
            _add(tar, files, manifest, path, f"state/{rel}", Path(scratch))
        if url:
            dump = Path(scratch) / "evalcore.dump"
            manifest["database"] = pg_dump(url, dump)
            _add_file(tar, files, dump, DUMP, "pg_dump")
        if keys is not None:
            for path, rel in _tree(Path(keys)):
                _add_file(tar, files, path, f"keys/{rel}", "copy")
            manifest["keys"] = {
                "from": str(Path(keys).resolve()),
                "files": sum(f["path"].startswith("keys/") for f in files),
            }
        data = json.dumps(manifest, indent=1).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mtime, info.mode = len(data), int(utcnow().timestamp()), 0o600
        tar.addfile(info, io.BytesIO(data))
    return manifest


def _mode(path: Path, rw: str) -> Any:
    gz = path.name.endswith((".gz", ".tgz"))
    return f"{rw}:gz" if gz else f"{rw}:"


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {"evalcore": version("evalcore"), "python": platform.python_version(), "sqlite": sqlite3.sqlite_version}


def _tree(root: Path) -> Iterator[tuple[Path, str]]:
    """Every regular file under ``root`` (links not followed), in path order, with its relative name."""
    for top, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            p = Path(top) / name
            if p.is_file() and not p.is_symlink():
                yield p, p.relative_to(root).as_posix()


def _state_files(state: Path) -> Iterator[tuple[Path, str]]:
    """The state's files a backup holds: not :data:`LEFT_OUT`, no database's side files, no
    temporary file of a write in progress (a name starting with a dot)."""
    for p, rel in _tree(state):
        parts = rel.split("/")
        if parts[0] in LEFT_OUT or any(part.startswith(".") for part in parts):
            continue
        if rel.endswith(_SIDE_FILES) and _is_sqlite(state / rel.rsplit("-", 1)[0]):
            continue
        yield p, rel


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def _add(tar: tarfile.TarFile, files: list, manifest: dict, path: Path, name: str, scratch: Path) -> None:
    if not _is_sqlite(path):
        _add_file(tar, files, path, name, "copy")
        return
    snap = scratch / "snapshot.sqlite"
    version = sqlite_snapshot(path, snap)
    if version is not None:
        manifest["schema_versions"][name] = version
    _add_file(tar, files, snap, name, "sqlite online backup")
    snap.unlink()


def sqlite_snapshot(src: Path, dst: Path) -> str | None:
    """Copy the database ``src`` to the new file ``dst`` through SQLite's online backup API, in one
    step (one committed moment; writers go on meanwhile); returns its ``meta`` schema_version, if
    it has one. A damaged ``src`` is refused in one line (:func:`check_database`)."""
    check_database(src)
    source = sqlite3.connect(f"file:{quote(str(src))}?mode=ro", uri=True, timeout=30)
    target = sqlite3.connect(dst)
    try:
        source.backup(target)
        try:
            row = target.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError:  # (no meta table: the ledger)
            row = None
    except sqlite3.Error as e:
        raise StateError(f"cannot be backed up: {e}", file=src) from None
    finally:
        source.close()
        target.close()
    return None if row is None else str(row[0])


class _Hashing:
    """A reader that hashes what passes through it."""

    def __init__(self, f: IO[bytes]):
        self.f, self.sha = f, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        b = self.f.read(n)
        self.sha.update(b)
        return b


def _add_file(tar: tarfile.TarFile, files: list, path: Path, name: str, how: str) -> None:
    """Add the file at ``path`` as ``name``, read through one descriptor (one version of it)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        info = tarfile.TarInfo(name)
        info.size, info.mtime, info.mode = st.st_size, int(st.st_mtime), 0o600
        reader = _Hashing(f)
        tar.addfile(info, reader)
    files.append({"path": name, "bytes": info.size, "sha256": reader.sha.hexdigest(), "how": how})


def stored_version(target: Path | str) -> str | None:
    """The ``meta`` schema_version a store holds (a SQLite file, or a PostgreSQL URL's schema),
    read without opening it for writing; None where there is no store or no version."""
    if isinstance(target, str):
        import psycopg

        try:
            with psycopg.connect(target, autocommit=True, connect_timeout=10) as con:
                if con.execute("SELECT to_regclass('meta')").fetchone() == (None,):
                    return None
                row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except psycopg.Error as e:
            raise LabelError(
                f"cannot connect to PostgreSQL: {str(e).strip().splitlines()[0]}", file=mask(target)
            ) from None
        return None if row is None else str(row[0])
    if not check_database(Path(target)):
        return None
    lite = sqlite3.connect(f"file:{quote(str(target))}?mode=ro", uri=True, timeout=30)
    try:
        row = lite.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # (no meta table)
        row = None
    finally:
        lite.close()
    return None if row is None else str(row[0])


# --------------------------------------------------------------------------- PostgreSQL


def pg_bin(name: str) -> Path:
    """The newest installed PostgreSQL's ``name`` (Debian's layout first, then PATH)."""
    found = [p for p in Path("/usr/lib/postgresql").glob(f"*/bin/{name}") if p.parent.parent.name.isdigit()]
    if found:
        return max(found, key=lambda p: int(p.parent.parent.name))
    which = shutil.which(name)
    if which is None:
        raise StateError(f"{name} is not installed (Debian: apt-get install postgresql-client)", field="--db")
    return Path(which)


def _pg_target(url: str) -> tuple[str, dict[str, str], str, int]:
    """(conninfo without the password, environment with it, the URL's schema, server version)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(url)
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as con:
            row = con.execute("SELECT current_schema(), current_setting('server_version_num')::int").fetchone()
    except psycopg.Error as e:
        raise LabelError(
            f"cannot connect to PostgreSQL: {str(e).strip().splitlines()[0]}", file=mask(url), field="--db"
        ) from None
    assert row is not None
    env = dict(os.environ)
    password = params.pop("password", None)
    if password:
        env["PGPASSWORD"] = str(password)
    return make_conninfo(**{k: str(v) for k, v in params.items()}), env, str(row[0]), int(row[1])


def _run(cmd: list[str], env: dict[str, str], url: str, what: str) -> None:
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        lines = [x for x in (r.stderr or r.stdout).strip().splitlines() if x.strip()] or [f"exit {r.returncode}"]
        raise StateError(f"{what} failed: {lines[0]}", file=mask(url), field="--db")


def pg_dump(url: str, out: Path) -> dict[str, Any]:
    """``pg_dump --format=custom`` of the schema ``url`` works in, to ``out``."""
    conninfo, env, schema, server = _pg_target(url)
    exe = pg_bin("pg_dump")
    client = int(exe.parent.parent.name) if exe.parent.parent.name.isdigit() else None
    if client is not None and client < server // 10000:
        raise StateError(
            f"{exe} ({client}) is older than the server ({server // 10000}): install a newer client", field="--db"
        )
    cmd = [
        str(exe),
        "--format=custom",
        "--no-owner",
        "--no-privileges",
        f"--schema={schema}",
        "--file",
        str(out),
        conninfo,
    ]
    _run(cmd, env, url, "pg_dump")
    return {"kind": "postgres", "url": mask(url), "schema": schema, "server_version": server, "pg_dump": str(exe)}


def _pg_objects(url: str) -> set[str]:
    """Tables of the URL's schema (a restore refuses a schema that holds any, unless forced)."""
    import psycopg

    with psycopg.connect(url, autocommit=True, connect_timeout=10) as con:
        rows = con.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        ).fetchall()
    return {r[0] for r in rows}


def pg_restore(url: str, dump: Path, schema: str, force: bool) -> None:
    """Restore ``dump`` (of ``schema``) into the database of ``url``, in one transaction."""
    conninfo, env, target, _ = _pg_target(url)
    if target != schema:
        raise InputError(
            f"the backup's tables are in the schema {schema!r}, and this URL works in {target!r}: restore into a URL "
            f"whose search path is {schema!r}",
            file=mask(url),
            field="--db",
        )
    have = _pg_objects(url)
    if have and not force:
        raise StateError(
            f"already holds tables ({', '.join(sorted(have)[:4])}): restore into an empty database, or give --force "
            "to replace them",
            file=mask(url),
            field="--db",
        )
    exe = str(pg_bin("pg_restore"))
    toc = subprocess.run([exe, "--list", str(dump)], capture_output=True, text=True)
    if toc.returncode != 0:
        raise StateError(f"pg_restore --list failed: {toc.stderr.strip()[:200]}", file=dump)
    # the schema itself exists already (the URL works in it): its entry and comment are left out
    keep = [line for line in toc.stdout.splitlines() if not _schema_entry(line, schema)]
    listed = dump.with_name("toc.list")
    listed.write_text("\n".join(keep) + "\n")
    cmd = [exe, "--single-transaction", "--no-owner", "--no-privileges", "--exit-on-error", "--use-list", str(listed)]
    if have:
        cmd += ["--clean", "--if-exists"]
    _run([*cmd, "--dbname", conninfo, str(dump)], env, url, "pg_restore")


def _schema_entry(line: str, schema: str) -> bool:
    """Whether a line of ``pg_restore --list`` creates or comments on the schema ``schema``."""
    words = line.split(";", 1)[-1].split()
    return words[2:5] == ["SCHEMA", "-", schema] or words[2:6] == ["COMMENT", "-", "SCHEMA", schema]


# --------------------------------------------------------------------------- restore


def _bad(src: Path, problem: str) -> InputError:
    return InputError(f"is not a whole evalcore state backup: {problem}", file=src, field="IN")


def read_manifest(src: Path) -> tuple[tarfile.TarFile, dict[str, Any]]:
    """The open archive and its manifest, after checking the archive's shape: a tar whose members
    are regular files named in the manifest (and the manifest itself), nothing else."""
    src = Path(src)
    if not src.is_file():
        raise InputError("is not a file", file=src, field="IN")
    try:
        tar = tarfile.open(src, "r:*")
        members = tar.getmembers()
    except (tarfile.TarError, OSError, EOFError) as e:
        raise _bad(src, f"not a readable tar archive ({e})") from None
    try:
        names = [m.name for m in members]
        if MANIFEST not in names:
            raise _bad(src, f"it has no {MANIFEST}")
        f = tar.extractfile(MANIFEST)
        manifest = json.loads(f.read()) if f is not None else None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise _bad(src, f"its {MANIFEST} is not an {FORMAT} manifest")
        if not isinstance(manifest.get("format_version"), int) or manifest["format_version"] > FORMAT_VERSION:
            raise _bad(src, f"format_version {manifest.get('format_version')!r}; this evalcore reads {FORMAT_VERSION}")
        listed = {f["path"]: f for f in manifest.get("files", [])}
        for m in members:
            if m.name == MANIFEST:
                continue
            if not m.isfile() or m.name not in listed or not _safe(m.name):
                raise _bad(src, f"member {m.name!r} is not a file its manifest lists")
        missing = sorted(set(listed) - set(names))
        if missing:
            raise _bad(src, f"{missing[0]} is listed in its manifest but not in the archive (cut short?)")
    except (tarfile.TarError, OSError, EOFError, ValueError, KeyError, TypeError) as e:
        tar.close()
        raise _bad(src, f"unreadable ({e})") from None
    except BaseException:
        tar.close()
        raise
    return tar, manifest


def _safe(name: str) -> bool:
    parts = name.split("/")
    return parts[0] in ("state", "keys", "postgres") and len(parts) > 1 and all(p not in ("", ".", "..") for p in parts)


def _extract(tar: tarfile.TarFile, manifest: dict, src: Path, prefix: str, into: Path) -> int:
    """Write the members under ``prefix`` into ``into``, checking each one's size and sha256."""
    n = 0
    for entry in manifest["files"]:
        name = entry["path"]
        if not name.startswith(prefix):
            continue
        dst = into / name[len(prefix) :]
        dst.parent.mkdir(parents=True, exist_ok=True)
        sha, size = hashlib.sha256(), 0
        try:
            f = tar.extractfile(name)
            assert f is not None
            with f, open(dst, "wb") as out:
                while chunk := f.read(_CHUNK):
                    sha.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
        except (tarfile.TarError, OSError, EOFError) as e:
            raise _bad(src, f"{name} cannot be read ({e})") from None
        if size != entry["bytes"] or sha.hexdigest() != entry["sha256"]:
            raise _bad(
                src,
                f"{name} does not match its manifest (sha256 {sha.hexdigest()[:16]}..., expected {entry['sha256'][:16]}...)",
            )
        n += 1
    return n


def _umask() -> int:
    mask_ = os.umask(0o022)
    os.umask(mask_)
    return mask_


def _empty(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


def restore_state(
    src: Path, state: Path, *, url: str | None = None, keys: Path | None = None, force: bool = False
) -> dict[str, Any]:
    """Restore the backup ``src`` into ``state`` (and its PostgreSQL dump into ``url``, and its keys
    into ``keys`` when given); see the module docstring. Returns what was restored."""
    src, state = Path(src), Path(state)
    tar, manifest = read_manifest(src)
    with tar:
        _check_target(src, manifest, state, url, keys, force)
        stage = Path(tempfile.mkdtemp(dir=state.parent, prefix=f".restore-{state.name}-"))
        os.chmod(stage, 0o777 & ~_umask())  # (mkdtemp makes it 0700) as a state directory made by mkdir is
        kstage = Path(tempfile.mkdtemp(dir=keys.parent, prefix=f".restore-{keys.name}-")) if keys else None
        try:
            n = _extract(tar, manifest, src, "state/", stage)
            nk = _extract(tar, manifest, src, "keys/", kstage) if kstage else 0
            if any(f["path"] == DUMP for f in manifest["files"]):
                dump = Path(tempfile.mkdtemp(dir=state.parent, prefix=".restore-dump-")) / "evalcore.dump"
                try:
                    _extract(tar, manifest, src, "postgres/", dump.parent)
                    assert url is not None
                    pg_restore(url, dump, manifest["database"]["schema"], force)
                finally:
                    shutil.rmtree(dump.parent, ignore_errors=True)
            fsync_path(stage)
            replace_directory(stage, state)
            if kstage and keys:
                replace_directory(kstage, keys)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            if kstage:
                shutil.rmtree(kstage, ignore_errors=True)
            raise
    has_keys = any(f["path"].startswith("keys/") for f in manifest["files"])
    return {
        "from": str(src),
        "state": str(state),
        "created_at": manifest.get("created_at"),
        "versions": manifest.get("versions"),
        "database": {**manifest["database"], "url": mask(url)} if url else manifest["database"],
        "schema_versions": manifest.get("schema_versions", {}),
        "state_files": n,
        "keys": {"in_backup": has_keys, "restored_to": str(keys) if keys else None, "files": nk},
    }


def _check_target(src: Path, manifest: dict, state: Path, url: str | None, keys: Path | None, force: bool) -> None:
    """Refuse, before anything is written, a restore that does not fit where it would go."""
    from evalcore.storage.labels import LABELS_SCHEMA_VERSION

    for name, v in manifest.get("schema_versions", {}).items():
        if name.endswith("/labels.sqlite") and int(v) > LABELS_SCHEMA_VERSION:
            raise _bad(src, f"its label store is schema {v}, newer than this evalcore reads ({LABELS_SCHEMA_VERSION})")
    dumped = manifest["database"].get("kind") == "postgres"
    if dumped and not url:
        raise InputError(
            "holds a PostgreSQL dump of the labels and ledger: give the database to restore it into (--db or EVALCORE_DB)",
            file=src,
            field="--db",
        )
    if url and not dumped:
        raise InputError(
            "holds the labels and ledger as SQLite files of the state directory: restore without --db / EVALCORE_DB",
            file=src,
            field="--db",
        )
    if not _empty(state) and not force:
        raise StateError(
            "is not empty: restore into a new state directory, or give --force to replace it",
            file=state,
            field="--state",
        )
    if state.exists() and not state.is_dir():
        raise StateError("is not a directory", file=state, field="--state")
    if not state.parent.is_dir():
        raise StateError(f"cannot be made: {state.parent} does not exist", file=state, field="--state")
    if keys is not None:
        if not Path(keys).parent.is_dir():
            raise StateError(f"cannot be made: {Path(keys).parent} does not exist", file=keys, field="--keys")
        if not any(f["path"].startswith("keys/") for f in manifest["files"]):
            raise InputError("holds no pairwise keys (it was made without --keys)", file=src, field="--keys")
        if not _empty(Path(keys)) and not force:
            raise StateError(
                "is not empty: restore the keys into a new directory, or give --force", file=keys, field="--keys"
            )
