"""``ecc hook --harness NAME [--event EVENT]`` without importing click (about 30 ms).

A harness runs this before every tool call; :mod:`ecc.observability.toolhook` does the work. The
options are those declared in :mod:`ecc.cli.options` (``HOOK``), which the click command uses too.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from ecc.contract.types import HookResponse


def write_response(response: HookResponse) -> int:
    """Print a hook's answer as the harness reads it; return its exit code."""
    if response.stdout:
        sys.stdout.write(response.stdout)
        sys.stdout.flush()
    if response.stderr:
        sys.stderr.write(response.stderr)
        sys.stderr.flush()
    return int(response.exit_code)


def main(args: list[str]) -> int | None:
    """Answer the plain form of ``ecc hook ARGS``; None hands the command line to click
    (``--help``, unknown options...)."""
    import gc

    # A process of milliseconds that frees what it made by reference counting: the cyclic
    # collector's passes over the modules it is about to import are pure cost (~1.5 ms). A call
    # held for a person's decision turns it back on (ecc.observability.toolhook._hold).
    gc.disable()
    from ecc.cli.options import HOOK, parse

    params = parse(HOOK, args)
    if params is None:
        gc.enable()  # click's command line: an ordinary process
        return None
    from ecc.observability.toolhook import run

    raw = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    response = run(
        params["harness"], params["event"], raw, managed=bool(params["managed"]), ending=True
    )  # ending: ecc.entry ends this process with os._exit once the answer is written
    return write_response(response)
