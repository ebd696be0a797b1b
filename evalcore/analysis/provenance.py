"""Where a run's verdicts and answers came from, in the words the app shows beside them (issue 41):
evalcore's simulator (``SIMULATED``), a real model named as its calls reported it, with the server it
was called at (``real model: smollm2-135m-instruct on 127.0.0.1``; a provider's model without an
``--api-base``: ``real model: gpt-4o-2024-08-06``), or a file imported.

Read from the manifests alone: the run's ``source``, ``simulated``, ``judge_model`` and
``knobs.api_base``; its generation's ``source``, ``simulated``, ``knobs.reported_models`` (else
``requested_model``) and ``knobs.api_base``; its suite's ``simulated`` (the live experiment of
docs/DEMO.md asks a real model the demo's simulated questions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from evalcore.contract import schema as S
from evalcore.contract.results import Result
from evalcore.storage.store import Store

SIMULATED = "SIMULATED"


@dataclass
class Provenance(Result):
    """Who made a run's verdicts (``judge``), its answers (``answers``) and its questions, in words."""

    run_id: str
    judge: str  # SIMULATED, real model: M on HOST, or imported[: M]
    answers: str  # the same, for the generation judged
    questions_simulated: bool  # the suite's manifest says simulated
    simulated: bool  # any of the three was made by evalcore's simulator
    label: str  # one line for the page


def real_model(model: str, api_base: Any) -> str:
    """``real model: M on HOST`` (a server at ``api_base``), or ``real model: M`` (a provider)."""
    host = urlsplit(api_base).hostname if isinstance(api_base, str) and api_base else None
    return f"real model: {model} on {host}" if host else f"real model: {model}"


def run_words(m: S.RunManifest) -> str:
    """Who made a run's verdicts."""
    if m.simulated or m.source == "simulated":
        return SIMULATED
    if m.source == "imported":
        return f"imported: {m.judge_model}" if m.judge_model else "imported"
    return real_model(m.judge_model, m.knobs.get("api_base"))


def generation_words(m: S.GenerationManifest) -> str:
    """Who made a generation's answers."""
    if m.simulated or m.source == "simulated":
        return SIMULATED
    if m.source == "imported":
        return "imported"
    reported = m.knobs.get("reported_models") or []
    model = reported[0] if len(reported) == 1 else m.knobs.get("requested_model") or m.knobs.get("generator_model")
    return real_model(str(model or "unknown"), m.knobs.get("api_base"))


def run_provenance(store: Store, run_id: str) -> Provenance:
    """Where ``run_id``'s verdicts, answers and questions came from, and the line that says it."""
    run = store.run(run_id).manifest
    gen = store.generation(run.gen_id).manifest
    return provenance(run, gen, bool(store.suite(gen.suite_id).manifest.simulated))


def provenance(run: S.RunManifest, gen: S.GenerationManifest, questions: bool) -> Provenance:
    """:func:`run_provenance` from the run's and its generation's manifests and whether the suite is simulated."""
    judge, answers = run_words(run), generation_words(gen)
    if judge == answers:
        label = f"{judge}: made by evalcore's simulator" if judge == SIMULATED else f"{judge} (answers and verdicts)"
    else:
        label = f"verdicts: {judge}; answers ({run.gen_id}): {answers}"
    if questions and SIMULATED not in (judge, answers):
        label += f"; the questions are the SIMULATED suite {gen.suite_id}'s"
    simulated = questions or SIMULATED in (judge, answers)
    return Provenance(run.run_id, judge, answers, questions, simulated, label)


def model_words(m: Any) -> str | None:
    """:func:`run_words` or :func:`generation_words` of a run's or generation's manifest (None for other kinds)."""
    if isinstance(m, S.RunManifest):
        return run_words(m)
    if isinstance(m, S.GenerationManifest):
        return generation_words(m)
    return None
