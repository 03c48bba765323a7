"""``ecc skills validate|install|uninstall``: one folder of ``SKILL.md`` skills, every harness.

The core validates the source and picks the harnesses; where the skills land is each adapter's
decision (``ecc_install_integration``, kind ``skills``), so no table of harness directories lives
here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


@click.group("skills")
def skills_group() -> None:
    """Validate SKILL.md skills and install them into each harness's own skills directory."""


def _project() -> Path:
    from ecc.runtime import paths

    return paths.find_project_root() or Path.cwd()


@skills_group.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@json_option
def validate_command(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check SKILL.md files: frontmatter (name, description, origin), no secrets, no local paths.

    PATHS are SKILL.md files, skill directories or folders of skills (default: the project's
    skills/). Every problem is printed as FILE:LINE: what; the exit status is 1 if there is any.
    """
    from ecc.contract.errors import EccError
    from ecc.portability.skills import validate

    targets = list(paths)
    if not targets:
        default = _project() / "skills"
        if not default.is_dir():
            raise EccError(f"no skills folder at {default}; give the PATH of the skills to check")
        targets = [default]
    skills, problems = validate(targets)
    if as_json:
        emit_json(
            {
                "valid": not problems,
                "skills": [
                    {
                        "name": skill.name,
                        "path": str(skill.path),
                        "description": skill.description,
                        "origin": skill.origin,
                        "valid": not skill.problems,
                    }
                    for skill in skills
                ],
                "problems": [problem.as_dict() for problem in problems],
            }
        )
    else:
        for problem in problems:
            say(f"{problem}", err=True)
        checked = f"{len(skills)} skill(s) checked"
        say(f"{checked}, {len(problems)} problem(s)" if problems else f"{checked}: all valid")
    if problems:
        raise SystemExit(1)


def _targets(harness: str | None, every: bool, config: Any) -> list[str]:
    from ecc.sessions import harnesses

    if every == bool(harness):
        raise click.UsageError("give exactly one of --harness NAME or --all")
    if harness:
        return [harnesses.canonical_name(harness, config)]
    return list(harnesses.available(config))


def _apply(
    action: str,
    harness: str | None,
    every: bool,
    scope: str,
    dry_run: bool,
    source: Path | None,
    as_json: bool,
) -> None:
    from ecc.contract.errors import EccError
    from ecc.contract.types import IntegrationRequest
    from ecc.runtime.config.view import view
    from ecc.runtime.plugins.loader import get_plugins

    config = view()
    project = _project()
    options: dict[str, Any] = {}
    if action == "install":
        folder = (source or project / "skills").resolve()
        from ecc.portability.skills import load_source

        load_source(folder)  # refuse an invalid source once, before any harness is touched
        options["source"] = str(folder)
    plugin_set = get_plugins(config)
    names = _targets(harness, every, config)

    def run(name: str, dry: bool) -> Any:
        request = IntegrationRequest(
            kind="skills",
            action=action,
            scope=scope,
            project_dir=project,
            dry_run=dry,
            options=dict(options),
        )
        return plugin_set.harness_hook(name).ecc_install_integration(harness=name, request=request)

    # Plan every harness first (a dry run raises what a real run would), then write: a refusal
    # in one harness leaves all of them untouched.
    planned = {name: run(name, True) for name in names}
    supported = [name for name, result in planned.items() if result is not None]
    if not supported:
        raise EccError(f"no installed adapter can {action} skills for {', '.join(names)}")
    results = planned if dry_run else {name: run(name, False) for name in supported}
    rows = [
        {
            "harness": name,
            "location": str(results[name].location) if results[name].location else None,
            "changed_files": [str(path) for path in results[name].changed_files],
            "diff": results[name].diff,
            "message": results[name].message,
        }
        for name in supported
    ]
    if as_json:
        emit_json(
            {
                "action": action,
                "scope": scope,
                "dry_run": dry_run,
                "source": options.get("source"),
                "harnesses": rows,
                "unsupported": [name for name in names if name not in supported],
            }
        )
        return
    for row in rows:
        if dry_run:
            if row["diff"]:
                click.echo(row["diff"], nl=False)
            say(f"(dry run) {row['harness']}: {len(row['changed_files'])} file(s) would change")
        else:
            say(row["message"])


def _options(function: Any) -> Any:
    function = click.option(
        "--dry-run", is_flag=True, help="Show what would change (diffs); write nothing."
    )(function)
    function = click.option(
        "--scope",
        type=click.Choice(["project", "user"]),
        default="project",
        show_default=True,
        help="The project's harness directories, or the user-wide ones.",
    )(function)
    function = click.option(
        "--all", "every", is_flag=True, help="Every installed harness that takes skills."
    )(function)
    function = click.option("--harness", help="claude, codex, gemini, opencode, or a plugin's.")(
        function
    )
    return json_option(function)


@skills_group.command("install")
@_options
@click.option(
    "--source",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of skills (<name>/SKILL.md); default: the project's skills/.",
)
def install_command(
    harness: str | None,
    every: bool,
    scope: str,
    dry_run: bool,
    as_json: bool,
    source: Path | None,
) -> None:
    """Copy every valid skill of the source folder into the harness's skills directory.

    Idempotent; records what it wrote so `ecc skills uninstall` removes exactly that. A file ecc
    did not write, or changed since, is never replaced.
    """
    _apply("install", harness, every, scope, dry_run, source, as_json)


@skills_group.command("uninstall")
@_options
def uninstall_command(
    harness: str | None, every: bool, scope: str, dry_run: bool, as_json: bool
) -> None:
    """Remove exactly the files `ecc skills install` wrote (and the directories it created)."""
    _apply("uninstall", harness, every, scope, dry_run, None, as_json)
