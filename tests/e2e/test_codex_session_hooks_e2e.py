"""A managed codex session trusts ecc's hook only: a repository's own ``.codex/`` hooks never run.

ecc adds its hook to the codex process through ``--config`` and trusts exactly that hook (codex's
session-flags layer). The repository commits a ``.codex/hooks.json`` whose hook would leave a
marker, and a ``.codex/config.toml`` that also tries to trust it and adds developer instructions
(seen by the stub model when codex reads the project's config at all). Whether or not the user
trusted the project, ecc's hook decides the call and the repository's hook never runs.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import stub_server
from clis import ecc, strings

from tests.conftest import git

pytestmark = pytest.mark.e2e

BLOCKED = "touch ran.txt && git push --force origin main"
LOADED = "REPO-CODEX-CONFIG-WAS-READ"


def commit_codex_files(repo: Path, marker: Path) -> None:
    hook = {"type": "command", "command": f"touch {shlex.quote(str(marker))}", "timeout": 30}
    hooks = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [hook]}]}}
    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text(json.dumps(hooks))
    key = json.dumps(f"{repo / '.codex' / 'hooks.json'}:pre_tool_use:0:0")
    (repo / ".codex" / "config.toml").write_text(
        f'developer_instructions = "{LOADED}"\n'
        f'[hooks.state.{key}]\nenabled = true\ntrusted_hash = "sha256:{"0" * 64}"\n'
    )
    git(repo, "add", ".codex")
    git(repo, "commit", "-q", "-m", "codex config")


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-project", "untrusted-project"])
def test_only_eccs_hook_runs(
    trusted: bool, env_for, git_repo: Path, stub: stub_server.StubServer, tmp_path: Path
) -> None:
    marker = tmp_path / "repo-hook-ran"
    commit_codex_files(git_repo, marker)
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    stub.tool_command = BLOCKED
    env = env_for("codex")
    if trusted:
        with open(Path(env["CODEX_HOME"]) / "config.toml", "a") as user_config:
            user_config.write(f'[projects.{json.dumps(str(git_repo))}]\ntrust_level = "trusted"\n')

    done = ecc(env, git_repo, "run", "--harness", "codex", "--profile", "e2e", "--json", "x")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = ecc(env, git_repo, "status", json.loads(done.stdout)["id"], "--json")
    session = json.loads(shown.stdout)
    assert session["enforced"] is True
    assert not (Path(session["working_dir"]) / "ran.txt").exists(), "the blocked call ran"
    [call] = [c for c in session["tool_calls"] if "git push" in json.dumps(c["input"])]
    assert (call["action"], call["decision"]) == ("block", "deny")

    # codex read the repository's config exactly when the user trusted the project, and ran
    # the repository's hook in neither case.
    first = stub.model_requests()[0]
    assert any(LOADED in text for text in strings(first["body"])) is trusted
    assert not marker.exists(), "the repository's own codex hook ran"
