"""One document's index row: read the file, parse it, refuse suspected secrets and normalise
the fields search matches on. The cold index build spends its time here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ecc.vault import packed, ranking, unicode17
from ecc.vault.format import (
    MAX_DOCUMENT_BYTES,
    MemoryFormatError,
    escape_surrogates,
    id_sort_key,
    parse_memory_document,
    summary,
    well_formed,
)
from ecc.vault.index import COLUMNS
from ecc.vault.secrets import find_secrets_in_memory

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import VaultStore


_EMPTY = (None,) * (len(COLUMNS) - 4)  # an invalid row: rel, stamp, nbytes and code only


def _delimited(values: Sequence[str]) -> str:
    return "\n" + "".join(f"{value}\n" for value in values)


def build_row(store: VaultStore, scope: str, rel: str, stamp: str) -> tuple[Any, ...]:
    """The index row of one document (``index.COLUMNS``), or an invalid row with its code."""

    def invalid(code: str, nbytes: int) -> tuple[Any, ...]:
        return (rel, stamp, nbytes, code, *_EMPTY)

    try:
        text = store.read(scope, rel, MAX_DOCUMENT_BYTES)
    except Exception:
        return invalid("invalid-document", 0)
    nbytes = len(text.encode("utf-8"))
    try:
        memory = parse_memory_document(text, rel)
    except MemoryFormatError:
        return invalid("invalid-document", nbytes)
    if memory["scope"] != scope or rel != f"{memory['kind']}s/{memory['id']}.md":
        return invalid("location-mismatch", nbytes)
    if find_secrets_in_memory(memory):
        return invalid("suspected-secret", nbytes)
    meta = " ".join(
        [memory["kind"], memory["scope"], memory["sourceHarness"], *memory["targetHarnesses"]]
    ).lower()  # slugs: ASCII
    body = memory["body"]
    # a title from JSON may hold a lone surrogate, which SQLite cannot store: escaped in the
    # summary (json.loads restores it), U+FFFD in the matched text (as the query's)
    summary_json = escape_surrogates(
        json.dumps(summary(memory), ensure_ascii=False, separators=(",", ":"))
    )
    return (
        rel,
        stamp,
        nbytes,
        None,
        id_sort_key(memory["id"]),
        memory["kind"],
        memory["status"],
        memory["updatedAt"],
        well_formed(unicode17.lower(memory["title"])),
        _delimited(memory["tags"]),  # slugs: already lower-case ASCII
        meta,
        _delimited(memory["targetHarnesses"]),
        _delimited(memory["links"]),
        packed.pack(summary_json, body),
        ranking.body_terms(unicode17.lower(body)),  # from a UTF-8 file: no lone surrogate
    )
