"""``ecc run --template NAME --var k=v``: sets and sequences of steps from
``[orchestration_templates.NAME]``, their variables, and the trust a project's template needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecc.store.base import Store
from tests.conftest import run_ecc
from tests.sessions.conftest import ecc_json, write_config


def _templates(home: Path, **templates: Any) -> None:
    write_config(home, orchestration_templates=templates)


def _group(repo: Path) -> dict[str, Any]:
    return ecc_json("group", ecc_json("groups", cwd=repo)[0]["id"], cwd=repo)


def test_a_sequence_starts_each_step_after_the_one_before(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    log = tmp_path / "order.log"
    _templates(
        tmp_path,
        relay={
            "mode": "sequence",
            "harness": "shell",
            "steps": [
                {"name": "first", "task": "sleep 0.3; echo {{ word }}-1 >> {{ log }}"},
                {"task": "echo {{word}}-2 >> {{ log }}", "worktree": False},
            ],
        },
    )
    result = run_ecc(
        "run", "--template", "relay", "--var", "word=hi", "--var", f"log={log}", cwd=git_repo
    )
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["hi-1", "hi-2"]  # a set would write hi-2 first
    group = _group(git_repo)
    assert group["kind"] == "sequence" and group["template"] == "relay"
    assert group["name"] == "relay" and group["state"] == "completed"
    first, second = group["members"]
    assert (first["step"], second["step"]) == ("first", "step 2")
    one = store.get_session(first["session_id"])
    two = store.get_session(second["session_id"])
    assert one is not None and two is not None
    assert one.task == f"sleep 0.3; echo hi-1 >> {log}" and one.use_worktree
    assert two.task == f"echo hi-2 >> {log}" and not two.use_worktree  # the step's own choice
    assert one.name == f"group {group['id']} #1 first"


def test_a_sequence_stops_at_a_step_that_fails_or_whose_check_fails(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    marker = tmp_path / "second-ran"
    steps = [{"task": "exit 4"}, {"task": f"touch {marker}"}]
    _templates(
        tmp_path,
        broken={"mode": "sequence", "harness": "shell", "steps": steps},
        checked={
            "mode": "sequence",
            "harness": "shell",
            "check": "echo not yet; exit 2",
            "steps": [{"task": "true"}, {"task": f"touch {marker}"}],
        },
    )
    result = run_ecc("run", "--template", "broken", cwd=git_repo)
    assert result.returncode == 1
    first, second = _group(git_repo)["members"]
    assert first["state"] == "failed" and second["session_id"] is None
    assert (second["status"], second["note"]) == ("skipped", "step 1 failed")
    assert "#2 step 2 skipped: step 1 failed" in result.stderr
    result = run_ecc("run", "--template", "checked", cwd=git_repo)
    assert result.returncode == 1
    group = _group(git_repo)
    first, second = group["members"]
    assert first["state"] == "completed" and first["check"]["state"] == "failed"
    assert (second["status"], second["note"]) == ("skipped", "step 1's check failed")
    assert group["state"] == "failed"
    assert not marker.exists() and len(store.list_sessions()) == 2


def test_a_set_starts_every_step_at_once_with_the_template_defaults(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    _templates(
        tmp_path,
        pair={
            "description": "two takes",
            "harness": "shell",
            "check": "test -s take.txt",
            "steps": [
                {"name": "a", "task": "echo {{ task }} a > take.txt"},
                {"name": "b", "task": "echo {{ task }} b > take.txt", "agent": "shell"},
            ],
        },
    )
    started = ecc_json("run", "-d", "--template", "pair", "fix it", cwd=git_repo)
    assert started["kind"] == "set"
    assert [m["status"] for m in started["members"]] == ["started", "started"]
    result = run_ecc("run", "--template", "pair", "fix it", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    group = _group(git_repo)
    assert [m["check"]["state"] for m in group["members"]] == ["passed", "passed"]
    tasks = {store.get_session(m["session_id"]).task for m in group["members"]}  # type: ignore[union-attr]
    assert tasks == {"echo fix it a > take.txt", "echo fix it b > take.txt"}


def test_variables_and_names_are_checked_before_anything_starts(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    _templates(
        tmp_path,
        review={"harness": "shell", "steps": [{"task": "echo {{ b }} {{a}} {{ a }}"}]},
        other={"harness": "shell", "steps": [{"task": "true"}]},
    )
    for args, error in [
        ([], "template review: missing variable(s): a, b (give each with --var NAME=VALUE)"),
        (
            ["--var", "a=1"],
            "template review: missing variable(s): b (give each with --var NAME=VALUE)",
        ),
        (
            ["--var", "a=1", "--var", "b=2", "--var", "c=3"],
            "template review does not use variable(s): c",
        ),
        (["--var", "a"], "--var 'a' must be NAME=VALUE (NAME: letters, digits, '_' and '-')"),
        (["--var", "a=1", "--var", "a=2"], "--var a is given twice"),
        (
            ["--harness", "shell"],
            "--template takes harnesses and profiles from the template; "
            "drop --harness, --profile and --count",
        ),
    ]:
        refused = run_ecc("run", "--template", "review", *args, cwd=git_repo)
        assert refused.returncode == 1, refused.stdout
        assert refused.stderr.strip() == f"Error: {error}"
    unknown = run_ecc("run", "--template", "nope", cwd=git_repo)
    assert unknown.stderr.strip() == "Error: unknown template 'nope' (known: other, review)"
    assert store.list_sessions() == [] and store.list_groups() == []
    done = run_ecc(
        "run", "--template", "review", "--var", "a=x", "--var", "b={{ a }}", cwd=git_repo
    )
    assert done.returncode == 0, done.stderr
    (member,) = _group(git_repo)["members"]
    session = store.get_session(member["session_id"])
    assert session is not None and session.task == "echo {{ a }} x x"  # values are not expanded


def test_a_projects_own_template_runs_only_once_trusted(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    marker = tmp_path / "project-check-ran"
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text(
        "[orchestration_templates.evil]\n"
        f'check = "touch {marker}"\n'
        'steps = [{ task = "true", harness = "shell" }]\n'
    )
    refused = run_ecc("run", "--template", "evil", cwd=git_repo)
    assert refused.returncode == 1
    assert "unknown template 'evil'" in refused.stderr
    assert store.list_sessions() == [] and not marker.exists()
    assert run_ecc("trust", cwd=git_repo).returncode == 0
    trusted = run_ecc("run", "--template", "evil", cwd=git_repo)
    assert trusted.returncode == 0, trusted.stderr
    assert marker.exists()  # the trusted check ran in the step's worktree
