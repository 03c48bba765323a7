"""``search``: the checks of a query, the reference's lexical score and the results' excerpts.

Each scope's best rows come from its ranking segment (``ecc.vault.ranking``) merged with the
rows indexed since, which one SQL expression scores; a query the segment cannot answer, or an
index held only in memory, is scored by that expression alone. Both scorers read the weights
table in ``ecc.vault.ranking``, so they give the same scores.
"""

from __future__ import annotations

import json
import re
import sqlite3

from ecc.vault import ranking, unicode17
from ecc.vault.format import (
    JS_WHITESPACE,
    MEMORY_KINDS,
    MEMORY_TRUST_STATES,
    MemoryFormatError,
    as_enum,
    as_slug,
    js_trim,
    utf16_length,
    well_formed,
)
from ecc.vault.index import ScopeIndex
from ecc.vault.loading import ScopeLoad, validate_scopes, visibility_clause
from ecc.vault.ranking import (
    BODY_CAP,
    PHRASE_IN_BODY,
    PHRASE_IN_TITLE,
    TOKEN_IN_META,
    TOKEN_IN_TITLE,
    TOKEN_IS_TAG,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ecc.vault.service import VaultService

MAX_RESULTS = 100
DEFAULT_LIMIT = 20
MAX_QUERY_CHARS = 500
EXCERPT_CHARS = 240

_WHITESPACE_RUN = re.compile(f"[{JS_WHITESPACE}]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased maximal runs of Unicode letters, numbers, ``_`` and ``-`` (Unicode 17.0)."""
    return unicode17.tokenize(text)


def _fold(text: str) -> str:
    """The query as the index's lower-cased fields hold text (lone surrogates as U+FFFD)."""
    return well_formed(unicode17.lower(text))


def _collapse(text: str) -> str:
    return js_trim(_WHITESPACE_RUN.sub(" ", text))


def make_excerpt(body: str, query: str) -> str:
    """Up to 240 UTF-16 units of the collapsed body around the first query token."""
    text = _collapse(body)
    if utf16_length(text) <= EXCERPT_CHARS:
        return text
    lowered = unicode17.lower(text)
    positions = [lowered.find(token) for token in tokenize(js_trim(query))]
    positions = [position for position in positions if position >= 0]
    index16 = utf16_length(lowered[: min(positions)]) if positions else 0
    start = max(0, index16 - 60)
    units = text.encode("utf-16-le")
    total = len(units) // 2
    end = min(total, start + EXCERPT_CHARS)
    piece = units[start * 2 : end * 2].decode("utf-16-le", "ignore")  # never split a pair
    return ("…" if start > 0 else "") + piece + ("…" if start + EXCERPT_CHARS < total else "")


def normalize_limit(limit: Any) -> int:
    """The number of results asked for: the default when unusable, clamped to 1..100."""
    if limit is None or isinstance(limit, bool):
        return DEFAULT_LIMIT
    try:
        value = int(limit)
    except (TypeError, ValueError, OverflowError):
        return DEFAULT_LIMIT
    if value == 0:
        return DEFAULT_LIMIT
    return max(1, min(MAX_RESULTS, value))


def validate_query(query: Any) -> str:
    """The trimmed query; too long or holding control/bidi characters is an error."""
    text = js_trim(query) if isinstance(query, str) else ""
    if utf16_length(text) > MAX_QUERY_CHARS:
        raise MemoryFormatError(
            f"memory search query is too long (maximum {MAX_QUERY_CHARS} characters)."
        )
    if any(
        ord(ch) <= 0x1F
        or 0x7F <= ord(ch) <= 0x9F
        or 0x202A <= ord(ch) <= 0x202E
        or 0x2066 <= ord(ch) <= 0x2069
        for ch in text
    ):
        raise MemoryFormatError("memory search query must not contain control characters.")
    return text


def _rank_order(rows: list[Any]) -> None:
    """Sort ``(score, docid, updated_at, id_key, ...)`` rows: best score, newer, then ID."""
    rows.sort(key=lambda row: row[3])  # id key ascending
    rows.sort(key=lambda row: row[2], reverse=True)  # newer first
    rows.sort(key=lambda row: row[0], reverse=True)  # best score first


def search_memories(
    service: VaultService,
    query: Any,
    *,
    scopes: Any,
    kinds: Any,
    trust: Any,
    target_harness: Any,
    limit: Any,
    ranker: tuple[str, dict[str, Any], Callable[..., Any]] | None = None,
) -> dict[str, Any]:
    """``VaultService.search``: every argument checked before the scopes are loaded.

    ``ranker`` (a memory ranker plugin's name, its settings and ``ecc.vault.rerank``'s
    ``rerank_search``) re-orders the results; without one they are the exact search's alone.
    """
    text = validate_query(query)
    kind_list = None
    if kinds is not None:
        if isinstance(kinds, str):
            kinds = [kinds]
        from ecc.vault.format import as_array

        kind_list = as_array(
            list(kinds) if isinstance(kinds, tuple) else kinds,
            "kinds",
            len(MEMORY_KINDS),
            lambda entry: as_enum(entry, "memory kind", MEMORY_KINDS),
        )
    if trust is not None:
        as_enum(trust, "memory trust", MEMORY_TRUST_STATES)  # the only state: no filter
    # an empty harness is no filter, as in the reference (`--target-harness ''`)
    harness = as_slug(target_harness, "target harness") if target_harness else None
    count = normalize_limit(limit)
    requested = validate_scopes(scopes)
    load = service.load(requested)
    try:
        if ranker is not None:
            name, settings, rerank = ranker
            cache = service.cache_dir / "memory-index" if service.cache_dir else None
            ranked, done = rerank(load, text, kind_list, harness, count, name, settings, cache)
            if done:
                return {
                    "schemaVersion": "ecc.memory.search.v1",
                    "query": query if isinstance(query, str) else "",
                    "ranker": name,
                    "results": ranked,
                    "diagnostics": load.diagnostics(),
                }
        candidates: list[tuple[int, int, str, str, str, ScopeLoad]] = []
        for scope_load in load.scopes:
            for row in _rank(scope_load.index, text, kind_list, harness, count):
                candidates.append((*row, scope_load))
        _rank_order(candidates)
        results = []
        for score, docid, _updated, _key, _rel, scope_load in candidates[:count]:
            ((summary_json, body),) = scope_load.index.query(
                "SELECT summary, body FROM texts WHERE docid = ?", (docid,)
            )
            results.append(
                {
                    "memory": json.loads(summary_json),
                    "score": score,
                    "excerpt": make_excerpt(body, text),
                }
            )
        return {
            "schemaVersion": "ecc.memory.search.v1",
            "query": query if isinstance(query, str) else "",
            "results": results,
            "diagnostics": load.diagnostics(),
        }
    finally:
        load.close()


def _rank(
    index: ScopeIndex,
    text: str,
    kinds: list[str] | None,
    harness: str | None,
    limit: int,
) -> list[tuple[Any, ...]]:
    """The scope's best rows: the segment's (rebuilt when stale) merged with the delta's."""
    lowered = _fold(text)
    tokens = list(dict.fromkeys(unicode17.words(lowered)))
    if not index.persistent or not tokens or not all(t in lowered for t in tokens):
        return _score(index, text, kinds, harness, limit)
    _, size, delta = ranking.segment_state(index)
    if ranking.needs_build(size, delta):
        try:
            ranking.build_segment(index)
        except sqlite3.Error:
            return _score(index, text, kinds, harness, limit)
    segment = ranking.Segment(index)
    best = segment.top(lowered, tokens, kinds, harness, limit)
    rows = _score(index, text, kinds, harness, limit, after=segment.last)
    if best:
        scores = dict((docid, score) for score, docid in best)
        marks = ",".join("?" for _ in scores)
        for docid, updated_at, id_key, rel in index.query(
            f"SELECT docid, updated_at, id_key, rel FROM docs WHERE docid IN ({marks})",
            list(scores),
        ):
            rows.append((scores[docid], docid, updated_at, id_key, rel))
    _rank_order(rows)
    return rows[:limit]


def _score(
    index: ScopeIndex,
    text: str,
    kinds: list[str] | None,
    harness: str | None,
    limit: int,
    *,
    after: int = 0,
) -> list[tuple[Any, ...]]:
    """Score rows above docid ``after`` with one SQL expression (the delta, or everything)."""
    params: dict[str, Any] = {"limit": limit, "after": after}
    where = "docid > :after AND code IS NULL AND status = 'active'"
    where += visibility_clause(harness, params)
    if kinds is not None:
        names = []
        for number, kind in enumerate(kinds):
            params[f"k{number}"] = kind
            names.append(f":k{number}")
        where += f" AND kind IN ({','.join(names)})"
    if not text:
        score = "0"
    else:
        lowered = _fold(text)
        params["q"] = lowered
        parts = [
            f"(CASE WHEN instr(title_l, :q) > 0 THEN {PHRASE_IN_TITLE} "
            f"WHEN instr(body_l, :q) > 0 THEN {PHRASE_IN_BODY} ELSE 0 END)"
        ]
        for number, token in enumerate(dict.fromkeys(unicode17.words(lowered))):
            t = f":t{number}"
            params[f"t{number}"] = token
            params[f"d{number}"] = f"\n{token}\n"
            parts.append(
                f"(CASE WHEN instr(title_l, {t}) > 0 THEN {TOKEN_IN_TITLE} ELSE 0 END)"
                f" + (CASE WHEN instr(tags_d, :d{number}) > 0 THEN {TOKEN_IS_TAG} ELSE 0 END)"
                f" + (CASE WHEN instr(meta_l, {t}) > 0 THEN {TOKEN_IN_META} ELSE 0 END)"
                f" + (CASE WHEN instr(body_l, {t}) = 0 THEN 0 ELSE min({BODY_CAP}, "
                f"(body_len - length(replace(body_l, {t}, ''))) / length({t})) END)"
            )
        score = " + ".join(parts)
    having = " WHERE score > 0" if text else ""
    sql = (
        f"SELECT score, docid, updated_at, id_key, rel FROM ("
        f"SELECT ({score}) AS score, docid, updated_at, id_key, rel"
        f" FROM docs JOIN texts USING(docid) WHERE {where})"
        f"{having} ORDER BY score DESC, updated_at DESC, id_key ASC LIMIT :limit"
    )
    return index.query(sql, params)
