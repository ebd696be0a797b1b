"""Typed results (evalcore.contract.results): a figure's dataclass prints as the JSON object the
command line printed when figures were dicts: keys in field order, renamed keys, absent keys."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field

from evalcore.contract.results import OMIT, Result, key, plain


@dataclass
class Row(Result):
    criterion: str
    klass: str = field(metadata=key("class"))
    note: str | None = OMIT


@dataclass
class Figure(Result):
    rows: list[Row]
    by: dict[str, Row]
    pair: tuple[int, int]
    warning: str = OMIT


def test_fields_print_in_order_under_their_keys_and_omitted_ones_are_absent():
    f = Figure([Row("a", "x"), Row("b", "y", None)], {"a": Row("a", "x", "n")}, (1, 2))
    assert json.dumps(f.to_dict()) == json.dumps(
        {
            "rows": [{"criterion": "a", "class": "x"}, {"criterion": "b", "class": "y", "note": None}],
            "by": {"a": {"criterion": "a", "class": "x", "note": "n"}},
            "pair": [1, 2],
        }
    )
    assert plain([f, {"k": Row("c", "z")}])[1] == {"k": {"criterion": "c", "class": "z"}}


def test_a_result_survives_the_apps_cache_pickle_and_omit_stays_one_value():
    f = Figure([Row("a", "x")], {}, (1, 2))
    back = pickle.loads(pickle.dumps(f))
    assert back == f and back.warning is OMIT and "warning" not in back.to_dict()
