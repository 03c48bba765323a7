"""ecc.memory.v1 parse/serialize/validate (spec §1; checklist 8.1 items 7-19, 29-37)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecc.vault.format import (
    MemoryFormatError,
    id_sort_key,
    js_trim,
    new_memory_id,
    normalize_memory,
    serialize_memory_document,
    utf16_length,
)
from ecc.vault.parse import parse_memory_document
from tests.vault.conftest import full_memory

REFERENCE_DOCUMENT = (
    "---\n"
    'schema: "ecc.memory.v1"\n'
    'id: "mem_20261130_b9f5491350984202ac8c"\n'
    'title: "Auth \\"migration\\" status"\n'
    'kind: "decision"\n'
    'scope: "project"\n'
    'trust: "unreviewed"\n'
    'status: "active"\n'
    'source_harness: "codex"\n'
    'target_harnesses: ["claude","codex"]\n'
    'tags: ["auth","db"]\n'
    "links: []\n"
    'created_at: "2026-11-30T01:36:47.495Z"\n'
    'updated_at: "2026-11-30T01:36:47.495Z"\n'
    "---\n"
    "\n"
    'Line one\n\n  Body with "quotes" and unicode é ✓\n'
)


def test_reference_document_round_trips_byte_for_byte() -> None:
    """A document written by the reference parses and re-serializes to identical bytes."""
    memory = parse_memory_document(REFERENCE_DOCUMENT, "ref.md")
    assert memory["title"] == 'Auth "migration" status'
    assert list(memory) == [
        "schema", "id", "title", "kind", "scope", "trust", "status", "sourceHarness",
        "targetHarnesses", "tags", "links", "createdAt", "updatedAt", "body",
    ]  # fmt: skip
    assert serialize_memory_document(memory).encode() == REFERENCE_DOCUMENT.encode()


def test_serialization_shape() -> None:
    """8.1 #7 starts with schema line; #8 compact arrays; #9 ends with body + LF."""
    text = serialize_memory_document(full_memory())
    assert text.startswith('---\nschema: "ecc.memory.v1"\n')
    assert 'target_harnesses: ["claude"]' in text
    assert text.endswith("Body text\n")


def test_parse_serialize_round_trip_and_crlf() -> None:
    """8.1 #10 parse(serialize(m)) == m; #11 all-CRLF copy parses identically."""
    memory = normalize_memory(full_memory(tags=["a", "b"], links=["mem_abc"]))
    text = serialize_memory_document(memory)
    assert parse_memory_document(text) == memory
    assert parse_memory_document(text.replace("\n", "\r\n")) == memory


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        # 8.1 #12 closing delimiter followed by text
        ('---\nschema: "ecc.memory.v1"\n---NOT-A-DELIMITER\n\nbody\n', "closing frontmatter"),
        # 8.1 #13 no frontmatter at all
        ("just some text\n", "must start with --- frontmatter"),
        ("\ufeff---\nid: 1\n---\nbody", "must start with --- frontmatter"),
        ("---\n---\nbody\n", "closing frontmatter"),
        ("---\n\n---\nbody\n", "Invalid memory frontmatter line"),
        ("---\nkind: note\n---\nbody\n", "must use a JSON value"),
        ("---\nkind: NaN\n---\nbody\n", "must use a JSON value"),
        ("---\nbogus: 1\n---\nbody\n", "Unknown memory frontmatter field"),
        ('---\nkind: "note"\nkind: "note"\n---\nb\n', "Duplicate memory frontmatter field"),
        ('---\nkind: "note"\n---\nb\n', "is missing fields: schema, id, title"),
    ],
)
def test_parse_rejections(text: str, pattern: str) -> None:
    with pytest.raises(MemoryFormatError, match=pattern):
        parse_memory_document(text, "x.md")


def test_missing_fields_listed_in_canonical_camel_case() -> None:
    text = serialize_memory_document(full_memory())
    text = text.replace('source_harness: "claude"\n', "").replace(
        'created_at: "2026-07-26T10:00:00.000Z"\n', ""
    )
    with pytest.raises(MemoryFormatError, match=r"missing fields: sourceHarness, createdAt\.$"):
        parse_memory_document(text, "x.md")


def test_hand_edited_document_is_normalized() -> None:
    """Field order is free, keys may be padded, padded strings are trimmed, body re-trimmed."""
    lines = serialize_memory_document(full_memory()).split("\n")
    header = lines[1:14]
    header.reverse()
    header[0] = "  " + header[0].replace(": ", "  :  ", 1)
    text = (
        "---\n"
        + "\n".join(header).replace('"Title"', '"  Title  "')
        + "\n---\n\n\n  Body text  \n\n"
    )
    assert parse_memory_document(text) == normalize_memory(full_memory())


@pytest.mark.parametrize(
    ("overrides", "pattern"),
    [
        ({"schema": "ecc.memory.v999"}, "Unsupported memory schema"),  # 8.1 #14
        ({"targetHarnesses": ["../../escape"]}, "target harness"),  # 8.1 #15
        ({"sourceHarness": "Claude"}, "source harness"),  # 8.1 #16
        ({"tags": ["auth", "auth"]}, "duplicate"),  # 8.1 #17
        ({"tags": [" auth", "auth"]}, "duplicate"),
        ({"createdAt": "2026-07-26"}, "ISO-8601"),  # 8.1 #18
        ({"createdAt": "2026-02-30T00:00:00.000Z"}, "ISO-8601"),
        ({"updatedAt": "2026-07-26T23:59:60.000Z"}, "ISO-8601"),
        ({"trust": "reviewed"}, "memory trust"),  # 8.1 #19
        ({"id": "../../escape"}, "memory id"),  # 8.1 #29
        ({"id": "mem_../../escape"}, "memory id"),
        ({"body": "x" * 70 * 1024}, "body is too large"),  # 8.1 #30
        ({"body": "a\x00b"}, "control"),  # 8.1 #31
        ({"body": " \n\t "}, "non-whitespace context"),  # 8.1 #32
        ({"title": "\x1b[31mred"}, "control"),  # 8.1 #36
        ({"body": "copy \x1b]52;c;ZXZpbA==\x07 this"}, "control"),  # 8.1 #37
        ({"body": "bidi \u202e override"}, "bidirectional"),
        ({"title": "T" * 201}, "too long"),
        ({"title": "😀" * 101}, "too long"),  # UTF-16 units: 202
        ({"title": "T\u0085"}, "control"),
        ({"targetHarnesses": []}, 'at least one harness or "all"'),
        ({"kind": "task"}, "memory kind must be one of: context, decision, fact, handoff"),
        ({"links": ["mem_../../../secret"]}, "memory id"),
        ({"tags": ["t"] * 33}, r"tags has too many values \(maximum 32\)"),
        ([], "memory must be an object"),
    ],
)
def test_validation_rejections(overrides, pattern: str) -> None:
    value = full_memory(**overrides) if isinstance(overrides, dict) else overrides
    with pytest.raises(MemoryFormatError, match=pattern):
        normalize_memory(value)


def test_js_whitespace_semantics() -> None:
    """§1.8: BOM is trimmed like JS, U+0085 is not (and then is unsafe)."""
    assert js_trim("\ufeff T \u3000") == "T"
    assert js_trim("T\x1c") == "T\x1c"
    assert normalize_memory(full_memory(title="\ufeffT"))["title"] == "T"
    assert normalize_memory(full_memory(createdAt="0000-02-29T00:00:00.000Z"))["createdAt"]


def test_ids_and_order() -> None:
    """§1.7 ID shape; §4.2 ICU-like ID order, independent of locale."""
    memory_id = new_memory_id("2026-11-30T01:36:47.495Z")
    assert memory_id.startswith("mem_20261130_") and len(memory_id) == 33
    assert memory_id[13 + 12] == "4" and memory_id[13 + 16] in "89ab"
    ids = ["mem_a-b", "mem_a_b", "mem_a0b", "mem_aab", "mem_a"]
    assert sorted(ids, key=id_sort_key) == ["mem_a", "mem_a_b", "mem_a-b", "mem_a0b", "mem_aab"]


slug = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)
safe_text = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc"),
        blacklist_characters="\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069",
    ),
    min_size=1,
    max_size=80,
).filter(lambda s: js_trim(s) != "")
memories = st.fixed_dictionaries(
    {
        "schema": st.just("ecc.memory.v1"),
        "id": st.from_regex(r"mem_[a-z0-9][a-z0-9_-]{2,30}", fullmatch=True),
        "title": safe_text,
        "kind": st.sampled_from(["context", "decision", "note"]),
        "scope": st.sampled_from(["project", "team", "user"]),
        "trust": st.just("unreviewed"),
        "status": st.sampled_from(["active", "rejected", "superseded"]),
        "sourceHarness": slug,
        "targetHarnesses": st.lists(slug, min_size=1, max_size=4, unique=True),
        "tags": st.lists(slug, max_size=4, unique=True),
        "links": st.lists(
            st.from_regex(r"mem_[a-z0-9]{3,10}", fullmatch=True), max_size=3, unique=True
        ),
        "createdAt": st.just("2026-07-26T10:00:00.000Z"),
        "updatedAt": st.just("2026-07-26T10:00:00.000Z"),
        "body": st.text(min_size=1, max_size=300)
        .map(
            lambda s: "".join(
                c
                for c in s
                if c in "\t\n\r"
                or not (
                    ord(c) < 32
                    or 0x7F <= ord(c) <= 0x9F
                    or 0x202A <= ord(c) <= 0x202E
                    or 0x2066 <= ord(c) <= 0x2069
                    or 0xD800 <= ord(c) <= 0xDFFF
                )
            )
        )
        .filter(lambda s: js_trim(s) != ""),
    }
)


@settings(max_examples=150, deadline=None)
@given(memories)
def test_property_round_trip(memory) -> None:
    """Property: parse(serialize(m)) == normalize(m), and re-serializing is byte-stable."""
    normalized = normalize_memory(memory)
    text = serialize_memory_document(normalized)
    assert parse_memory_document(text) == normalized
    assert serialize_memory_document(parse_memory_document(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400) | st.builds(lambda t: "---\n" + t, st.text(max_size=400)))
def test_property_parse_raises_only_format_errors(text: str) -> None:
    """Property: arbitrary text either parses or raises MemoryFormatError, nothing else."""
    try:
        parse_memory_document(text)
    except MemoryFormatError:
        pass


def test_deeply_nested_json_value_is_a_format_error() -> None:
    text = "---\ntitle: " + "[" * 100000 + "\n---\nbody\n"
    with pytest.raises(MemoryFormatError):
        parse_memory_document(text)


@given(st.text(alphabet=st.characters(codec=None, blacklist_categories=())))
def test_utf16_length_counts_code_units(text: str) -> None:
    """The reference's limits count UTF-16 units: astral characters are two, lone surrogates one."""
    assert utf16_length(text) == len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)
