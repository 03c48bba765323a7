"""``ecc harness``: which harnesses are installed and the exact command a session would run."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.contract.errors import EccError

VERSION_TIMEOUT_SECS = 15.0


@click.group("harness")
def harness_group() -> None:
    """List harnesses and show their command lines."""


def program_version(program: str) -> str | None:
    """The first line ``PROGRAM --version`` prints, or None if it fails (stdin closed)."""
    try:
        done = subprocess.run(
            [program, "--version"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_SECS,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    for text in (done.stdout, done.stderr):
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return None


@harness_group.command("list")
@click.option("--no-version", is_flag=True, help="Do not run each CLI to ask its version.")
@json_option
def list_command(no_version: bool, as_json: bool) -> None:
    """Installed harness adapters, their CLI on PATH and version, and detection here."""
    from ecc.runtime.config.view import view
    from ecc.sessions import harnesses

    config = view()
    table = harnesses.available(config)
    detected = set(harnesses.detect(Path.cwd(), config))
    rows: list[dict[str, Any]] = []
    for name, info in table.items():
        path = shutil.which(info.program) if info.program else None
        rows.append(
            {
                "name": name,
                "program": info.program,
                "description": info.description,
                "aliases": list(info.aliases),
                "capabilities": sorted(info.capabilities),
                "profile_fields": sorted(info.profile_fields),
                "path": path,
                "on_path": path is not None,
                "version": program_version(path) if path and not no_version else None,
                "detected": name in detected,
            }
        )
    if as_json:
        emit_json({"harnesses": rows, "detected": sorted(detected)})
        return
    if not rows:
        say("no harness adapters installed")
        return
    for row in rows:
        where = row["version"] or row["path"] or "not on PATH"
        mark = " (detected here)" if row["detected"] else ""
        say(f"{row['name']:<10} {row['program'] or '-':<14} {where}{mark}")


def _profile(name: str | None, config: Any) -> Any:
    from ecc.runtime.config.profiles import agent_profile

    wanted = name or config.default_profile
    return agent_profile(config, wanted) if wanted else None


@harness_group.command("command")
@click.argument("name")
@click.argument("task")
@click.option("--profile", "profile_name", help="Agent profile to apply ([agent_profiles.P]).")
@click.option("--resume", "resume_id", help="Show the resume command for this harness session id.")
@json_option
def command_command(
    name: str, task: str, profile_name: str | None, resume_id: str | None, as_json: bool
) -> None:
    """The exact argv and environment ``ecc run --harness NAME TASK`` would start.

    Shown for the current directory as the session directory, with session id ``preview``.
    """
    from ecc.contract.types import LaunchContext
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import get_plugins
    from ecc.sessions import harnesses

    config = view()
    harness = harnesses.canonical_name(name, config)
    profile = _profile(profile_name, config)
    cwd = Path.cwd()
    launch = LaunchContext(
        session_id="preview",
        task=task,
        working_dir=cwd,
        project_dir=cwd,
        config=config,
        profile=profile,
    )
    hook = get_plugins(config).harness_hook(harness)
    folded = ""
    if profile is not None:
        translation = hook.ecc_translate_profile(harness=harness, profile=profile, launch=launch)
        if translation is not None and translation.refused:
            refused = "; ".join(f"{k}: {v}" for k, v in translation.refused.items())
            raise EccError(f"harness {harness} refused profile fields ({refused})")
        folded = translation.prompt_prefix if translation is not None else ""
    if resume_id:
        argv = hook.ecc_resume_command(harness=harness, launch=launch, harness_session_id=resume_id)
    else:
        argv = hook.ecc_build_command(harness=harness, launch=launch)
    if not argv:
        raise EccError(f"no installed adapter builds a command for harness {harness!r}")
    env = {
        "ECC_SESSION_ID": launch.session_id,
        "ECC_HARNESS": harness,
        "ECC_WORKING_DIR": str(cwd),
        "ECC_PROJECT_DIR": str(cwd),
    }
    for extra in hook.ecc_session_env(harness=harness, launch=launch):
        if extra:
            env.update({str(k): str(v) for k, v in extra.items()})
    argv = [str(part) for part in argv]
    if as_json:
        emit_json(
            {
                "harness": harness,
                "argv": argv,
                "env": env,
                "cwd": str(cwd),
                "profile": profile_name or config.default_profile,
                "folded_into_prompt": bool(folded),
            }
        )
        return
    say(f"cwd: {cwd}")
    say("argv: " + shlex.join(argv))
    say("env (added to the inherited environment):")
    for key, value in env.items():
        say(f"  {key}={shlex.quote(value)}")


# -- the compliance matrix -------------------------------------------------------------------

SURFACES = ("direct", "structured_output", "resume", "hooks", "enforcement", "mcp", "skills")
SURFACE_TITLES = {
    "direct": "direct execution",
    "structured_output": "structured output",
    "resume": "resume",
    "hooks": "hooks",
    "enforcement": "enforcement",
    "mcp": "MCP",
    "skills": "skills",
}
INTEGRATIONS = ("hooks", "mcp", "skills")
# ecc sync's surfaces (ecc.contract.types.SYNC_SURFACES), as each adapter's plan carries them
SYNC_TITLES = {"rules": "rules", "commands": "commands", "hooks": "project hooks"}


def _sync_modes(hook: Any, harness: str, project: Path) -> dict[str, str]:
    """Each sync surface's mode (native, translated, instruction-only, unsupported), asked of
    the adapter with an empty source: a plan is only computed, never written."""
    from ecc.contract.types import SYNC_SURFACES, SyncSource

    empty = SyncSource(project_dir=project)
    modes = {}
    for surface in SYNC_SURFACES:
        try:
            plan = hook.ecc_sync_surface(harness=harness, surface=surface, source=empty)
        except EccError as exc:
            modes[surface] = f"error: {exc.message}"
            continue
        modes[surface] = getattr(plan, "mode", None) or "unsupported"
    return modes


def _installed_here(hook: Any, harness: str, kind: str, project: Path) -> bool | str | None:
    """Whether ecc's ``kind`` integration is in this project's config of ``harness``.

    Asked as a dry-run uninstall (which writes nothing): it would change something exactly when
    ecc's entries are there. None when the adapter has no such integration.
    """
    from ecc.contract.types import IntegrationRequest

    request = IntegrationRequest(
        kind=kind, action="uninstall", scope="project", project_dir=project, dry_run=True
    )
    try:
        result = hook.ecc_install_integration(harness=harness, request=request)
    except EccError as exc:
        return f"error: {exc.message}"
    if result is None:
        return None
    return bool(result.changed_files)


def matrix_rows(config: Any, project: Path) -> list[dict[str, Any]]:
    from ecc.runtime.plugins.loader import get_plugins
    from ecc.sessions import harnesses

    plugin_set = get_plugins(config)
    detected = set(harnesses.detect(project, config))
    rows = []
    for name, info in harnesses.available(config).items():
        surfaces = {surface: surface in info.capabilities for surface in SURFACES}
        hook = plugin_set.harness_hook(name)
        rows.append(
            {
                "name": name,
                "program": info.program,
                "description": info.description,
                "on_path": bool(info.program and shutil.which(info.program)),
                "surfaces": surfaces,
                "profile_fields": sorted(info.profile_fields),
                "other_capabilities": sorted(set(info.capabilities) - set(SURFACES)),
                "detected": name in detected,
                "installed": {
                    kind: _installed_here(hook, name, kind, project) if surfaces[kind] else None
                    for kind in INTEGRATIONS
                },
                "sync": _sync_modes(hook, name, project),
            }
        )
    return rows


def _mark(value: object) -> str:
    if value is True:
        return "yes"
    if value is False or value is None:
        return "-"
    return str(value)


def _installed_text(installed: dict[str, Any]) -> str:
    shown = [kind for kind in INTEGRATIONS if installed.get(kind) is True]
    errors = [f"{kind} ({installed[kind]})" for kind in INTEGRATIONS if _is_error(installed[kind])]
    return ", ".join(shown + errors) or "-"


def _is_error(value: object) -> bool:
    return isinstance(value, str)


def render_markdown(rows: list[dict[str, Any]]) -> str:
    head = ["harness", *(SURFACE_TITLES[s] for s in SURFACES), "profile fields"]
    head += ["detected here", "installed here", *SYNC_TITLES.values()]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [row["name"], *(_mark(row["surfaces"][s]) for s in SURFACES)]
        cells.append(", ".join(row["profile_fields"]) or "-")
        cells += [_mark(row["detected"]), _installed_text(row["installed"])]
        cells += [row["sync"][surface] for surface in SYNC_TITLES]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


@harness_group.command("matrix")
@click.option("--json", "fmt", flag_value="json", help="Print JSON.")
@click.option("--markdown", "fmt", flag_value="markdown", help="Print a Markdown table.")
def matrix_command(fmt: str | None) -> None:
    """Which surfaces each installed adapter supports, and what is detected and installed here.

    Surfaces come from what the adapters declare (capabilities and mapped profile fields);
    "detected" from the project's marker files; "installed" from each adapter's own config files
    in this project (hooks, MCP server, skills), read without writing anything; the sync
    surfaces (rules, commands, project hooks) from each adapter's `ecc sync` plan: native,
    translated, instruction-only or unsupported.
    """
    from ecc.runtime import paths
    from ecc.runtime.config.view import view

    project = paths.find_project_root() or Path.cwd()
    rows = matrix_rows(view(), project)
    if fmt == "json":
        emit_json(
            {
                "schema_version": "ecc.harness-matrix.v1",
                "project": str(project),
                "surfaces": list(SURFACES),
                "sync_surfaces": list(SYNC_TITLES),
                "harnesses": rows,
            }
        )
        return
    if fmt == "markdown":
        click.echo(render_markdown(rows), nl=False)
        return
    if not rows:
        say("no harness adapters installed")
        return
    width = max(len(row["name"]) for row in rows)
    short = {"structured_output": "output", "enforcement": "enforce"}
    titles = [short.get(s, s) for s in SURFACES]
    say(f"{'harness':<{width}}  " + "  ".join(titles) + "  detected  installed here")
    for row in rows:
        cells = [
            f"{_mark(row['surfaces'][s]):<{len(t)}}" for s, t in zip(SURFACES, titles, strict=True)
        ]
        say(
            f"{row['name']:<{width}}  "
            + "  ".join(cells)
            + f"  {_mark(row['detected']):<8}  {_installed_text(row['installed'])}"
        )
    say("")
    for row in rows:
        say(f"{row['name']}: profile fields {', '.join(row['profile_fields']) or '-'}")
    for row in rows:
        modes = ", ".join(f"{surface} {mode}" for surface, mode in row["sync"].items())
        say(f"{row['name']}: sync {modes}")
