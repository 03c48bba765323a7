"""The packed blobs: a valid document's text, from which the summary's JSON and the body come
back exactly as the build's parsing makes them; any deflate window inflates the same way, so
the compressor's settings can change without a new index layout."""

from __future__ import annotations

import json
import random
import zlib

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ecc.vault import packed
from ecc.vault.format import (
    MemoryFormatError,
    escape_surrogates,
    serialize_memory_document,
    summary,
)
from ecc.vault.parse import parse_memory_document
from tests.vault.conftest import full_memory


def _summary_json(text: str) -> str:
    """The summary's JSON as the index stored it before blobs held the text (layout 3)."""
    memory = parse_memory_document(text)
    return escape_surrogates(json.dumps(summary(memory), ensure_ascii=False, separators=(",", ":")))


def _zlib_pack(text: str, body: str) -> bytes:
    """The blob as the stdlib's deflate with its largest window writes it."""
    deflate = zlib.compressobj(
        1, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, packed._DICTIONARY
    )
    start = text.rfind(body)
    return deflate.compress(f"{start} {len(body)}\0{text}".encode()) + deflate.flush()


def _document(title: str, body: str, tags: list[str]) -> str | None:
    try:
        return serialize_memory_document(full_memory(title=title, body=body, tags=tags))
    except MemoryFormatError:
        return None


@settings(max_examples=200, deadline=None)
@given(
    title=st.text(min_size=1, max_size=60),
    body=st.text(min_size=1, max_size=3000),
    tags=st.lists(st.sampled_from(["auth", "db", "ci"]), unique=True, max_size=3),
    ending=st.sampled_from(["", "\n", "\n\n  \n", "\r\n"]),
)
def test_a_blob_gives_back_the_summary_and_body_the_build_parsed(
    title: str, body: str, tags: list[str], ending: str
) -> None:
    text = _document(title, body, tags)
    assume(text is not None)  # an invalid memory is never packed
    assert text is not None
    text += ending  # white space after the body, as a hand edit leaves it
    parsed = parse_memory_document(text)
    for blob in (packed.pack(text, parsed["body"]), _zlib_pack(text, parsed["body"])):
        assert packed.unpack(blob) == (_summary_json(text), parsed["body"])


def test_a_body_repeated_in_the_frontmatter_is_taken_from_the_end() -> None:
    text = serialize_memory_document(full_memory(title="migration", body="migration"))
    blob = packed.pack(text, "migration")
    assert packed.unpack(blob) == (_summary_json(text), "migration")
    assert json.loads(packed.unpack(blob)[0])["title"] == "migration"


def test_bodies_larger_than_the_window_round_trip_at_about_the_same_size() -> None:
    rng = random.Random(7)
    words = ["migration", "rollout", "auth", "cache", "déploiement", "✓", "\n\n"]
    for size in (4_000, 5_000, 20_000, 50_000):
        body = " ".join(rng.choice(words) for _ in range(size // 6)).strip()
        text = serialize_memory_document(full_memory(body=body))
        blob = packed.pack(text, body)
        assert packed.unpack(blob) == (_summary_json(text), body)
        assert len(blob) <= len(_zlib_pack(text, body)) * 1.1


@pytest.mark.parametrize("tail", ["\n", "", "\n\n \t\n", "  \n"])
@pytest.mark.parametrize("body", ["migration\n\nrollout", "x", "Title"])
def test_a_body_comes_back_whatever_white_space_follows_it(tail: str, body: str) -> None:
    """The blob records where the body is: just before a written document's last newline, or
    else wherever it occurs (a body also in the title gives the same text back)."""
    written = serialize_memory_document(full_memory(title="Title", body=body))
    text = written.removesuffix("\n") + tail
    parsed = parse_memory_document(text)["body"]
    assert packed.unpack(packed.pack(text, parsed)) == (_summary_json(text), parsed)
