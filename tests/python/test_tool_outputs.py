"""The one rule the Python adapters read a tool's output text by (the JS
LangChain adapter's too): JSON object or array text is read as its value,
any other text stays text."""

from doom_loop._outputs import parsed_output


def test_object_and_array_text_is_read_as_its_value():
    assert parsed_output('{"error": "card declined"}') == {"error": "card declined"}
    assert parsed_output('  [1, 2]') == [1, 2]


def test_scalar_json_text_stays_text():
    # "42" and "true" are what the model read: a number's text, not a number.
    for text in ("42", "true", '"quoted"', "null", "prose"):
        assert parsed_output(text) == text


def test_broken_json_and_non_text_pass_through():
    assert parsed_output("{not json") == "{not json"
    value = {"already": "a value"}
    assert parsed_output(value) is value
    assert parsed_output(None) is None
