"""The MCP transport's parts in-process: framing at chunk boundaries, strict parsing, the
writer's escaping of lone surrogates (what the reference writes for them)."""

from __future__ import annotations

import json

import pytest

from ecc.mcp.server import render
from ecc.mcp.transport import OVERSIZED, LineFramer, encode, parse_line


def test_framer_splits_on_lf_across_chunks_and_caps_a_line_once() -> None:
    framer = LineFramer(limit=8)
    assert framer.feed(b"ab") == []
    assert framer.feed(b"c\nde") == [b"abc"]
    assert framer.feed(b"f\n\n") == [b"def", b""]
    assert framer.feed(b"12345678\n") == [b"12345678"]  # exactly the limit is accepted
    assert framer.feed(b"12345") == []
    assert framer.feed(b"6789") == [OVERSIZED]  # known as soon as it is over, before its LF
    assert framer.feed(b"x" * 100) == []  # the rest of that line is dropped as it arrives
    assert framer.feed(b"yy\nok\ntail") == [b"ok"]
    assert framer.finish() == [b"tail"]  # a last line without LF still counts
    framer.feed(b"z" * 20)
    assert framer.finish() == []  # ...but not the rest of an oversized one


def test_parse_line_is_as_strict_as_json_parse() -> None:
    assert parse_line(b'{"a":1}\r') == {"a": 1}
    assert parse_line(b'"\xff"') == "\ufffd"  # invalid UTF-8 reads as U+FFFD
    assert parse_line(b'"\\ud800"') == "\ud800"  # a lone surrogate escape is valid JSON
    for bad in (
        b"NaN",
        b"[Infinity]",
        b"-Infinity",
        b"\xef\xbb\xbf{}",
        b"",
        b"{} x",
        b"[" * 10**5,
    ):
        with pytest.raises(ValueError):
            parse_line(bad)


def test_lone_surrogates_are_written_escaped() -> None:
    line = encode({"jsonrpc": "2.0", "id": 1, "result": {"title": "lone \ud800 sur", "ok": "é"}})
    assert (
        line == '{"jsonrpc":"2.0","id":1,"result":{"title":"lone \\ud800 sur","ok":"é"}}\n'.encode()
    )
    assert json.loads(line)["result"]["title"] == "lone \ud800 sur"
    text = render({"memory": {"title": "lone \udfff"}})  # the tool's text result too
    assert json.loads(text)["memory"]["title"] == "lone \udfff"
