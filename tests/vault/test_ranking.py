"""The segment scorer (ecc.vault.ranking) gives exactly the scores, order and results of the plain
SQL expression it replaces, on vaults whose words nest inside one another, in any mix of
segment, delta and removed rows."""

from __future__ import annotations

import random
import sqlite3
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecc.vault import ranking, segment, unicode17
from ecc.vault.backend import load_backend
from ecc.vault.format import MEMORY_KINDS, serialize_memory_document
from ecc.vault.search import tokenize
from ecc.vault.service import VaultService
from tests.vault.conftest import full_memory

# Words that contain one another, repeat letters (overlapping matches), or change under lower().
WORDS = [
    "ab", "abab", "aba", "ba", "b", "a-b", "a_b", "rollout", "roll", "out", "migration",
    "ÄBC", "äb", "İx", "straße", "ß", "σς", "日本", "日本語", "x1", "11", "1", "test", "latest",
]  # fmt: skip
# ...and many rarer ones built from the same syllables: sparse postings, tokens in many words.
_SYLLABLES = ["ab", "ba", "ro", "ll", "ou", "t", "ß", "日", "1"]
RARE = sorted({"".join(random.Random(n).choices(_SYLLABLES, k=1 + n % 4)) for n in range(600)})
PUNCT = [" ", " ", " ", "\n", ". ", ", ", "/", "!", "\t", " - "]


def _text(rng: random.Random, low: int, high: int, *, lines: bool = True) -> str:
    parts = []
    for _ in range(rng.randint(low, high)):
        parts.append(rng.choice(RARE if rng.random() < 0.4 else WORDS))
        parts.append(rng.choice(PUNCT if lines else PUNCT[:3] + PUNCT[4:8]))
    return "".join(parts).strip() or "x"


def _memory(rng: random.Random, number: int, scope: str) -> dict:
    day = 1 + rng.randrange(5)  # few distinct timestamps: ties fall to the ID
    return full_memory(
        id=f"mem_2026010{day}_{number:04}{rng.getrandbits(64):016x}",
        title=_text(rng, 1, 4, lines=False),
        body=_text(rng, 0, 40),
        kind=rng.choice(MEMORY_KINDS),
        scope=scope,
        status="active" if rng.random() < 0.85 else "superseded",
        sourceHarness=rng.choice(["claude", "codex", "gemini", "roll-out"]),
        targetHarnesses=rng.choice([["all"], ["claude"], ["codex", "gemini"]]),
        tags=sorted(rng.sample(["ab", "roll", "x1", "test", "a-b"], rng.randint(0, 2))),
        createdAt=f"2026-01-0{day}T10:00:00.000Z",
        updatedAt=f"2026-01-0{day}T10:00:00.000Z",
    )


def _write(repo: Path, memory: dict) -> Path:
    path = repo / ".ecc/memory" / memory["scope"] / f"{memory['kind']}s" / f"{memory['id']}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(serialize_memory_document(memory))
    return path


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory):
    """A 403-memory project + team vault, its cache, and one service per scoring path."""
    root = tmp_path_factory.mktemp("ranking")
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".ecc/memory/project").mkdir(parents=True)
    (repo / ".ecc/memory/project/.gitignore").write_text("*\n!.gitignore\n")
    rng = random.Random(7)
    paths = [_write(repo, _memory(rng, n, rng.choice(["project", "team"]))) for n in range(400)]
    for number, body in enumerate(["rotrotrot rotrot abrot", "rot rotrot", "xrotrotrotrotrot"]):
        memory = _memory(rng, 900 + number, "project")  # a rare word many times: sparse, capped
        paths.append(_write(repo, {**memory, "body": body, "status": "active"}))
    env = {"HOME": str(root)}

    def service(cache: str | None) -> VaultService:
        cache_dir = root / cache if cache else None
        return VaultService(load_backend("files"), cwd=repo, env=env, cache_dir=cache_dir)

    return {"repo": repo, "paths": paths, "rng": rng, "service": service}


QUERIES = [
    "ab", "a", "b", "abab", "ab ab", "aba b", "roll out", "rollout", "migration rollout",
    "a-b", "a_b", "ß", "STRASSE", "straße", "ÄBC", "äb", "İx", "i̇x", "σ", "日本", "1", "11 x1",
    "test", "tes", "claude", "codex", "roll-out", "project", "note", "x", "b, ab", "ab.",
    "baba", "abro", "ouou", "tß", "日1", "ßab", "rot", "abab ba",
]  # fmt: skip


NEVER = 10**9  # a MIN_DELTA that never builds a segment: every row scored by SQL


def _search(vault, monkeypatch, min_delta: int, query: str, **kwargs) -> dict:
    """Plain SQL scoring on its own warm cache, or the segment (built when ``min_delta`` allows)."""
    monkeypatch.setattr(segment, "MIN_DELTA", min_delta)
    service = vault["service"]("plain-cache" if min_delta == NEVER else "segment-cache")
    kwargs.setdefault("limit", 100)
    return service.search(query, scopes=["project", "team"], **kwargs)


def _compare(vault, queries, monkeypatch, min_delta: int) -> None:
    for query in queries:
        for kwargs in (
            {}, {"kinds": ["note", "decision"]}, {"target_harness": "codex"}, {"limit": 1},
            {"limit": 3}, {"limit": 20},
        ):  # fmt: skip
            expected = _search(vault, monkeypatch, NEVER, query, **kwargs)
            got = _search(vault, monkeypatch, min_delta, query, **kwargs)
            assert got == expected, (query, kwargs)


def _segment_sizes(vault) -> list[int]:
    sizes = []
    for path in (vault["repo"].parent / "segment-cache/memory-index").glob("*.sqlite3"):
        with sqlite3.connect(path) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'seg_size'").fetchone()
            sizes.append(int(row[0]) if row else 0)
    return sorted(sizes)


def test_segment_scores_equal_the_sql_expression(vault, monkeypatch) -> None:
    _compare(vault, QUERIES, monkeypatch, min_delta=0)  # everything in the segment
    assert len(_segment_sizes(vault)) == 2 and sum(_segment_sizes(vault)) == 403
    # and both equal a search without any cache (the in-memory index)
    for query in QUERIES[:6]:
        uncached = vault["service"](None).search(query, scopes=["project", "team"], limit=100)
        assert uncached == _search(vault, monkeypatch, 0, query)


def test_segment_with_delta_and_removed_rows(vault, monkeypatch) -> None:
    _compare(vault, QUERIES[:8], monkeypatch, min_delta=0)
    rng, paths = vault["rng"], vault["paths"]
    for path in paths[:20]:  # edited in place: removed from the segment, back in the delta
        path.write_text(path.read_text().replace("ab", "ba", 1))
    for path in paths[20:30]:
        path.unlink()
    for number in range(400, 430):
        paths.append(_write(vault["repo"], _memory(rng, number, "project")))
    _compare(vault, QUERIES, monkeypatch, min_delta=NEVER - 1)  # segment + delta, no rebuild
    assert sum(_segment_sizes(vault)) == 403
    _compare(vault, QUERIES[:8], monkeypatch, min_delta=0)  # rebuilt
    assert sum(_segment_sizes(vault)) == 423


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet="aAbB -_.ßσς1İ日本xrotlu", min_size=1, max_size=12))
def test_any_query_scores_the_same(vault, monkeypatch, query: str) -> None:
    assert _search(vault, monkeypatch, 0, query) == _search(vault, monkeypatch, NEVER, query)


def test_word_runs_are_the_tokenizer_classes() -> None:
    """The word runs match exactly letters, numbers, ``_`` and ``-`` (the spec's token classes):
    as Python's Unicode data says for what it knows, and Unicode 17.0's additions beyond it."""
    added = {
        code
        for start, end in unicode17.WORD_RANGES_ADDED
        for code in range(start, end + 1)
        if unicodedata.category(chr(code)) == "Cn"
    }
    mismatched = [
        code
        for code in range(sys.maxunicode + 1)
        if bool(ranking.WORD_RUN.fullmatch(chr(code)))
        != (chr(code) in "_-" or unicodedata.category(chr(code))[0] in "LN" or code in added)
    ]
    assert mismatched == []
    assert tokenize("Straße, a-b_c! 日本語 x1") == ["straße", "a-b_c", "日本語", "x1"]
