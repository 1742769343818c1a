"""What a Python caller can pass that JSON cannot hold: the reference's
behaviour (its rejection, fallback or fail-open restore) or one clear
DoomLoopError — never a crash of the interpreter, never a hang."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import doom_loop
from doom_loop import DoomLoopError


def test_the_same_arguments_text_fingerprints_as_the_reference_whatever_its_spacing():
    expected = "b84a3e324e9dc95335f72cfee5e5898465349be72cb1348fe7927c49c8d65d92"
    assert doom_loop.fingerprint_tool_call("list_tasks", "{ }") == expected
    assert doom_loop.fingerprint_tool_call("list_tasks", b"{}") == expected
    assert doom_loop.fingerprint_tool_call("list_tasks", {}) == expected


def test_an_int_beyond_2_53_reads_as_json_parse_reads_its_digits():
    assert doom_loop.canonicalize_value([2**60]) == doom_loop.canonicalize("[1152921504606846976]")
    assert doom_loop.canonicalize_value([2**60]) == "[1152921504606847000]"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_rejected_with_the_references_message(value):
    with pytest.raises(DoomLoopError, match="non-finite"):
        doom_loop.canonicalize_value({"x": value})


def test_a_container_holding_itself_is_the_references_circular_rejection():
    loop: list = []
    loop.append(loop)
    with pytest.raises(DoomLoopError, match="circular"):
        doom_loop.fingerprint_tool_call("t", loop)


@pytest.mark.parametrize("value", [b"bytes", {1, 2}, object()])
def test_values_json_has_no_text_for_raise_naming_their_type(value):
    with pytest.raises(DoomLoopError, match=type(value).__name__):
        doom_loop.canonicalize_value([value])


def test_an_object_whose_getattr_raises_is_a_clear_error():
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError("no")

    with pytest.raises(DoomLoopError, match="Hostile"):
        doom_loop.fingerprint_tool_call("t", [Hostile()])


def test_bytes_that_are_not_utf8_are_a_clear_error():
    with pytest.raises(DoomLoopError, match="not UTF-8"):
        doom_loop.fingerprint_tool_call("t", b"{\"a\":\"\xff\"}")


def test_nesting_deeper_than_python_can_write_is_a_clear_error():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(DoomLoopError):
        doom_loop.canonicalize_value(deep)
    with pytest.raises(DoomLoopError):
        doom_loop.canonicalize("[" * 100_000 + "]" * 100_000)


def test_a_lone_surrogate_is_the_code_unit_javascript_holds():
    assert doom_loop.canonicalize_value("\ud800") == '"\\ud800"'
    assert doom_loop.canonicalize('"\ud800"') == '"\\ud800"'
    assert doom_loop.fingerprint_tool_call("t\ud800", "{}") == doom_loop.fingerprint_tool_call("t\ufffd", "{}")


def test_a_corrupt_state_restores_fresh_as_the_reference_does(caplog):
    for state in ["{not json", b"\xff\xfe", {"tools": 7}, [1, 2], "null"]:
        session = doom_loop.DoomLoopSession(state=state)
        outcome = session.on_response(None, [{"id": "1", "tool_name": "t", "arguments": "{}"}])
        assert outcome["decisions"][0]["action"] == "run"


def test_malformed_arguments_are_identified_by_their_text():
    session = doom_loop.DoomLoopSession()
    decision = session.on_response(None, [{"id": "1", "tool_name": "t", "arguments": "{oops"}])["decisions"][0]
    assert decision["malformed"] is True


def test_a_large_string_is_fingerprinted_with_the_gil_released_and_agrees_with_its_text():
    big = "x" * (8 << 20)
    assert doom_loop.fingerprint_tool_call_value("t", {"s": big}) == doom_loop.fingerprint_tool_call(
        "t", '{"s":"' + big + '"}'
    )


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=8), _json)
def test_every_entry_point_answers_or_raises_doom_loop_error(tool_name, value):
    for call in (
        lambda: doom_loop.canonicalize_value(value),
        lambda: doom_loop.fingerprint_tool_call(tool_name, value),
        lambda: doom_loop.fingerprint_key_material_value(value),
        lambda: doom_loop.resolve_doom_loop_option(value),
        lambda: doom_loop.resolve_loop_key_material(value, value),
        lambda: doom_loop.gateway_decide("chat", str(value)),
    ):
        try:
            call()
        except DoomLoopError:
            pass
    session = doom_loop.DoomLoopSession(state=value if isinstance(value, dict) else None)
    session.on_response(tool_name, [{"id": tool_name, "tool_name": tool_name, "arguments": value}])
    session.on_result(tool_name, value, failed=True)
    doom_loop.DoomLoopSession(state=session.get_state())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40) | st.binary(max_size=40))
def test_any_arguments_text_fingerprints_or_raises_doom_loop_error(text):
    try:
        doom_loop.fingerprint_tool_call("t", text)
    except DoomLoopError:
        pass


@pytest.mark.parametrize("text", ["[NaN]", '{"a":undefined}', "[Infinity]", "[1,hole]", "[circular]", "bigint"])
def test_arguments_text_is_json_parse_s_language_not_the_cores_lowered_words(text):
    with pytest.raises(DoomLoopError):
        doom_loop.fingerprint_tool_call("t", text)
    with pytest.raises(DoomLoopError):
        doom_loop.canonicalize(text)
    assert doom_loop.canonicalize('{"w":"NaN undefined","e":1e2,"t":[true,false,null]}') == (
        '{"e":100,"t":[true,false,null],"w":"NaN undefined"}'
    )
