"""Where evalcore's directories are, and the checks that keep every path inside them (the
:class:`~evalcore.storage.store.Store` that reads and writes them is :mod:`evalcore.storage.store`;
atomic files and directories are :mod:`evalcore.storage.files`).

* the three directories: :func:`default_data_dir` (``$EVALCORE_DATA`` or the bundled demo,
  :data:`DEFAULT_DATA`, found by :func:`bundled_demo` through package resources),
  :func:`default_state_dir` (``$EVALCORE_STATE`` or ``./.evalcore-state``) and
  :func:`default_keys_dir` (``<data>-keys``, beside the data directory, never inside it).
* :func:`check_id` refuses an id that could name anything but one directory entry, and
  :func:`inside` resolves ``root/parts`` and refuses anything (``..``, absolute parts, symlinks)
  that lands outside ``root``, so that nothing from the command line or the UI can make evalcore
  read or write outside its directories.
* :func:`utcnow`: the current UTC time to the second, as manifests record it.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from evalcore.contract import hashing as H
from evalcore.errors import PathEscapeError

DEFAULT_STATE_NAME = ".evalcore-state"


def bundled_demo() -> Path:
    """The bundled SIMULATED demo, found through package resources: an installed evalcore carries it
    as the package data of ``evalcore.demo.data`` (pyproject.toml maps data/demo there); a
    development checkout (an editable install) reads data/demo of the checkout itself."""
    from importlib import resources

    installed = Path(str(resources.files("evalcore").joinpath("demo", "data")))
    if (installed / "suites").is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "data" / "demo"


DEFAULT_DATA = bundled_demo()


def default_data_dir() -> Path:
    """``$EVALCORE_DATA`` or the bundled demo."""
    env = os.environ.get("EVALCORE_DATA")
    return Path(env) if env else DEFAULT_DATA


def default_state_dir() -> Path:
    """``$EVALCORE_STATE`` or ``./.evalcore-state`` (never committed: it is in .gitignore)."""
    env = os.environ.get("EVALCORE_STATE")
    return Path(env) if env else Path.cwd() / DEFAULT_STATE_NAME


def default_keys_dir(data_dir: Path) -> Path:
    """Keys sit beside the data directory, never inside it: ``<data>-keys``."""
    data_dir = Path(data_dir).resolve()
    return data_dir.parent / f"{data_dir.name}-keys"


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def check_id(value: str, what: str = "id") -> str:
    """Refuse ids that could name anything but one directory entry."""
    if not isinstance(value, str) or not H.is_valid_id(value):
        raise PathEscapeError(f"{value!r} is not a valid {what} (letters, digits, . _ -; no '..', no '/')", field=what)
    return value


def inside(root: Path, *parts: str, resolved: bool = False) -> Path:
    """``root/parts`` resolved, refusing anything (``..``, absolute parts, symlinks) that lands
    outside ``root``. ``resolved``: ``root`` is already resolved (a Store's data directory), so
    only ``root/parts`` is (half the system calls of a manifest lookup)."""
    root_r = Path(root) if resolved else Path(root).resolve()
    path = root_r.joinpath(*parts).resolve()
    if path != root_r and not path.is_relative_to(root_r):
        raise PathEscapeError(f"resolves outside {root_r}", file=root_r.joinpath(*parts), field="path")
    return path


def links_inside(root: Path) -> None:
    """Refuse a link anywhere under ``root`` (a file or a directory, not followed) that leads
    outside it: what a state directory holds is written in place, and a link planted in it must
    not turn a write into one somewhere else. Nothing for a ``root`` that does not exist."""
    root_r = Path(root).resolve()
    if not root_r.is_dir():
        return
    for top, dirs, files in os.walk(root_r, followlinks=False):
        for name in dirs + files:
            p = Path(top) / name
            if p.is_symlink():
                target = p.resolve()
                if target != root_r and not target.is_relative_to(root_r):
                    raise PathEscapeError(
                        f"is a link to {target}, outside the state directory: remove it (evalcore writes here)",
                        file=p,
                        field=name,
                    )
