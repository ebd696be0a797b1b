"""evalcore.contract.readers (issue 38): one reader per format, bounded alike, and the one comparison
of names. The hostile corpus (tests/hostile.py) runs them through the command line; these pin the
edges a refusal must not cross: what is still read."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml

from evalcore.contract.readers import loads_json, loads_toml, loads_yaml, lookalikes, name_key, spelled


def test_each_format_refuses_past_the_depth_limit_and_reads_up_to_it(monkeypatch):
    monkeypatch.setenv("EVALCORE_MAX_DEPTH", "5")
    ok, deep = "[" * 5 + "]" * 5, "[" * 6 + "]" * 6
    assert loads_json(ok) == json.loads(ok)
    with pytest.raises(json.JSONDecodeError, match="more than 5 deep"):
        loads_json(deep)
    # a TOML document and this YAML one are a table: the list under `x` is one level deeper
    ok, deep = "[" * 4 + "]" * 4, "[" * 5 + "]" * 5
    assert loads_toml(f"x = {ok}\n") == tomllib.loads(f"x = {ok}\n")
    assert loads_yaml(f"x: {ok}\n") == {"x": json.loads(ok)}
    with pytest.raises(tomllib.TOMLDecodeError, match="more than 5 deep"):
        loads_toml(f"x = {deep}\n")
    with pytest.raises(yaml.YAMLError, match="more than 5 deep"):
        loads_yaml(f"x: {deep}\n")


def test_a_key_named_twice_is_refused_but_a_yaml_merge_may_be_overridden():
    with pytest.raises(json.JSONDecodeError, match="'b' twice"):
        loads_json('{"a": {"b": 1, "b": 2}}')
    with pytest.raises(yaml.YAMLError, match="'a' twice"):
        loads_yaml("a: 1\nb: 2\na: 3\n")
    assert loads_yaml("base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  y: 3\n")["d"] == {"x": 1, "y": 3}
    assert loads_json('[{"a": 1}, {"a": 2}]') == [{"a": 1}, {"a": 2}]  # the same key in two objects


def test_names_compare_without_invisible_characters_space_around_or_another_unicode_form():
    assert name_key("pw-reset\u200b") == name_key(" pw-reset ") == name_key("pw-reset") == "pw-reset"
    assert name_key("\u202ecy") == "cy" and name_key("Jose\u0301") == "Jos\u00e9"
    assert lookalikes(["ana", "ben", "an\u200ba"]) == ("ana", "an\u200ba")
    assert lookalikes(["faithful", "Faithful"]) is None
    assert lookalikes(["faithful", "Faithful"], fold_case=True) == ("faithful", "Faithful")
    assert spelled("c\u200by") == "'c\\u200by'"
