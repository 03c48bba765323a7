"""The built-in ``github`` forge: ``ecc pr`` opens pull requests through the GitHub CLI (``gh``).

It is ``trylast``, so any other forge plugin is asked first, and it declines remotes of other
well-known hosts. ``gh`` does the talking to GitHub with the user's own login
(``gh auth login``); ecc keeps no GitHub token. Every failure is one line naming what to do.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import PullRequest, PullRequestProposal

AUTH_TIMEOUT_SECS = 30
CREATE_TIMEOUT_SECS = 120
OTHER_FORGES = ("gitlab", "bitbucket.org", "codeberg.org", "sr.ht")
URL = re.compile(r"https?://\S+")
# https://host/owner/repo(.git), ssh://git@host/owner/repo, git@host:owner/repo
REMOTE = re.compile(
    r"^(?:[a-z+]+://)?(?:[^@/]+@)?(?P<host>[A-Za-z0-9.-]+)(?::\d+)?[:/]"
    r"(?P<owner>[^/\s]+)/(?P<repo>[^/\s]+?)(?:\.git)?/?$"
)


def _remote_repo(url: str) -> tuple[str, str] | None:
    """(host, "host/owner/repo") of a hosted remote URL; None for a path on disk."""
    if url.startswith(("/", ".", "file:")):
        return None
    match = REMOTE.match(url.strip())
    if match is None:
        return None
    host = match["host"].lower()
    return host, f"{host}/{match['owner']}/{match['repo']}"


def _gh(argv: list[str], cwd: str, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", "NO_COLOR": "1"}
    try:
        return subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EccError(f"{' '.join(argv[1:3])} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise EccError(f"cannot run gh (GitHub CLI): {exc.strerror or exc}") from None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


@hookimpl(trylast=True)
def ecc_open_pull_request(proposal: PullRequestProposal, config: Any) -> PullRequest | None:
    hosted = _remote_repo(proposal.remote_url)
    if hosted is not None and any(other in hosted[0] for other in OTHER_FORGES):
        return None  # not GitHub: another forge plugin's, or none
    gh = shutil.which("gh")
    if gh is None:
        raise EccError(
            "gh (GitHub CLI) is not installed or not on PATH: install it from "
            "https://cli.github.com and run gh auth login, or open the pull request by hand"
        )
    cwd = str(proposal.worktree_path or proposal.repo_root)
    auth = [gh, "auth", "status"] + ([f"--hostname={hosted[0]}"] if hosted else [])
    if _gh(auth, cwd, AUTH_TIMEOUT_SECS).returncode != 0:
        where = hosted[0] if hosted else "GitHub"
        raise EccError(f"gh (GitHub CLI) is not logged in to {where}: run gh auth login")
    argv = [
        gh,
        "pr",
        "create",
        f"--head={proposal.branch}",
        f"--base={proposal.base}",
        f"--title={proposal.title}",
        f"--body={proposal.body}",
    ]
    if hosted is not None:
        argv.append(f"--repo={hosted[1]}")
    if proposal.draft:
        argv.append("--draft")
    result = _gh(argv, cwd, CREATE_TIMEOUT_SECS)
    if result.returncode != 0:
        # the one failure that still names a pull request: one for the branch already exists
        found = URL.search(result.stderr) if "already exists" in result.stderr else None
        if found is None:
            raise EccError(f"gh pr create failed: {_last_line(result.stderr or result.stdout)}")
        return PullRequest(url=found.group(0), forge="github")
    urls = URL.findall(result.stdout)
    if not urls:
        raise EccError("gh pr create printed no pull request URL")
    number = re.search(r"/pull/(\d+)", urls[-1])
    return PullRequest(url=urls[-1], forge="github", number=int(number[1]) if number else None)
