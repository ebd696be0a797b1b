"""The PEP 562 ``__getattr__`` of evalcore's lazy package doors (``evalcore``, ``evalcore.analysis``,
``evalcore.importers``): a name is imported from its module on first use, so that a command
importing one name does not pay for the libraries behind the others (tests/test_startup.py)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, where: Mapping[str, str], submodules: tuple[str, ...] = ()) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``where`` maps a public name to its module (relative
    to the package, or absolute when it starts with ``evalcore.``); ``submodules`` are the
    subpackages reachable as attributes."""

    def __getattr__(name: str) -> Any:
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        if name in where:
            mod = where[name]
            return getattr(importlib.import_module(mod if mod.startswith("evalcore.") else f"{package}.{mod}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
