"""The status line of long work on stderr (:class:`Progress`): calls done / total, failed,
retries, tokens, cost so far, rate and time left."""

from __future__ import annotations

import sys
import time
from typing import Any


def _human(n: float) -> str:
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.1f}{unit}"
    return f"{int(n)}"


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


class Progress:
    """One status line on stderr: calls done / total, failed, retries, tokens, cost so far, rate,
    time left. Redrawn in place at most 5 times a second on a terminal; elsewhere a line every
    10% or 15 s, and always a final line."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        done: int = 0,
        enabled: bool = True,
        stream: Any = None,
        cost_known: bool = True,
    ):
        self.label, self.total, self.enabled = label, total, enabled
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.done = self.start_done = done
        self.failed = self.retries = self.cache_hits = 0
        self.tokens_in = self.tokens_out = 0
        self.cost = 0.0
        self.cost_known = cost_known
        self.t0 = time.monotonic()
        self._last_draw = 0.0
        self._last_step = -1

    def add(
        self,
        *,
        ok: bool,
        tokens_in: int | None,
        tokens_out: int | None,
        cost: float | None,
        retries: int = 0,
        cache_hit: bool = False,
    ) -> None:
        self.done += 1
        self.failed += 0 if ok else 1
        self.retries += retries
        self.cache_hits += int(cache_hit)
        self.tokens_in += tokens_in or 0
        self.tokens_out += tokens_out or 0
        if cost is None:
            if not cache_hit:
                self.cost_known = False
        else:
            self.cost += cost
        self.draw()

    def line(self) -> str:
        el = time.monotonic() - self.t0
        new = self.done - self.start_done
        rate = new / el if el > 0 else 0.0
        left = 0.0 if self.done >= self.total else ((self.total - self.done) / rate if rate > 0 else None)
        cost = f"${self.cost:.4f}" if self.cost_known else "cost unknown"
        parts = [f"{self.label}: {self.done}/{self.total} calls", f"{self.failed} failed"]
        if self.retries:
            parts.append(f"{self.retries} retries")
        if self.cache_hits:
            parts.append(f"{self.cache_hits} cached")
        parts += [
            f"tokens {_human(self.tokens_in)} in / {_human(self.tokens_out)} out",
            cost,
            f"{rate:.1f}/s",
            f"left {_duration(left)}" if left is not None else "left ?",
        ]
        return ", ".join(parts)

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if force or now - self._last_draw >= 0.2:
                self._last_draw = now
                self.stream.write("\r\x1b[2K" + self.line())
                self.stream.flush()
            return
        step = int(10 * self.done / self.total) if self.total else 10
        if force or step != self._last_step or now - self._last_draw >= 15:
            self._last_step, self._last_draw = step, now
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def finish(self) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.draw(force=True)
            self.stream.write("\n")
            self.stream.flush()
        else:
            self.stream.write(self.line() + "\n")
            self.stream.flush()
