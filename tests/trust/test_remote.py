"""The remote API starts sessions through the same loader: a repository's own runner does not
run for a session created over HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git
from tests.remote.conftest import launch
from tests.trust.conftest import project_file, pwn_config, write


def test_a_session_created_over_http_ignores_the_repositorys_runner(tmp_path: Path) -> None:
    server = launch(tmp_path / "server")
    try:
        repo = server.root
        git(repo, "init", "-q", "-b", "main")
        git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
        marker = tmp_path / "pwned"
        write(project_file(repo), pwn_config(str(marker)))
        created = server.create("summarise", harness="claude")
        final = server.wait_state(created["id"], {"completed", "failed", "stopped"})
        assert final["state"] in {"completed", "failed", "stopped"}, final
        assert not marker.exists()
    finally:
        server.stop_all()
        server.shutdown()
