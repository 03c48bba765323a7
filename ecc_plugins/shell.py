"""The ``shell`` harness: any shell command as a managed session (``ecc run --harness shell``)."""

from __future__ import annotations

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext

NAME = "shell"


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program="/bin/sh",
        description="Runs the task as a /bin/sh -c command line in the session directory.",
        aliases=("sh",),
        capabilities=frozenset({"direct", "resume"}),
    )


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str]:
    return ["/bin/sh", "-c", launch.task]


@hookimpl
def ecc_resume_command(harness: str, launch: LaunchContext) -> list[str]:
    # A shell command has no conversation to continue: resuming runs it again.
    return ["/bin/sh", "-c", launch.task]
