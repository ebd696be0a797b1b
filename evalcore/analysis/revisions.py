"""Cost over revision passes (issue 44, article 001): what k revision passes would cost a generation
configuration that records its revision budget (the generation's ``revision_budget`` knob, the
contract's name for it: docs/FORMAT.md), in an appended transcript against a fresh-context critic.

The model, per answer, from the generation's own completed outputs: ``I`` is their mean tokens in
(the brief, the sources, the question: what the writer is sent), ``O`` their mean tokens out (a
draft). Pass 0 is the draft as measured (``I`` in, ``O`` out). A revision pass is one call that
writes a new draft of ``O`` tokens:

* **appended transcript** (self-critique): pass k re-sends the brief and every turn before it,
  ``I + k*O`` tokens in, so the tokens billed over k passes are ``k*I + O*k*(k+1)/2``: quadratic in k;
* **fresh-context critic**: pass k sends the brief and the current draft only, ``I + O`` tokens in,
  so the tokens billed over k passes are ``k*(I + O)``: linear in k.

Each pass is priced at ``tokens_in * price_in + tokens_out * price_out``: with ``--price``, else the
price table (litellm's bundled map) for the generation's ``generator_model``, else prices fitted to
the outputs' own recorded costs (:func:`evalcore.analysis.projection.fit_prices`, as the judge's
projection fits them); with none of these the costs are null and said ``unpriced``, never 0.
docs/COST.md has the equations with a worked figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalcore.analysis.projection import fit_prices
from evalcore.contract.results import Result
from evalcore.errors import InputError
from evalcore.llm.client import resolve_price
from evalcore.storage.aggregates import call_moments
from evalcore.storage.store import Store

#: the generation knob that records a configuration's revision budget (GenerationManifest.knobs)
BUDGET_KNOB = "revision_budget"
UNPRICED = "unpriced"


@dataclass
class RevisionPass(Result):
    """One revision pass k (0: the draft), per answer: this pass's call and the sum of passes 0..k."""

    passes: int
    recorded_budget: bool
    appended_tokens_in: float
    fresh_tokens_in: float
    tokens_out: float
    appended_cost_usd: float | None
    fresh_cost_usd: float | None
    appended_cumulative_tokens_in: float
    fresh_cumulative_tokens_in: float
    appended_cumulative_cost_usd: float | None
    fresh_cumulative_cost_usd: float | None


@dataclass
class RevisionCost(Result):
    """:func:`revision_cost` of one generation: what ``evalcore revision-cost --json`` prints per generation."""

    gen_id: str
    generator_model: str | None
    revision_budget: Any
    answers: int
    tokens_in_per_answer: float | None
    tokens_out_per_answer: float | None
    price_source: str
    input_per_million: float | None
    output_per_million: float | None
    passes: list[RevisionPass]
    #: the cumulative cost of the deepest pass over every answer of the generation, each arm (null: unpriced)
    appended_total_usd: float | None
    fresh_total_usd: float | None
    note: str


def _price(store: Store, gen_id: str, model: str | None, price: tuple[float, float] | None) -> tuple[Any, str]:
    """(per-token prices in, out) or None, and where they came from."""
    p = resolve_price(model or "", price) if (model or price) else None
    if p is not None:
        return (p.input_per_token, p.output_per_token), p.source
    fit = fit_prices(store, str(store.path_of("generation", gen_id, "outputs")))
    if fit is not None:
        return (fit.input_per_token, fit.output_per_token), "fitted to the outputs' own costs: " + fit.source.replace(
            " calls ", " outputs "
        )
    return None, UNPRICED


def pass_rows(i: float, o: float, prices: tuple[float, float] | None, depth: int, budget: Any) -> list[RevisionPass]:
    """Passes 0..depth of the model in the module docstring (a pure function)."""

    def cost(tin: float, tout: float) -> float | None:
        return None if prices is None else tin * prices[0] + tout * prices[1]

    rows: list[RevisionPass] = []
    cum_a = cum_f = 0.0
    for k in range(depth + 1):
        a_in, f_in = (i + k * o, i + o) if k else (i, i)
        cum_a, cum_f = cum_a + a_in, cum_f + f_in
        outs = (k + 1) * o
        rows.append(
            RevisionPass(
                passes=k,
                recorded_budget=k == budget,
                appended_tokens_in=a_in,
                fresh_tokens_in=f_in,
                tokens_out=o,
                appended_cost_usd=cost(a_in, o),
                fresh_cost_usd=cost(f_in, o),
                appended_cumulative_tokens_in=cum_a,
                fresh_cumulative_tokens_in=cum_f,
                appended_cumulative_cost_usd=cost(cum_a, outs),
                fresh_cumulative_cost_usd=cost(cum_f, outs),
            )
        )
    return rows


def revision_cost(
    store: Store, gen_id: str, *, passes: int = 3, price: tuple[float, float] | None = None
) -> RevisionCost:
    """Passes 0..max(recorded budget, ``passes``) of one generation, priced (module docstring)."""
    if passes < 1:
        raise InputError(f"--passes must be at least 1, not {passes}", field="--passes")
    gm = store.generation(gen_id).manifest
    if BUDGET_KNOB not in gm.knobs:
        raise InputError(
            f"generation {gen_id!r} does not record its revision budget (knob {BUDGET_KNOB}); "
            f"record it at import or generation with --knob {BUDGET_KNOB}=N",
            field=BUDGET_KNOB,
        )
    budget = gm.knobs[BUDGET_KNOB]
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 0:
        raise InputError(
            f"generation {gen_id!r}: {BUDGET_KNOB} is {budget!r}, not a whole number of passes", field=BUDGET_KNOB
        )
    model = gm.knobs.get("generator_model")
    mo = call_moments(store, str(store.path_of("generation", gen_id, "outputs")))
    n = int(mo["d_n"] or 0)
    prices, source = _price(store, gen_id, model, price)
    if not n:
        return RevisionCost(gen_id, model, budget, 0, None, None, source, None, None, [], None, None,
                            "no output records its tokens: nothing to project")  # fmt: skip
    i, o = mo["d_in"] / n, (mo["d_out"] or 0) / n
    rows = pass_rows(i, o, prices, max(budget, passes), budget)
    last = rows[-1]
    note = (
        f"at {last.passes} passes an appended transcript bills {last.appended_cumulative_tokens_in:,.0f} tokens in "
        f"per answer, a fresh-context critic {last.fresh_cumulative_tokens_in:,.0f}"
        + ("" if prices else f"; {UNPRICED}: no price for {model or 'the generator'} and no recorded cost")
    )
    return RevisionCost(
        gen_id=gen_id,
        generator_model=model,
        revision_budget=budget,
        answers=n,
        tokens_in_per_answer=i,
        tokens_out_per_answer=o,
        price_source=source,
        input_per_million=None if prices is None else prices[0] * 1e6,
        output_per_million=None if prices is None else prices[1] * 1e6,
        passes=rows,
        appended_total_usd=_times(last.appended_cumulative_cost_usd, n),
        fresh_total_usd=_times(last.fresh_cumulative_cost_usd, n),
        note=note,
    )


def _times(v: float | None, n: int) -> float | None:
    return None if v is None else v * n


def revision_costs(
    store: Store, gen_ids: tuple[str, ...] = (), *, passes: int = 3, price: tuple[float, float] | None = None
) -> list[RevisionCost]:
    """:func:`revision_cost` of the generations named, else of every generation that records its
    revision budget (the Cost page's table)."""
    if gen_ids:
        return [revision_cost(store, g, passes=passes, price=price) for g in gen_ids]
    ids = [g for g in store.ids("generation") if BUDGET_KNOB in store.generation(g).manifest.knobs]
    return [revision_cost(store, g, passes=passes, price=price) for g in ids]
