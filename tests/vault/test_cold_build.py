"""The cold index build's shortcuts give exactly the results of the plain code they bypass.

The common frontmatter shape is parsed without the line-by-line parser, the secret scan skips
the JSON form when it cannot differ, and the index keeps the body compressed: each is checked
against the exact path on generated and hostile inputs, and the index against the Markdown.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ecc.vault import format as memory_format
from ecc.vault import index as index_module
from ecc.vault import parse as memory_parse
from ecc.vault import ranking, unicode17
from ecc.vault import secrets as secrets_module
from ecc.vault.format import MemoryFormatError, serialize_memory_document
from ecc.vault.parse import parse_memory_document
from tests.vault.conftest import full_memory

CANONICAL = serialize_memory_document(
    full_memory(title='Auth "migration" é', tags=["auth", "db"], body="Line one\n\n  two ✓")
)
# the shape the one-pattern shortcut takes: a title without escapes, plain arrays
PLAIN = serialize_memory_document(
    full_memory(
        title="Auth migration é\u3000x",
        targetHarnesses=["claude", "codex"],
        tags=["auth", "db"],
        links=["mem_20260726_aaaa"],
        body="Line one\n\n  two ✓",
    )
)

# Edits that keep, bend or break the frontmatter: each is (old, new) applied once.
EDITS = [
    ("", ""),
    ('schema: "', 'schema:  "'),
    ('schema: "', 'schema:"'),
    ('"\nid:', '" \nid:'),
    ('"\nid:', '"\r\nid:'),
    ("\n---\n", "\r\n---\r\n"),
    ('tags: ["auth","db"]', 'tags: ["auth",\n"db"]'),
    ('tags: ["auth","db"]', 'tags: [ "auth" , "db" ]'),
    ('tags: ["auth","db"]', 'tags: ["auth","db"] x'),
    ('tags: ["auth","db"]', "tags: NaN"),
    ('tags: ["auth","db"]', "tags: [Infinity]"),
    ('tags: ["auth","db"]', "tags: [" * 3000 + "]" * 3000),
    ('tags: ["auth","db"]', 'tags: ["\\u0061uth"]'),
    ('tags: ["auth","db"]', "tags: [1, true, null]"),
    ('kind: "note"', 'kind: "note"\nkind: "note"'),
    ('kind: "note"', 'kind: "note"\nextra: 1'),
    ('kind: "note"', ""),
    ('kind: "note"\n', ""),
    ('kind: "note"', 'kind: "note"\n'),
    ('kind: "note"', ' kind: "note"'),
    ('kind: "note"', 'kind : "note"'),
    ('kind: "note"', 'kind: \ufeff"note"'),
    ('kind: "note"', 'kind: "note"\u2028'),
    ('kind: "note"', 'kind: "NOTE"'),
    ('title: "', 'title: "\\ud800'),
    ('scope: "project"\ntrust', 'trust: "unreviewed"\nscope: "project"\ntrust'),
    ('updated_at: "2026-07-26T10:00:00.000Z"', 'updated_at: "2026-07-26T10:00:00.000Z"\n'),
    ('schema: "ecc.memory.v1"\n', 'schema: "ecc.memory.v1"\nschema: "ecc.memory.v1"\n'),
]


def _outcome(parse, text: str) -> str:
    """repr of the result (``True`` and ``1`` differ) or the error's message."""
    try:
        return repr(parse(text))
    except MemoryFormatError as exc:
        return f"error: {exc}"


# Edits of PLAIN's values that its shortcut must refuse or take exactly as normalize does.
PLAIN_EDITS = [
    ('title: "Auth', 'title: " Auth'),
    ('title: "Auth', 'title: "\u3000Auth'),
    ('title: "Auth', 'title: "\x7fAuth'),
    ('title: "Auth', 'title: "\u202eAuth'),
    ('title: "Auth', 'title: "' + "a" * 200),
    ('title: "Auth migration é\u3000x"', 'title: ""'),
    ('title: "Auth migration é\u3000x"', 'title: "\u3000"'),
    ('title: "Auth', 'title: "\\"Auth'),
    ('["claude","codex"]', "[]"),
    ('["claude","codex"]', '["claude","claude"]'),
    ('["claude","codex"]', "[" + ",".join(f'"h{n}"' for n in range(33)) + "]"),
    ('["auth","db"]', '["auth","auth"]'),
    ('["auth","db"]', "[" + ",".join(f'"t{n}"' for n in range(33)) + "]"),
    ('["auth","db"]', '["Auth"]'),
    ('["auth","db"]', '["' + "a" * 65 + '"]'),
    ('["mem_20260726_aaaa"]', '["mem_20260726_aaaa","mem_20260726_aaaa"]'),
    ('["mem_20260726_aaaa"]', '["mem_x"]'),
    ('source_harness: "claude"', 'source_harness: "-claude"'),
    ('kind: "note"', 'kind: "notes"'),
    ('status: "active"', 'status: "superseded"'),
    ("2026-07-26T10:00:00.000Z", "2026-02-30T10:00:00.000Z"),
    ("2026-07-26T10:00:00.000Z", "2024-02-29T23:59:59.999Z"),
    ("2026-07-26T10:00:00.000Z", "2026-07-26T24:00:00.000Z"),
    ("2026-07-26T10:00:00.000Z", "2026-07-26T10:60:00.000Z"),
    ("2026-07-26T10:00:00.000Z", "0000-02-29T10:00:00.000Z"),
    ('id: "mem_', 'id: "mem_-'),
    ("two ✓", "two \x00"),
    ("Line one\n\n  two ✓", " \u3000 "),
]


def _exact(text: str) -> dict:
    """The document through the line-by-line parser only."""
    shortcuts = memory_parse._common_memory, memory_parse._common_frontmatter
    memory_parse._common_memory = lambda *args: None
    memory_parse._common_frontmatter = lambda *args: None
    try:
        return parse_memory_document(text, "doc.md")
    finally:
        memory_parse._common_memory, memory_parse._common_frontmatter = shortcuts


def _assert_shortcuts_agree(text: str) -> None:
    """The parse with its shortcuts gives what the line-by-line parser gives, error or not."""
    fast = _outcome(lambda doc: parse_memory_document(doc, "doc.md"), text)
    assert fast == _outcome(_exact, text)


def _edited(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        text = text.replace(old, new, 1)
    return text


def test_the_common_shape_takes_the_shortcut() -> None:
    closing = CANONICAL.index("\n---\n", 4)
    assert memory_parse._common_frontmatter(CANONICAL, 4, closing) is not None
    # an escape in the title is left to the JSON decoder
    assert memory_parse._common_memory(CANONICAL, 4, closing) is None
    memory = memory_parse._common_memory(PLAIN, 4, PLAIN.index("\n---\n", 4))
    assert memory is not None and repr({**memory, "body": "Line one\n\n  two ✓"}) == repr(
        _exact(PLAIN)
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PLAIN_EDITS + EDITS), min_size=1, max_size=3))
def test_pattern_shortcut_and_exact_parser_agree(edits: list[tuple[str, str]]) -> None:
    _assert_shortcuts_agree(_edited(PLAIN, edits))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(EDITS), min_size=1, max_size=3))
def test_shortcut_and_exact_parser_agree(edits: list[tuple[str, str]]) -> None:
    _assert_shortcuts_agree(_edited(CANONICAL, edits))


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list('abkK\u212a"\\:,[]{} -_0123456789\n\t\r"\u00e9')), max_size=40
    ),
    st.sampled_from(["title", "tags", "body"]),
)
def test_shortcut_and_exact_parser_agree_on_noise(noise: str, field: str) -> None:
    marker = {"title": 'title: "', "tags": "tags: [", "body": "\n---\n\n"}[field]
    for document in (CANONICAL, PLAIN):
        at = document.index(marker) + len(marker)
        _assert_shortcuts_agree(document[:at] + noise + document[at:])


# Pieces that make or nearly make secret shapes, raw and after JSON escaping ("\n" + "pm_...").
SECRET_PIECES = [
    "sk-", "SK-", "sK-", "rk_live_", "_live_", "npm_", "pm_", "hf_", "ghp_", "gho_", "github_pat_",
    "AIza", "aiza", "xoxb-", "xoxp-", "AKIA", "ASIA", "-----BEGIN RSA PRIVATE KEY-----",
    "\u212a", "s\u212a-", "\n", "\r", "\t", '"', "\\", " ", "-", "_", "ABCDEFGHIJ", "abcdefghij",
    "0123456789", "é", "İ",
]  # fmt: skip


def _full_scan(memory: dict) -> list[str]:
    """The scan without any prefilter: fields and JSON form, every pattern."""
    fields = "\n".join(secrets_module._strings(memory))
    form = json.dumps(dict(memory), ensure_ascii=False, separators=(",", ":"))
    return secrets_module._scan([fields, form], prefilter=False)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(SECRET_PIECES), max_size=12),
    st.lists(st.sampled_from(SECRET_PIECES), max_size=6),
)
def test_secret_scan_shortcut_finds_what_the_full_scan_finds(body: list, title: list) -> None:
    memory = full_memory(body="".join(body) or "x", title="".join(title) or "t")
    assert secrets_module.find_secrets_in_memory(memory) == _full_scan(memory)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(SECRET_PIECES), max_size=12),
    st.lists(st.sampled_from(SECRET_PIECES), max_size=6),
)
def test_the_word_prefilter_never_misses_what_the_full_scan_finds(body: list, title: list) -> None:
    """The index build's cheap test reads the body's distinct words: it may raise a false alarm
    (the full scan then runs), never miss a secret the full scan would find."""
    memory = full_memory(body="".join(body) or "x", title="".join(title) or "t")
    words = ranking.body_terms(unicode17.lower(memory["body"]))[0]
    if _full_scan(memory):
        assert secrets_module.may_hold_secret(memory, words)


def _joined_prefilter(memory: dict, words: list[str]) -> bool:
    """The word prefilter on one joined text (fields, then the words), as it first was."""
    parts = [value for key, value in memory.items() if key != "body" and isinstance(value, str)]
    for key, value in memory.items():
        if key != "body" and isinstance(value, list):
            parts.extend(value)
    text = "\n".join([*parts, *words]).lower()
    if "_" not in text and "-" not in text:
        return any(marker in text for marker in secrets_module._PLAIN_MARKERS)
    return "\npm_" in text or any(marker in text for marker in secrets_module._WORD_MARKERS)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(SECRET_PIECES), max_size=12),
    st.lists(st.sampled_from(SECRET_PIECES), max_size=6),
    st.sampled_from(["mem_20260726_plain", "mem_akia0", "mem_x-sk-0", "mem_pm_npm_"]),
)
def test_the_word_prefilter_on_two_texts_answers_as_on_one(
    body: list, title: list, memory_id: str
) -> None:
    """The fields and the words searched apart: the same answer as the one joined text."""
    memory = full_memory(id=memory_id, body="".join(body) or "x", title="".join(title) or "t")
    words = list(ranking.body_terms(unicode17.lower(memory["body"]))[0])
    expected = _joined_prefilter(memory, words)
    assert secrets_module.may_hold_secret(memory, words) == expected
    plain = full_memory(id=memory_id, body="x", title="t")  # the words alone decide, or the ID
    assert secrets_module.may_hold_secret(plain, words) == _joined_prefilter(plain, words)


def test_the_word_prefilter_clears_plain_prose_and_flags_each_shape() -> None:
    plain = full_memory(body="auth migration rollout: the lock is held twice", title="Plain")
    assert not secrets_module.may_hold_secret(plain, ["auth", "migration", "rollout"])
    for body in ("x\npm_" + "a" * 24, "-----BEGIN RSA PRIVATE KEY-----", "AKIA" + "A" * 16):
        memory = full_memory(body=body)
        words = ranking.body_terms(unicode17.lower(body))[0]
        assert secrets_module.may_hold_secret(memory, words), body


def test_a_token_only_the_json_form_shows_is_still_found() -> None:
    memory = full_memory(body="line\npm_" + "a" * 24)
    assert secrets_module.find_secrets_in_memory(memory) == ["npm token"] == _full_scan(memory)


PROSE = (
    "the of and to in is that for on with as auth migration rollout database cache index worker"
    " queue deploy token schema retry latency budget review harness session branch merge conflict"
    " release test flaky lint config plugin adapter vault memory search doctor backlink handoff"
    " decision runbook Straße naïve 日本語 we should never run it twice because the lock is held"
)
WORDS = PROSE.split()


def _write_vault(repo: Path, count: int) -> int:
    """``count`` memories of a few paragraphs each; returns the Markdown's total bytes."""
    rng = random.Random(count)
    total = 0
    for n in range(count):
        kind = rng.choice(("note", "fact", "decision", "runbook"))
        memory = full_memory(
            id=f"mem_20260726_{n:020x}",
            kind=kind,
            title=" ".join(rng.choice(WORDS) for _ in range(5)).capitalize(),
            tags=sorted(set(rng.choice(WORDS[12:40]) for _ in range(2))),
            body="\n\n".join(
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 40)))
                for _ in range(rng.randint(2, 6))
            ),
        )
        path = repo / ".ecc/memory/project" / f"{kind}s" / f"{memory['id']}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = serialize_memory_document(memory).encode()
        path.write_bytes(data)
        total += len(data)
    return total


def _index_bytes(isolated_env: Path) -> int:
    files = list((isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3*"))
    assert files
    return sum(path.stat().st_size for path in files)


def test_the_index_is_no_larger_than_the_markdown(make_service, repo: Path, isolated_env) -> None:
    markdown = _write_vault(repo, 400)
    service = make_service()
    found = service.search("migration rollout", scopes=["project"])
    assert found["results"]
    memory_only = make_service(cache_dir=None).search("migration rollout", scopes=["project"])
    assert found["results"] == memory_only["results"]
    assert _index_bytes(isolated_env) <= markdown


def test_an_index_of_another_layout_is_rebuilt_not_misread(
    make_service, repo: Path, isolated_env
) -> None:
    _write_vault(repo, 30)
    expected = make_service(cache_dir=None).search("migration", scopes=["project"])
    make_service().search("migration", scopes=["project"])
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    with db:  # under the previous version's name, rows that no longer match the files
        db.execute("UPDATE meta SET value = 'ecc-memory-index-2' WHERE key = 'version'")
        db.execute("DELETE FROM docs")
    db.close()
    assert make_service().search("migration", scopes=["project"]) == expected
    db = sqlite3.connect(path)
    version = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
    db.close()
    assert version == index_module.INDEX_VERSION != "ecc-memory-index-2"


def test_body_word_counts_are_kept_as_bytes_capped_at_255(
    make_service, repo: Path, isolated_env
) -> None:
    """The segment keeps a word's count up to 255 (a score counts a token's occurrences up to
    BODY_CAP): the counts are kept as bytes, and a word used more often ranks as before."""
    words, counts = ranking.body_terms("migration " * 300 + "rollout rollout auth")
    assert words == ("migration", "rollout", "auth")
    assert counts == bytes([255, 2, 1])
    notes = repo / ".ecc/memory/project/notes"
    notes.mkdir(parents=True)
    bodies = ["migration " * 300, "migration " * 4, "rollout migration"] + ["auth"] * 300
    for n, body in enumerate(bodies):  # enough rows for the build to write a segment
        memory = full_memory(id=f"mem_20260726_{n:020x}", title=f"Note {n}", body=body)
        (notes / f"{memory['id']}.md").write_text(serialize_memory_document(memory))
    expected = make_service(cache_dir=None).search("migration", scopes=["project"])
    found = make_service().search("migration", scopes=["project"])  # scored from the segment
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT value FROM meta WHERE key = 'seg_size'").fetchone() == (303,)
    finally:
        db.close()
    assert found == expected
    # the phrase in the body (5) and the token's occurrences, up to 5
    assert [result["score"] for result in found["results"]] == [10, 9, 6]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_term_counts_are_the_tokenizer_words(text: str) -> None:
    lowered = unicode17.lower(text)
    assert ranking.term_counts(lowered) == Counter(unicode17.words(lowered))


def test_secret_scan_walks_nested_values_as_before() -> None:
    memory = {"a": {"b": ["x", {"c": "ghp_" + "A1" * 18}]}, "d": [1, "y"], "e": 3}
    assert secrets_module.find_secrets_in_memory(memory) == ["GitHub token"] == _full_scan(memory)


def test_a_segment_rebuilt_later_counts_words_from_the_bodies(
    make_service, repo: Path, isolated_env
) -> None:
    """A process that did not index the rows has no word counts in memory: it reads bodies."""
    _write_vault(repo, 300)
    expected = make_service(cache_dir=None).search("migration rollout", scopes=["project"])
    assert make_service().search("migration rollout", scopes=["project"]) == expected
    (path,) = (isolated_env / ".cache/ecc/memory-index").glob("*.sqlite3")
    db = sqlite3.connect(path)
    with db:  # as if the segment had never been built
        db.execute("DELETE FROM meta WHERE key LIKE 'seg_%'")
        db.execute("DELETE FROM seg_keys")
    db.close()
    assert make_service().search("migration rollout", scopes=["project"]) == expected
    db = sqlite3.connect(path)
    size = db.execute("SELECT value FROM meta WHERE key = 'seg_size'").fetchone()[0]
    db.close()
    assert int(size) == 300


def _instant_by_datetime(text: str) -> bool:
    """The plain check the timestamp validator shortcuts: the calendar of a datetime."""
    from datetime import datetime

    if memory_format.TIMESTAMP_RE.fullmatch(text) is None:
        return False
    year, month, day, hour, minute, second = (
        int(text[at : at + width])
        for at, width in ((0, 4), (5, 2), (8, 2), (11, 2), (14, 2), (17, 2))
    )
    try:
        datetime(year or 2000, month, day, hour, minute, second)
    except ValueError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(
    st.integers(0, 9999), st.integers(0, 99), st.integers(0, 99),
    st.integers(0, 99), st.integers(0, 99), st.integers(0, 99),
)  # fmt: skip
def test_timestamp_shortcut_agrees_with_the_calendar(
    year: int, month: int, day: int, hour: int, minute: int, second: int
) -> None:
    text = f"{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.000Z"
    expected = _instant_by_datetime(text)
    for _ in range(2):  # the second answer comes from the per-date cache
        try:
            assert memory_format.as_timestamp(text, "t") == text
            valid = True
        except MemoryFormatError:
            valid = False
        assert valid == expected, text


def test_timestamp_shortcut_knows_leap_years_and_year_zero() -> None:
    for text, valid in (
        ("2024-02-29T23:59:59.999Z", True), ("2023-02-29T00:00:00.000Z", False),
        ("0000-02-29T00:00:00.000Z", True), ("1900-02-29T00:00:00.000Z", False),
        ("2026-04-31T00:00:00.000Z", False), ("2026-01-01T24:00:00.000Z", False),
        ("2026-01-01T00:60:00.000Z", False), ("2026-01-01T00:00:60.000Z", False),
    ):  # fmt: skip
        assert _instant_by_datetime(text) == valid, text
        for _ in range(2):
            try:
                memory_format.as_timestamp(text, "t")
                assert valid, text
            except MemoryFormatError:
                assert not valid, text


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_ascii_body_shortcut_finds_the_unsafe_characters_the_pattern_finds(text: str) -> None:
    expected = memory_format._UNSAFE_BODY.search(text) is not None
    assert memory_format.has_unsafe_characters(text, body=True) == expected


def test_ascii_body_shortcut_refuses_each_control_but_tab_and_line_breaks() -> None:
    for code in range(128):
        unsafe = (code < 0x20 and chr(code) not in "\t\n\r") or code == 0x7F
        assert memory_format.has_unsafe_characters(f"a{chr(code)}b", body=True) == unsafe


def test_the_markers_without_an_underscore_or_hyphen_are_the_plain_ones() -> None:
    """The prefilter searches a text without "_" or "-" for these alone."""
    plain = tuple(m for m in secrets_module._WORD_MARKERS if "_" not in m and "-" not in m)
    assert plain == secrets_module._PLAIN_MARKERS


def _closing_by_pattern(text: str, start: int) -> tuple[int, int] | None:
    match = memory_parse._CLOSING.search(text, start)
    return None if match is None else (match.start(), match.end())


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("-\r\nx ")), max_size=40), st.integers(0, 6))
def test_closing_marker_search_agrees_with_the_pattern(text: str, start: int) -> None:
    start = min(start, len(text))
    assert memory_parse._closing_marker(text, start) == _closing_by_pattern(text, start)


def test_closing_marker_search_on_edge_cases() -> None:
    for text, start in (
        ("---\nx\n---", 4), ("---\nx\r\n---\r\n", 4), ("---\r\n\r\n---", 5), ("---\n\n----\n", 4),
        ("---\nx\n---y\n---\n", 4), ("---\n\r\n---\rz", 4), ("---\n\n---", 5), ("---\n---\n", 3),
        ("\r\n---", 1),
    ):  # fmt: skip
        assert memory_parse._closing_marker(text, start) == _closing_by_pattern(text, start), text
