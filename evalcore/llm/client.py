"""Loading litellm, prices and offline token estimates: what every model call needs before it is
made (the executor that makes, retries and journals the calls is :mod:`evalcore.llm.engine`).

litellm is imported lazily by :func:`load_litellm`, with ``LITELLM_OFFLINE_MODE`` and
``LITELLM_LOCAL_MODEL_COST_MAP`` set first (:data:`OFFLINE_ENV`; without them it fetches a price
table at import), so ``import evalcore`` never loads it and only commands that call models pay its
~3-5 s import. Every other module reaches litellm through :func:`load_litellm`.

* **prices**: :func:`resolve_price` reads litellm's bundled price map straight from its JSON file
  (:func:`price_map`, :func:`model_info`; no import, no network) or takes ``--price IN,OUT``
  (:func:`parse_price`, US dollars per million tokens), which is also registered with litellm
  (:func:`register_price`). A :class:`Price` is US dollars per token in and out and where the
  figures came from. An unknown price is ``None`` and every cost derived from it is ``None``,
  never 0. :func:`supports_json_schema` reads from the same map whether a model takes structured
  output.
* **offline token estimates** (:func:`estimate_tokens`, :func:`count_text_tokens`): tiktoken's
  ``o200k_base`` / ``cl100k_base`` encodings (:func:`encoding_name`) loaded from the files litellm
  bundles (never downloaded); when they cannot be loaded, a documented heuristic of one token per
  4 bytes of UTF-8 (:data:`HEURISTIC`). :func:`tokenizer_name` says which was used.
* :func:`model_family`: a coarse model family from the name, for same-family warnings.
* the errors of a call: :class:`ModelAccessError` (the provider refused the run as a whole),
  :class:`Interrupted` (Ctrl-C during a run) and :class:`ParseError` (a reply that does not fit,
  with its raw text).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError, InputError

OFFLINE_ENV = {"LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
LOCAL_API_KEY = "sk-evalcore-local"  # sent only to an --api-base when no key is in the environment


class ModelAccessError(EvalcoreError):
    """The provider refused the run as a whole (bad key, unknown model, unsupported parameter):
    retrying any call is pointless, so the run stops; completed calls stay in the journal."""


class Interrupted(Exception):
    """Ctrl-C during a run: every completed call is journaled; the message says how to resume."""


class ParseError(Exception):
    """A response that does not fit the expected structure; carries the exact raw text."""

    def __init__(self, problem: str, raw: str | None = None):
        super().__init__(problem)
        self.problem = problem
        self.raw = raw


# --------------------------------------------------------------------------- litellm


_LITELLM = None


class _NoLoggingWorkerNotice(logging.Filter):
    """Drops litellm's logging worker's records (its own bookkeeping, never about a call)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.filename != "logging_worker.py"


def load_litellm():
    """Import litellm once, offline: the environment variables are set before the import."""
    global _LITELLM
    if _LITELLM is None:
        for k, v in OFFLINE_ENV.items():
            os.environ[k] = v
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.turn_off_message_logging = True
        # litellm's logging worker warns on stderr when a later call runs on another event loop than an
        # earlier one ("LoggingWorker: event loop changed"): a notice of litellm's own bookkeeping that
        # put a second line under a command's one-line error (seen in a shuffled test order)
        logging.getLogger("LiteLLM").addFilter(_NoLoggingWorkerNotice())
        _LITELLM = litellm
    return _LITELLM


def litellm_dir() -> Path | None:
    """litellm's package directory, found without importing it."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def litellm_version() -> str:
    try:
        from importlib.metadata import version

        return version("litellm")
    except Exception:
        return "unknown"


def request_options(api_base: str | None) -> dict[str, str]:
    """``api_base`` and the key sent to it (``EVALCORE_API_KEY``, none if ``OPENAI_API_KEY`` is set, else the local one)."""
    if not api_base:
        return {}
    if not any(os.environ.get(k) for k in ("OPENAI_API_KEY", "EVALCORE_API_KEY")):
        return {"api_base": api_base, "api_key": LOCAL_API_KEY}
    key = os.environ.get("EVALCORE_API_KEY")
    return {"api_base": api_base, "api_key": key} if key else {"api_base": api_base}


# --------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    """US dollars per token, in and out, and where the figures came from."""

    input_per_token: float
    output_per_token: float
    source: str

    def cost(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        if tokens_in is None or tokens_out is None:
            return None
        return round(tokens_in * self.input_per_token + tokens_out * self.output_per_token, 10)


_PRICE_MAP: dict[str, Any] | None = None


def price_map() -> dict[str, Any]:
    """litellm's bundled price map, read as JSON from its package (no import, no network)."""
    global _PRICE_MAP
    if _PRICE_MAP is None:
        d = litellm_dir()
        p = d / "model_prices_and_context_window_backup.json" if d else None
        try:
            _PRICE_MAP = json.loads(p.read_text(encoding="utf-8")) if p and p.exists() else {}
        except (OSError, ValueError):
            _PRICE_MAP = {}
    return _PRICE_MAP


def model_info(model: str) -> dict[str, Any] | None:
    """The price-map entry of a model: the name as given, then without a provider prefix."""
    pm = price_map()
    if model in pm:
        return pm[model]
    if "/" in model:
        tail = model.split("/", 1)[1]
        if tail in pm:
            return pm[tail]
    return None


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT`` in US dollars per million tokens."""
    if text is None:
        return None
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(
            f"{text!r} is not IN,OUT (US dollars per million tokens, e.g. 0.15,0.60)", field="--price"
        ) from None
    if a < 0 or b < 0 or not math.isfinite(a) or not math.isfinite(b):
        raise InputError(f"{text!r}: prices must be finite and not negative", field="--price")
    return a, b


def resolve_price(model: str, price: tuple[float, float] | None = None) -> Price | None:
    """The price of ``model``: ``--price`` if given, else litellm's bundled map, else None (unknown)."""
    if price is not None:
        return Price(price[0] / 1e6, price[1] / 1e6, f"--price {price[0]:g},{price[1]:g} per million tokens")
    info = model_info(model)
    if info is None:
        return None
    i, o = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not isinstance(i, (int, float)) or not isinstance(o, (int, float)):
        return None
    return Price(float(i), float(o), f"litellm {litellm_version()} bundled price map")


def register_price(model: str, price: tuple[float, float]) -> None:
    """Tell litellm the price of a model it does not know (``--price``), so its own cost code agrees."""
    litellm = load_litellm()
    provider = model.split("/", 1)[0] if "/" in model else "openai"
    litellm.register_model(
        {
            model: {
                "input_cost_per_token": price[0] / 1e6,
                "output_cost_per_token": price[1] / 1e6,
                "litellm_provider": provider,
                "mode": "chat",
            }
        }
    )


def supports_json_schema(model: str) -> bool:
    info = model_info(model) or {}
    return bool(info.get("supports_response_schema"))


def model_family(model: str) -> str | None:
    """A coarse model family from the name, for same-family warnings (None when unsure)."""
    name = model.lower().split("/")[-1]
    for needle, fam in (
        ("gpt", "openai-gpt"),
        ("o1", "openai-o"),
        ("o3", "openai-o"),
        ("o4", "openai-o"),
        ("claude", "anthropic-claude"),
        ("gemini", "google-gemini"),
        ("gemma", "google-gemma"),
        ("llama", "meta-llama"),
        ("mistral", "mistral"),
        ("mixtral", "mistral"),
        ("qwen", "qwen"),
        ("deepseek", "deepseek"),
        ("command", "cohere"),
    ):
        if name.startswith(needle) or f"-{needle}" in name:
            return fam
    return None


#: a model name that carries its snapshot's date (2024-08-06, 20241022, @20240229) or a dated
#: version suffix (gpt-4-0613's -0613, gemini-1.5-pro-002's -002); "latest" never pins
_DATED = re.compile(r"(?:19|20)\d{2}-?[01]\d-?[0-3]\d|-[01]\d[0-3]\d$|-\d{3}$")


def floating_alias(model: str) -> bool:
    """Whether a judge model's name is a floating alias (``gpt-4o``, ``ChatGPT``,
    ``claude-3-5-sonnet-latest``) rather than a dated snapshot, whose answers can change under the
    same name. ``unknown`` (no judge named) and an Inspect scorer that calls no model
    (``inspect-scorer:match``) are not flagged; several models joined by commas are flagged when
    one is."""
    names = [m.strip() for m in model.split(",") if m.strip() not in ("", "unknown")]
    names = [m for m in names if not m.startswith("inspect-scorer:")]
    return any("latest" in m.lower() or not _DATED.search(m) for m in names)


# --------------------------------------------------------------------------- tokens (offline)

_BPE_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
_ENCODINGS: dict[str, Any] = {}
_ENCODING_LOCK = threading.Lock()
HEURISTIC = "heuristic: 1 token per 4 bytes of UTF-8"


def encoding_name(model: str) -> str:
    m = model.lower().split("/")[-1]
    if any(m.startswith(p) for p in ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k_base"
    return "cl100k_base"


def _encoding(name: str) -> Any:
    """A tiktoken encoding built from the file litellm bundles (never downloaded), or None. One
    thread at a time builds one (tiktoken's loader is swapped for the build; the app's warm-up
    builds them beside a page)."""
    if name in _ENCODINGS:
        return _ENCODINGS[name]
    with _ENCODING_LOCK:
        if name not in _ENCODINGS:
            _ENCODINGS[name] = _build_encoding(name)
    return _ENCODINGS[name]


def warm_encodings() -> None:
    """Build both encodings now (the cost projection counts rubric tokens with them)."""
    for name in _BPE_URLS:
        _encoding(name)


def _build_encoding(name: str) -> Any:
    enc = None
    d = litellm_dir()
    local = d / "litellm_core_utils" / "tokenizers" / hashlib.sha1(_BPE_URLS[name].encode()).hexdigest() if d else None
    if local is not None and local.exists():
        try:
            import tiktoken
            import tiktoken.load
            from tiktoken_ext import openai_public as op

            ranks = tiktoken.load.load_tiktoken_bpe(str(local))  # a local path: read, never fetched
            orig = op.load_tiktoken_bpe
            op.load_tiktoken_bpe = lambda *a, **k: ranks
            try:
                spec = getattr(op, name)()
            finally:
                op.load_tiktoken_bpe = orig
            enc = tiktoken.Encoding(
                name=spec["name"],
                pat_str=spec["pat_str"],
                mergeable_ranks=spec["mergeable_ranks"],
                special_tokens=spec["special_tokens"],
            )
        except Exception:
            enc = None
    return enc


def tokenizer_name(model: str) -> str:
    name = encoding_name(model)
    return f"tiktoken {name} (bundled with litellm)" if _encoding(name) is not None else HEURISTIC


def count_text_tokens(text: str, model: str) -> int:
    enc = _encoding(encoding_name(model))
    if enc is None:
        return max(1, math.ceil(len(text.encode("utf-8")) / 4))
    return len(enc.encode(text, disallowed_special=()))


def estimate_tokens(messages: list[dict], model: str) -> int:
    """Prompt tokens of a chat request, offline: content tokens plus OpenAI's 3 per message + 3."""
    return sum(count_text_tokens(str(m.get("content") or ""), model) + 3 for m in messages) + 3
