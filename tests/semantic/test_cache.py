"""The embeddings kept beside the memory indexes: stored, found again, forgotten."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
from ecc_semantic.cache import FILE, EmbeddingCache


def test_vectors_survive_the_process_and_are_private(tmp_path: Path) -> None:
    directory = tmp_path / "memory-index"
    first = EmbeddingCache(directory, "m1")
    first.put({("i1", "d1"): np.arange(4, dtype=np.float32)})
    first.close()
    again = EmbeddingCache(directory, "m1")
    found = again.get([("i1", "d1"), ("i1", "d2")])
    assert list(found) == [("i1", "d1")] and found[("i1", "d1")].tolist() == [0, 1, 2, 3]
    assert EmbeddingCache(directory, "another-model").get([("i1", "d1")]) == {}
    assert stat.S_IMODE(os.stat(directory / FILE).st_mode) == 0o600


def test_forgetting_keeps_only_the_named_digests_of_that_index(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, "m1")
    vector = np.ones(2, dtype=np.float32)
    cache.put({("i1", "a"): vector, ("i1", "b"): vector, ("i2", "a"): vector})
    assert cache.forget_others("i1", {"a"}) == 1
    assert set(cache.get([("i1", "a"), ("i1", "b"), ("i2", "a")])) == {("i1", "a"), ("i2", "a")}


def test_an_unwritable_directory_falls_back_to_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = EmbeddingCache(blocker / "memory-index", "m1")
    assert cache.path is None
    cache.put({("i1", "d1"): np.zeros(3, dtype=np.float32)})
    assert cache.count() == 1
