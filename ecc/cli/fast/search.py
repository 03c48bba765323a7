"""The hot path of ``ecc memory search``: agents recall memory at the start of every task.

The plain forms (query words, ``--scope``, ``--kind``, ``--target-harness``, ``--limit N``,
``--json``, ``--``: the options declared in :mod:`ecc.cli.options`) are parsed without click,
which costs about as much as the search of a 5,000-memory vault. Anything else (``--help``, an
unknown option, a value click would reject or that looks like an option) returns ``None`` and
goes through the click command, which prints its usual messages. Both paths print through
:func:`render` and report errors the same way (``tests/vault/test_searchcall.py`` runs every
form through both).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

from ecc.contract.errors import EccError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any


def argv_text(value: str) -> str:
    """A command-line word as the reference reads it: bytes that are not UTF-8 (which Python
    keeps as escapes) become U+FFFD, one for each bad sequence, as Node decodes its argv."""
    if value.isascii():
        return value
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def parse(args: list[str]) -> dict[str, Any] | None:
    """The search options of a plain command line, or ``None`` when click must handle it."""
    from ecc.cli.options import SEARCH, parse

    return parse(SEARCH, [argv_text(arg) for arg in args], rest="query")


def render(result: dict[str, Any]) -> Iterator[str]:
    """The human-readable lines of a search result (every one through the sanitiser)."""
    from ecc.runtime.terminal import sanitize
    from ecc.vault.format import well_formed

    def line(*parts: Any) -> str:  # a lone surrogate (from JSON) prints as U+FFFD, as from Node
        return well_formed("".join(sanitize(part) for part in parts))

    if not result["results"]:
        yield line("No matching memories found.")
    for item in result["results"]:
        memory = item["memory"]
        yield line(
            "[", memory["trust"], "] ", memory["id"], " — ", memory["title"],
            " (score ", item["score"], _similarity(item), ")",
        )  # fmt: skip
        yield line("  ", item["excerpt"])
    if result["diagnostics"]["truncated"]:
        yield line("(The scan budget was reached: some memories were not searched; run doctor.)")


def _similarity(item: dict[str, Any]) -> str:
    """A memory ranker's similarity, beside the exact score (nothing without a ranker)."""
    return f", similarity {item['similarity']}" if "similarity" in item else ""


def search(options: dict[str, Any]) -> dict[str, Any]:
    from ecc.vault.service import open_cli_service

    return open_cli_service().search(
        " ".join(options["query"]),
        scopes=options["scopes"] or None,
        kinds=options["kinds"] or None,
        target_harness=options["target_harness"],
        limit=options["limit"],
        ranker="semantic" if options.get("semantic") else None,  # else memory.ranker
    )


def main(args: list[str]) -> int | None:
    """Run ``ecc memory search ARGS``; ``None`` means "use the click command instead"."""
    options = parse(args)
    if options is None:
        return None
    # A short-lived process: cycle collection during the imports and the search is wasted work,
    # and so is the full collection at interpreter exit over every module's objects; freezing
    # them leaves it nothing to do (as ecc.cli.fast.run does).
    gc.disable()
    try:
        return _run(options)
    finally:
        gc.freeze()


def _run(options: dict[str, Any]) -> int:
    try:
        result = search(options)
    except EccError as exc:
        from ecc.runtime.terminal import sanitize

        sys.stderr.write(f"Error: {sanitize(exc.message)}\n")
        return exc.exit_code
    if options["as_json"]:
        from ecc.runtime.terminal import json_text

        text = json_text(result)
    else:
        text = "\n".join(render(result))
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `ecc memory search … | head`: as click does, quietly
        return 1
    return 0
