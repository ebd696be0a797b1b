"""Criterion kinds and values of imported verdicts and labels.

* :func:`parse_value` reads one value under a criterion's kind: binary (pass/fail, true/false,
  yes/no, 1/0), ternary (correct / partial / wrong), ordinal (a whole number on the scale) or
  continuous; ordinal and continuous pass at ``score >= threshold``. :func:`raw_text` is the
  value as given, kept as the raw verdict.
* :class:`KindOptions` holds ``--kind``, ``--threshold``, ``--scale``, ``--gate`` and their
  per-criterion forms; :func:`build_rubric` makes one criterion per name, with its kind given or
  inferred from its values (the first of binary, ternary, ordinal, continuous that fits them all).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

from evalcore.contract import schema as S
from evalcore.errors import InputError
from evalcore.importers.frame import BINARY_FALSE, BINARY_TRUE, KIND_CHOICES, KIND_ORDER, Frame

# --------------------------------------------------------------------------- values and kinds


def _token(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip().lower()


_NOT_FINITE = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"})


def _beyond_float(v: Any) -> ValueError:
    digits = len(str(abs(v))) if isinstance(v, int) else len(v.strip().lstrip("+-"))
    return ValueError(f"a {digits}-digit number is beyond the range of a float (about 1.8e308)")


def _number(v: Any) -> float | None:
    """The value as a finite float, None when it is not a number (or is NaN / infinite); a number
    too large for a float (a 401-digit integer) raises ValueError."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        try:
            return float(v)
        except OverflowError:
            raise _beyond_float(v) from None
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except ValueError:
            return None
        if math.isinf(x) and v.strip().lower() not in _NOT_FINITE:
            raise _beyond_float(v)
        return x if math.isfinite(x) else None
    return None


def _possible_kinds(v: Any) -> set[str]:
    tok = _token(v)
    kinds: set[str] = set()
    if isinstance(v, bool) or tok in BINARY_TRUE or tok in BINARY_FALSE:
        kinds.add("binary")
    if tok in S.TERNARY_LABELS:
        kinds.add("ternary")
    x = _number(v)
    if x is not None:
        kinds.add("continuous")
        if x.is_integer():
            kinds.add("ordinal")
    return kinds


def raw_text(v: Any) -> str:
    """The value as given, as text (raw_verdict / label value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)


@dataclass
class Parsed:
    passed: bool | None
    score: float | None = None
    label: str | None = None


def parse_value(crit: S.Criterion, v: Any) -> Parsed:
    """Derive passed / score / label from a value under the criterion's kind (raises ValueError)."""
    tok = _token(v)
    if crit.kind == "binary":
        if tok in BINARY_TRUE:
            return Parsed(True)
        if tok in BINARY_FALSE:
            return Parsed(False)
        raise ValueError(f"{v!r} is not pass or fail (pass/fail, true/false, yes/no, 1/0)")
    if crit.kind == "ternary":
        if tok in S.TERNARY_LABELS:
            return Parsed(tok == "correct", label=tok)
        raise ValueError(f"{v!r} is not correct, partial or wrong")
    x = _number(v)
    if x is None:
        raise ValueError(f"{v!r} is not a number")
    if crit.kind == "ordinal" and not x.is_integer():
        raise ValueError(f"{v!r} is not a whole number (use --kind continuous for a mean of ratings)")
    if (crit.scale_min is not None and x < crit.scale_min) or (crit.scale_max is not None and x > crit.scale_max):
        raise ValueError(f"{v!r} is outside the scale {crit.scale_min:g}-{crit.scale_max:g}")
    return Parsed(x >= crit.threshold if crit.threshold is not None else None, score=x)


def _kv(pairs: Iterable[str], option: str, file: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for p in pairs:
        if "=" not in p:
            raise InputError(f"{p!r} is not NAME=VALUE", file=file, field=option)
        k, v = p.split("=", 1)
        k = k.strip()
        if not k:
            raise InputError(f"{p!r} has no name before '='", file=file, field=option)
        out[k] = v.strip()
    return out


def _float_opt(v: str, option: str, file: str) -> float:
    try:
        x = float(v)
    except ValueError:
        raise InputError(f"{v!r} is not a number", file=file, field=option) from None
    if not math.isfinite(x):
        raise InputError(f"{v!r} is not a finite number", file=file, field=option)
    return x


def _scale_opt(v: str, option: str, file: str) -> tuple[float, float]:
    m = re.fullmatch(r"\s*([-+]?[\d.]+)\s*[:]\s*([-+]?[\d.]+)\s*", v)
    if not m:
        raise InputError(f"{v!r} is not MIN:MAX (e.g. 1:5)", file=file, field=option)
    lo, hi = _float_opt(m.group(1), option, file), _float_opt(m.group(2), option, file)
    if lo >= hi:
        raise InputError(f"{v!r}: MIN must be below MAX", file=file, field=option)
    return lo, hi


@dataclass
class KindOptions:
    kind: str | None
    criterion_kind: dict[str, str]
    threshold: float | None
    criterion_threshold: dict[str, float]
    scale: tuple[float, float] | None
    criterion_scale: dict[str, tuple[float, float]]
    gates: list[str]

    @classmethod
    def from_cli(
        cls,
        file: str,
        kind=None,
        criterion_kind=(),
        threshold=None,
        criterion_threshold=(),
        scale=None,
        criterion_scale=(),
        gates=(),
    ) -> KindOptions:
        """The options ``--kind``, ``--criterion-kind``, ... ``--gate`` in this order (absent: not given)."""
        ck = _kv(criterion_kind, "--criterion-kind", file)
        for k, v in ck.items():
            if v not in KIND_CHOICES:
                raise InputError(
                    f"kind {v!r} of criterion {k!r} is not one of {', '.join(KIND_CHOICES)}",
                    file=file,
                    field="--criterion-kind",
                )
        ct = {
            k: _float_opt(v, "--criterion-threshold", file)
            for k, v in _kv(criterion_threshold, "--criterion-threshold", file).items()
        }
        cs = {
            k: _scale_opt(v, "--criterion-scale", file)
            for k, v in _kv(criterion_scale, "--criterion-scale", file).items()
        }
        return cls(kind, ck, threshold, ct, _scale_opt(scale, "--scale", file) if scale else None, cs, list(gates))


def build_rubric(
    frame: Frame,
    order: list[str],
    values: dict[str, list[tuple[Any, int]]],
    ko: KindOptions,
    notes: list[str] | None = None,
) -> S.Rubric:
    """One criterion per name: kind given or inferred from its values, threshold, scale, gate.

    An ordinal criterion given no scale gets the scale of its values (lowest to highest), and a
    note saying so is appended to ``notes`` (the import prints it): it is never treated as pass /
    fail alone. The rubric holds only what defines the criteria (no file name), so two imports of
    the same criteria from different files have the same rubric hash."""
    for opt, names in (
        ("--criterion-kind", ko.criterion_kind),
        ("--criterion-threshold", ko.criterion_threshold),
        ("--criterion-scale", ko.criterion_scale),
        ("--gate", dict.fromkeys(ko.gates)),
    ):
        for name in names:
            if name not in order:
                raise InputError(
                    f"unknown criterion {name!r} (the file has: {', '.join(order)})", file=frame.name, field=opt
                )
    return S.Rubric(
        name="imported", criteria=[_rubric_criterion(frame, n, values.get(n, []), ko, notes) for n in order]
    )


def _rubric_criterion(
    frame: Frame, name: str, vals: list[tuple[Any, int]], ko: KindOptions, notes: list[str] | None
) -> S.Criterion:
    """One criterion of :func:`build_rubric`: its kind, threshold and scale, checked together."""
    kind = ko.criterion_kind.get(name) or ko.kind
    if kind is None:
        kind = _infer_kind(frame, name, vals)
    scored = kind in ("ordinal", "continuous")
    threshold = ko.criterion_threshold.get(name, ko.threshold if scored else None)
    if name in ko.criterion_threshold and not scored:
        raise InputError(
            f"criterion {name!r} is {kind}: a threshold applies to ordinal and continuous criteria only",
            file=frame.name,
            field="--criterion-threshold",
        )
    scale = ko.criterion_scale.get(name, ko.scale if scored else None)
    if kind == "ordinal" and scale is None:
        scale = _inferred_scale(frame, name, vals, notes)
    if scored and threshold is None and notes is not None:  # scores only: no verdict passes or fails
        nums = [x for x, _ in _numbers(frame, name, vals)]
        seen = f" (values {min(nums):g} to {max(nums):g})" if nums else ""
        notes.append(
            f"criterion {name!r} is {kind}{seen} with no pass threshold: its score figures (correlate, reliability, "
            f"means) are computed, its pass / fail figures are not (give one with --threshold T or "
            f"--criterion-threshold {name}=T)"
        )
    if threshold is not None and not math.isfinite(threshold):
        raise InputError(
            f"the threshold of {name!r} ({threshold!r}) is not a finite number", file=frame.name, field="--threshold"
        )
    if threshold is not None and scale and not scale[0] <= threshold <= scale[1]:
        raise InputError(
            f"the threshold of {name!r} ({threshold:g}) is outside its scale {scale[0]:g}-{scale[1]:g}",
            file=frame.name,
            field="--threshold",
        )
    try:
        return S.Criterion(
            name=name,
            kind=cast(S.CriterionKind, kind),
            threshold=threshold,
            gate=name in ko.gates,
            scale_min=scale[0] if scale else None,
            scale_max=scale[1] if scale else None,
        )
    except ValueError:  # pydantic's ValidationError: the name is not an id
        raise InputError(
            f"{name!r} is not a valid criterion name (1-128 letters, digits, . _ -, starting with a "
            f"letter or digit): rename it in the file",
            file=frame.name,
            field=frame.criterion_col or name,
        ) from None


#: the widest scale an ordinal criterion's values may imply (``hi - lo`` steps): a wider one is not
#: inferred, since one outlier (99999999999999999999999 among ratings of 1 to 5) would otherwise widen
#: the scale without a word; ``--criterion-scale`` gives it (docs/IMPORT.md, Scales)
MAX_INFERRED_SPAN = 100


def _numbers(frame: Frame, name: str, vals: list[tuple[Any, int]]) -> list[tuple[float, int]]:
    """The criterion's numeric values with their rows; a number beyond a float's range is refused
    naming its record."""
    out = []
    for v, row in vals:
        try:
            x = _number(v)
        except ValueError as e:
            raise frame.err(f"criterion {name!r}: {e}", _value_field(frame, name), row) from None
        if x is not None:
            out.append((x, row))
    return out


def _inferred_scale(
    frame: Frame, name: str, vals: list[tuple[Any, int]], notes: list[str] | None
) -> tuple[float, float] | None:
    """An ordinal criterion's scale from its whole values (lowest to highest), noted in ``notes``;
    refused when it would span more than :data:`MAX_INFERRED_SPAN` steps."""
    whole = sorted((x, row) for x, row in _numbers(frame, name, vals) if x.is_integer())
    if whole and whole[0][0] < whole[-1][0]:
        lo, hi = whole[0][0], whole[-1][0]
        if hi - lo > MAX_INFERRED_SPAN:
            far = whole[-1] if hi - whole[len(whole) // 2][0] >= whole[len(whole) // 2][0] - lo else whole[0]
            raise frame.err(
                f"criterion {name!r}: the value {far[0]:g} would widen the inferred scale to {lo:g}-{hi:g}, more "
                f"than {MAX_INFERRED_SPAN} steps: give the scale with --criterion-scale {name}=MIN:MAX",
                _value_field(frame, name),
                far[1],
            )
        if notes is not None:
            notes.append(
                f"criterion {name}: scale {lo:g}-{hi:g} inferred from the values; pass "
                f"--criterion-scale {name}=MIN:MAX to set it"
            )
        return lo, hi
    if whole:
        raise InputError(
            f"criterion {name!r} is ordinal but every value is {whole[0][0]:g}, so its scale cannot be "
            f"inferred: give it with --criterion-scale {name}=MIN:MAX (or --scale MIN:MAX)",
            file=frame.name,
            field="--criterion-scale",
        )
    return None


def _infer_kind(frame: Frame, name: str, vals: list[tuple[Any, int]]) -> str:
    possible = set(KIND_ORDER)
    first: tuple[Any, int] | None = None
    for v, row in vals:
        try:
            kinds = _possible_kinds(v)
        except ValueError as e:
            raise frame.err(f"criterion {name!r}: {e}", _value_field(frame, name), row) from None
        if not kinds:
            raise frame.err(
                f"criterion {name!r}: {v!r} is not pass/fail, correct/partial/wrong or a number",
                _value_field(frame, name),
                row,
            )
        if not possible & kinds:
            assert first is not None  # the first value's kinds always meet KIND_ORDER
            raise frame.err(
                f"criterion {name!r}: cannot tell its kind: {v!r} does not fit with "
                f"{first[0]!r} ({frame.where(first[1])}); pass --kind or "
                f"--criterion-kind {name}=KIND",
                _value_field(frame, name),
                row,
            )
        possible &= kinds
        if first is None:
            first = (v, row)
    if first is None:
        raise InputError(f"criterion {name!r} has no values", file=frame.name, field=_value_field(frame, name))
    return next(k for k in KIND_ORDER if k in possible)


def _value_field(frame: Frame, criterion: str) -> str:
    """The column holding a criterion's values: the value column (long) or the criterion's own
    column (wide)."""
    return frame.value_col or criterion
