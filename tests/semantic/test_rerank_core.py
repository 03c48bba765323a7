"""The core's side of a memory ranker (``ecc.vault.rerank``): what it offers and what it takes."""

from __future__ import annotations

import pytest

from ecc.contract.errors import EccError
from ecc.vault.rerank import memory_text, pairs


def test_a_rankers_answer_must_be_pairs() -> None:
    assert pairs("acme", [("0:1", 0.5), ["0:2", 1]]) == [("0:1", 0.5), ("0:2", 1.0)]
    for wrong in (3, [("0:1",)], [("0:1", "high")], "ab"):
        with pytest.raises(EccError, match="answered something other than"):
            pairs("acme", wrong)


def test_a_memory_reads_as_title_tags_and_body() -> None:
    summary = {"title": "Login", "tags": ["auth", "sso"]}
    assert memory_text(summary, "Sign-in uses SSO.") == "Login\nauth sso\nSign-in uses SSO."
    assert memory_text({"title": "T"}, "") == "T\n\n"
