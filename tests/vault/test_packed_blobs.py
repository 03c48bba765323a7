"""The packed summary+body blobs: any compressor window inflates the same way, so blobs written
before the compressor's settings changed are read as they were."""

from __future__ import annotations

import random
import zlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ecc.vault import packed

SUMMARY = '{"schema":"ecc.memory.v1","id":"mem_20260726_x","title":"Auth é"}'


def _old_pack(summary_json: str, body: str) -> bytes:
    """The blob as the first layout-3 code wrote it (largest window and memory level)."""
    deflate = zlib.compressobj(
        1, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, packed._DICTIONARY
    )
    return deflate.compress(f"{summary_json}\0{body}".encode()) + deflate.flush()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000).filter(lambda text: "\0" not in text))
def test_blobs_round_trip_and_old_blobs_read_the_same(body: str) -> None:
    for blob in (packed.pack(SUMMARY, body), _old_pack(SUMMARY, body)):
        assert packed.unpack(blob) == (SUMMARY, body)


def test_bodies_larger_than_the_window_round_trip_at_about_the_same_size() -> None:
    rng = random.Random(7)
    words = ["migration", "rollout", "auth", "cache", "déploiement", "✓", "\n\n"]
    for size in (4_000, 5_000, 40_000, 65_000):
        body = " ".join(rng.choice(words) for _ in range(size // 6))
        blob = packed.pack(SUMMARY, body)
        assert packed.unpack(blob) == (SUMMARY, body)
        assert len(blob) <= len(_old_pack(SUMMARY, body)) * 1.1
