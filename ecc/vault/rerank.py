"""A memory search re-ordered by a ranker plugin (``ecc memory search --semantic``).

The exact search (``ecc.vault.search``) stays the default and is untouched: this module runs
only when a ranker is asked for, and imports nothing on the default path. The candidates a
ranker sees are the exact search's best :data:`POOL` matches in its order, then, when the
searched scopes hold at most :data:`RECALL_MAX` eligible memories, every one it did not match
at all (score 0): a memory that shares no word with the query ("authentication" for "sign-in
problems") can only be found that way. The ranker (``ecc_memory_rerank``, group
``ecc.memory_rankers``) answers with the order to show; the results keep the exact search's
``score`` and gain the ranker's ``similarity``.
"""

from __future__ import annotations

import hashlib
import json

from ecc.contract.errors import EccError
from ecc.vault.search import _rank, _rank_order, _score, make_excerpt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.loading import VaultLoad

GROUP = "ecc.memory_rankers"
HOOK = "ecc_memory_rerank"
POOL = 50  # the exact search's best matches a ranker re-orders
RECALL_MAX = 1000  # up to this many eligible memories, the unmatched ones are candidates too
# what to install for the ranker ``--semantic`` names (the core never imports it)
INSTALL_HINTS = {"semantic": "install the ecc-semantic plugin (pip install ecc-semantic)"}


def memory_text(summary: dict[str, Any], body: str) -> str:
    """What a memory says, as a ranker reads it: title, tags and body, one per line."""
    return f"{summary.get('title', '')}\n{' '.join(summary.get('tags') or [])}\n{body}"


def rerank_search(
    load: VaultLoad,
    text: str,
    kinds: list[str] | None,
    harness: str | None,
    count: int,
    ranker: str,
    settings: dict[str, Any],
    cache_dir: Any,
) -> tuple[list[dict[str, Any]], bool]:
    """The results of ``count`` best memories in the ranker's order, and whether it ranked.

    An empty query has nothing to rank by: the caller shows the exact search's results.
    """
    from ecc.contract.types import MemoryCandidate
    from ecc.runtime.paths import sha256_hex

    if not text:
        return [], False
    rows: list[tuple[Any, ...]] = []
    whole: list[str] = []
    for position, scope_load in enumerate(load.scopes):
        index = scope_load.index
        stem = sha256_hex(index.key)[:32]  # the index file's name (``index_path``)
        matched = _rank(index, text, kinds, harness, POOL)
        everyone = _score(index, "", kinds, harness, RECALL_MAX + 1)
        if len(everyone) > RECALL_MAX:
            everyone = []  # too many to offer whole: the exact matches alone
        elif kinds is None and harness is None:
            whole.append(stem)
        seen = {row[1] for row in matched}
        for row in matched + [row for row in everyone if row[1] not in seen]:
            rows.append((*row, position, stem))
    matched_rows = [row for row in rows if row[0] > 0]
    _rank_order(matched_rows)
    unmatched = [row for row in rows if row[0] <= 0]
    _rank_order(unmatched)
    ordered = matched_rows[:POOL] + unmatched
    candidates = []
    texts: dict[str, tuple[Any, ...]] = {}
    for score, docid, _updated, _key, _rel, position, stem in ordered:
        scope_load = load.scopes[position]
        ((summary_json, body),) = scope_load.index.query(
            "SELECT summary, body FROM texts WHERE docid = ?", (docid,)
        )
        summary = json.loads(summary_json)
        said = memory_text(summary, body)
        key = f"{position}:{docid}"
        texts[key] = (summary, body, score)
        candidates.append(
            MemoryCandidate(
                key=key,
                memory_id=summary["id"],
                scope=scope_load.scope,
                index=stem,
                digest=hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest(),
                text=said,
                score=score,
            )
        )
    answer = call_ranker(ranker, text, candidates, whole, cache_dir, settings)
    results = []
    shown: set[str] = set()
    for key, similarity in answer:
        if key not in texts or key in shown:
            continue
        shown.add(key)
        summary, body, score = texts[key]
        results.append(
            {
                "memory": summary,
                "score": score,
                "similarity": round(float(similarity), 4),
                "excerpt": make_excerpt(body, text),
            }
        )
        if len(results) == count:
            break
    return results, True


def call_ranker(
    ranker: str,
    query: str,
    candidates: list[Any],
    whole: list[str],
    cache_dir: Any,
    settings: dict[str, Any],
) -> list[tuple[str, float]]:
    """The answer of the ranker plugin ``ranker`` (its entry point alone is loaded)."""
    from ecc.runtime.plugins.sole import call_sole

    answer = call_sole(
        GROUP,
        ranker,
        HOOK,
        name=ranker,
        query=query,
        candidates=candidates,
        whole_indexes=whole,
        cache_dir=cache_dir,
        settings=settings,
    )
    if answer is None:
        hint = INSTALL_HINTS.get(ranker, f"install a plugin with entry point {GROUP}:{ranker}")
        raise EccError(
            f"No memory ranker named {ranker!r} is installed (or ECC_PLUGINS leaves it out): "
            f'{hint}, or set memory.ranker to "".'
        )
    return pairs(ranker, answer)


def pairs(ranker: str, answer: Any) -> list[tuple[str, float]]:
    """The ranker's answer as ``(key, similarity)`` pairs; anything else is its error, in one
    line (a plugin's mistake must not end the search in a traceback)."""
    try:
        return [(str(key), float(similarity)) for key, similarity in answer]
    except (TypeError, ValueError, OverflowError):
        raise EccError(
            f"Memory ranker {ranker!r} answered something other than (key, similarity) pairs."
        ) from None
