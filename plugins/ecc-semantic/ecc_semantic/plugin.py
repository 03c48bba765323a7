"""The ``semantic`` memory ranker (entry point ``ecc.memory_rankers:semantic``).

ecc hands it a search's candidates: the exact search's best matches and, in a small vault, the
memories the exact search did not match at all. It orders them by the cosine similarity of
their embedding to the query's. An exact match always stays among the results (re-ordered); a
memory the exact search missed is shown only when its similarity reaches ``min_similarity``
(``[memory.ranker_settings]``, default 0.25), so an unrelated query does not list the vault.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecc.contract.hookspecs import hookimpl

NAME = "semantic"
MIN_SIMILARITY = 0.25

_encoder: Any = None  # loaded once per process (the MCP server answers many searches)


def encoder() -> Any:
    global _encoder
    if _encoder is None:
        from ecc_semantic.encoder import Encoder

        _encoder = Encoder()
    return _encoder


def min_similarity(settings: dict[str, Any]) -> float:
    from ecc.contract.errors import EccError

    value = settings.get("min_similarity", MIN_SIMILARITY)
    if isinstance(value, bool) or not isinstance(value, int | float) or not -1 <= value <= 1:
        raise EccError("memory.ranker_settings.min_similarity must be a number from -1 to 1.")
    return float(value)


def rank(
    query: str,
    candidates: list[Any],
    whole_indexes: list[str],
    cache_dir: Path | None,
    settings: dict[str, Any],
) -> list[tuple[str, float]]:
    """``(key, similarity)`` best first; ties keep the exact search's order."""
    import numpy as np

    from ecc_semantic.cache import EmbeddingCache
    from ecc_semantic.encoder import MODEL

    floor = min_similarity(settings)
    model = encoder()
    cache = EmbeddingCache(cache_dir, MODEL)
    try:
        keys = [(candidate.index, candidate.digest) for candidate in candidates]
        stored = cache.get(keys)
        missing = list(dict.fromkeys(key for key in keys if key not in stored))
        if missing:
            texts = {(c.index, c.digest): c.text for c in candidates}
            fresh = model.encode([texts[key] for key in missing])
            new = dict(zip(missing, fresh, strict=True))
            cache.put(new)
            stored.update(new)
        for index_id in whole_indexes:
            cache.forget_others(index_id, {c.digest for c in candidates if c.index == index_id})
    finally:
        cache.close()
    if not candidates:
        return []
    wanted = model.encode([query])[0]
    matrix = np.stack([stored[key] for key in keys])
    similarities = matrix @ wanted
    order = sorted(range(len(candidates)), key=lambda i: -float(similarities[i]))  # stable
    return [
        (candidates[i].key, float(similarities[i]))
        for i in order
        if candidates[i].score > 0 or similarities[i] >= floor
    ]


@hookimpl
def ecc_memory_rerank(
    name: str,
    query: str,
    candidates: list[Any],
    whole_indexes: list[str],
    cache_dir: Path | None,
    settings: dict[str, Any],
) -> list[tuple[str, float]] | None:
    if name != NAME:
        return None
    from ecc.contract.errors import EccError
    from ecc_semantic.encoder import ModelMissing

    try:
        return rank(query, candidates, whole_indexes, cache_dir, settings)
    except ModelMissing as exc:
        raise EccError(
            f"The semantic ranker's model is missing ({exc}): reinstall ecc-semantic."
        ) from None


@hookimpl
def ecc_doctor_checks(config: Any) -> list[dict[str, Any]]:
    from ecc_semantic.encoder import MODEL, ModelMissing, model_dir

    try:
        folder = model_dir()
    except ModelMissing as exc:
        return [
            {
                "name": "memory ranker semantic",
                "level": "fail",
                "detail": str(exc),
                "fix": "Reinstall ecc-semantic (pip install --force-reinstall ecc-semantic).",
            }
        ]
    return [{"name": "memory ranker semantic", "level": "ok", "detail": f"{MODEL} in {folder}"}]
