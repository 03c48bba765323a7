"""Installing ecc's integrations into a harness's own config files, for ``ecc_install_integration``.

``ecc hooks``, ``ecc mcp`` and ``ecc skills`` (install and uninstall, ``--project`` or ``--user``)
reach an adapter through one hook, with the kind in ``request.kind``: :func:`dispatch` hands the
request to the adapter's function for that kind. The rest is what several harnesses' functions
have in common: where a file lives for the request's scope, ecc's command hook in a Claude-style
``hooks`` table, ecc's memory server in an MCP table, the skills directory, and the advice line
an install may add. The file editing itself is :mod:`ecc.portability`'s, imported only when a
request needs it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # without importing typing or pathlib (ecc hook loads the adapters)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from ecc.contract.types import IntegrationRequest, IntegrationResult

    Installer = Callable[[IntegrationRequest], IntegrationResult]


def dispatch(
    request: IntegrationRequest,
    *,
    hooks: Installer | None = None,
    mcp: Installer | None = None,
    skills: Installer | None = None,
) -> IntegrationResult | None:
    """The result of the function given for ``request.kind``; None for a kind it has none for."""
    installer = {"hooks": hooks, "mcp": mcp, "skills": skills}.get(request.kind)
    return installer(request) if installer is not None else None


def scoped(request: IntegrationRequest, user: str | Callable[[], Path], project: str) -> Path:
    """``project`` inside the project directory, or with ``--user`` the user-level path: ``user``
    inside the home directory, or what ``user()`` returns (a harness with a home of its own)."""
    if request.scope == "user":
        from pathlib import Path

        return Path.home() / user if isinstance(user, str) else user()
    return request.project_dir / project


def root(request: IntegrationRequest) -> Path | None:
    """The project directory of a project-scope request, None for ``--user``: a config file
    reached through a symlink leading out of the project is refused (one in the user's home is
    edited through its link, as dotfile managers set them up), and the directories an uninstall
    empties are removed up to the project directory (the home directory for ``--user``)."""
    return request.project_dir if request.scope == "project" else None


def note(
    request: IntegrationRequest, result: IntegrationResult, advice: str, *, project_only: bool
) -> IntegrationResult:
    """``result`` with the line ``advice`` added to its message when an install changed files
    (with ``project_only``, only in project scope): what the user must still do in the harness."""
    if (
        request.action == "install"
        and result.changed_files
        and (request.scope == "project" or not project_only)
    ):
        result.message += "\n" + advice
    return result


DEFAULT_HOOK_TIMEOUT = 30  # seconds, when the core names none


def hook_timeout(request: IntegrationRequest) -> int:
    """Seconds the harness should let ``ecc hook`` run before it gives up on it: what the core
    chose (``options["hook_timeout"]``: longer than ``risk.approval_timeout``, so a call held
    for approval is answered by ecc, never by the harness's timeout), else 30."""
    return int(request.options.get("hook_timeout") or DEFAULT_HOOK_TIMEOUT)


def command_hook(
    request: IntegrationRequest,
    harness: str,
    path: Path,
    what: str,
    event: str,
    *,
    matcher: str = "*",
    timeout: int | None = None,
    milliseconds: bool = False,
) -> IntegrationResult:
    """Add (or remove) ecc's ``ecc hook --harness HARNESS`` command for ``event`` in the
    ``hooks`` table of the JSON file ``path`` (``what`` names it in messages), as
    ``{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}``. The timeout is
    :func:`hook_timeout` unless given, in seconds (``milliseconds``: the harness counts ms)."""
    from ecc.portability.harnessfiles import edit_hooks_file, hook_command

    command = hook_command(request.options, harness)
    seconds = hook_timeout(request) if timeout is None else timeout
    entry = hook_entry(command, seconds, matcher, milliseconds)
    return edit_hooks_file(
        path, what, harness, {event: entry}, request.action, request.dry_run, root=root(request)
    )


def hook_entry(command: str, seconds: int, matcher: str, milliseconds: bool) -> dict[str, Any]:
    """One entry of a Claude-style ``hooks`` table: run ``command`` for tools ``matcher``."""
    timeout = seconds * 1000 if milliseconds else seconds
    return {
        "matcher": matcher,
        "hooks": [{"type": "command", "command": command, "timeout": timeout}],
    }


def memory_server(request: IntegrationRequest, harness: str) -> dict[str, Any]:
    """ecc's memory MCP server as ``{"command", "args", "env"}``, telling it the harness."""
    from ecc.portability.harnessfiles import mcp_argv

    argv = mcp_argv(request.options)
    return {"command": argv[0], "args": argv[1:], "env": {"ECC_MEMORY_HARNESS": harness}}


def mcp_server(
    request: IntegrationRequest, path: Path, what: str, table: str, entry: dict[str, Any]
) -> IntegrationResult:
    """Add (or remove) ``entry`` as ecc's server in the ``table`` of MCP servers of ``path``:
    a TOML file when its name ends in ``.toml``, else JSON (comments allowed); either way the
    uninstall gives back what the install found."""
    from ecc.portability import harnessfiles, tomlconfig

    edit = tomlconfig.edit_mcp_toml if path.suffix == ".toml" else harnessfiles.edit_mcp_json
    return edit(path, what, table, entry, request.action, request.dry_run, root=root(request))


def skills(request: IntegrationRequest, harness: str, directory: Path) -> IntegrationResult:
    """Sync the request's skills into ``directory`` (one folder per skill)."""
    from ecc.portability.skillsync import sync_skills

    return sync_skills(harness, directory, request)
