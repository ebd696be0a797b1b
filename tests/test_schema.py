"""The data contract: every field documented, FORMAT.md generated from the models, the public door
pinned, and every command documented."""

from __future__ import annotations

import subprocess

import click
import pytest
from conftest import EVALCORE, REPO

import evalcore
from evalcore import contract as S


def _models():
    from evalcore.contract import schema
    base = schema._Model  # the contract's base model: every persisted model derives from it
    return [m for m in vars(schema).values() if isinstance(m, type) and issubclass(m, base) and m is not base]


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.__name__)
def test_every_field_is_documented(model):
    assert model.__doc__ and model.__doc__.strip()
    undocumented = [n for n, f in model.model_fields.items() if not (f.description or "").strip()]
    assert undocumented == []


def test_format_md_is_generated_from_the_models():
    assert (REPO / "docs" / "FORMAT.md").read_text(encoding="utf-8") == S.format_markdown(), \
        "docs/FORMAT.md is stale: run `make docs`"
    out = subprocess.run([EVALCORE, "schema", "--markdown"], capture_output=True, text=True, check=True).stdout
    assert out == S.format_markdown()


def test_every_table_has_version_metadata(tiny):
    import pyarrow.parquet as pq
    data, _ = tiny
    # the derived tables beside them have their own version (derived/index.json, tests/test_derived.py)
    files = [f for f in data.rglob("*.parquet") if "derived" not in f.relative_to(data).parts]
    assert len(files) == 4
    for f in files:
        meta = pq.read_schema(f).metadata
        assert meta[b"evalcore.schema_version"] == str(S.SCHEMA_VERSION).encode()
        assert meta[b"evalcore.table"] == f.stem.encode()


def test_public_api_is_pinned():
    assert sorted(evalcore.__all__) == sorted([
        "ACCESS_ROLES", "ROLES_FILE", "Access", "RolesFile", "load_roles", "resolve_access",
        "SCHEMA_VERSION", "Criterion", "EvalcoreError", "FormatError", "GenerationManifest", "InputError",
        "LabelError", "LabelSetManifest", "LabelStore", "NotFoundError", "PathEscapeError", "RunManifest",
        "Rubric", "SchemaVersionError", "Selection", "SessionManifest", "StateError", "Store", "SuiteManifest", "data_overview",
        "csv_text", "default_data_dir", "default_keys_dir", "default_state_dir", "export_labels", "generations_summary", "gold",
        "Home", "waiting",  # what waits for one person (evalcore.home: the app's Home page)
        "labels_version",  # what the pages' cached figures key on for the label store (SQLite or PostgreSQL)
        "item_view", "pinned", "run_item_ids", "run_summary", "runs_summary", "suites_summary", "DataOverview", "GenerationSummary", "ItemVerdict", "ItemView", "RunSummary", "SuiteSummary",
        # the domain namespaces, each with an __all__ of its own
        "analysis", "demo", "importers", "llm", "pairwise", "review", "stats"])
    for name in evalcore.__all__:
        assert getattr(evalcore, name) is not None


def test_every_namespace_names_only_what_it_has():
    import importlib
    for ns in ("analysis", "demo", "importers", "llm", "pairwise", "review", "stats", "contract", "storage"):
        mod = importlib.import_module(f"evalcore.{ns}")
        assert mod.__all__ and all(getattr(mod, n, None) is not None for n in mod.__all__), ns
        assert all(not n.startswith("_") for n in mod.__all__), ns


def _commands(group: click.Group, prefix: str = ""):
    for name, cmd in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, full + " ")
        else:
            yield full


def test_every_command_is_documented():
    from evalcore.cli import cli
    doc = (REPO / "docs" / "CLI.md").read_text(encoding="utf-8")
    missing = [c for c in _commands(cli) if f"evalcore {c}" not in doc]
    assert missing == [], f"docs/CLI.md does not mention: {missing}"


def test_ids_are_checked():
    for good in ("a", "run-1", "x.y_z", "A9"):
        assert S.is_valid_id(good)
    for bad in ("", "..", "../x", "a/b", ".hidden", "-x", "a..b", "x" * 129, "a b", "/abs"):
        assert not S.is_valid_id(bad), bad
