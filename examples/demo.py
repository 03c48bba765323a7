"""``make demo``: a guided tour of ecc sessions on a throwaway git repository.

Everything happens in a temporary directory with its own ECC_* state, data, config and cache
directories, so nothing touches your real setup. The tour: create a git repo, run two shell
sessions in their own worktrees (each writes and commits a file), show their output, show a
diff, merge both into main, and clean up.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ECC = [sys.executable, "-m", "ecc"]


def step(text: str) -> None:
    print(f"\n=== {text}")


def show(
    args: list[str], cwd: Path, check: bool = True, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    import shlex

    printable = shlex.join(["ecc", *args[len(ECC) :]] if args[: len(ECC)] == ECC else args)
    print(f"$ {printable}")
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, input=stdin)
    for line in (result.stdout + result.stderr).rstrip().splitlines():
        print(f"  {line}")
    if check and result.returncode != 0:
        raise SystemExit(f"demo step failed (exit {result.returncode}): {printable}")
    return result


def wait_finished(session_id: str, cwd: Path, timeout: float = 60) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = json.loads(
            subprocess.run(
                [*ECC, "status", session_id, "--json"],
                cwd=cwd,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        if status["state"] in ("completed", "failed", "stopped"):
            return status
        time.sleep(0.1)
    raise SystemExit(f"session {session_id} did not finish in {timeout:.0f}s")


def main() -> int:
    if shutil.which("git") is None:
        print("The demo needs git on PATH.", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="ecc-demo-"))
    try:
        for name in ("CONFIG", "STATE", "DATA", "CACHE"):
            os.environ[f"ECC_{name}_DIR"] = str(tmp / "ecc" / name.lower())
        os.environ.pop("ECC_CONFIG", None)
        os.environ.setdefault("GIT_AUTHOR_NAME", "ecc demo")
        os.environ.setdefault("GIT_AUTHOR_EMAIL", "demo@ecc.invalid")
        os.environ.setdefault("GIT_COMMITTER_NAME", "ecc demo")
        os.environ.setdefault("GIT_COMMITTER_EMAIL", "demo@ecc.invalid")
        (tmp / "ecc" / "config").mkdir(parents=True)
        (tmp / "ecc" / "config" / "config.toml").write_text(
            'default_harness = "shell"\nheartbeat_interval_secs = 0.5\n'
        )
        repo = tmp / "repo"
        repo.mkdir()

        step(f"A throwaway git repository in {repo} (ecc state in {tmp / 'ecc'})")
        show(["git", "init", "-q", "-b", "main"], repo)
        (repo / "README.md").write_text("# demo project\n")
        show(["git", "add", "README.md"], repo)
        show(["git", "commit", "-q", "-m", "initial commit"], repo)

        step("Two shell sessions start detached, each in its own worktree on branch ecc/<id>")
        tasks = [
            'printf "def hello():\\n    return 1\\n" > hello.py && git add hello.py && '
            'git commit -q -m "add hello.py" && '
            'echo "wrote hello.py on $(git branch --show-current)"',
            "echo pytest > requirements.txt && git add requirements.txt && "
            'git commit -q -m "add requirements" && echo "wrote requirements.txt" && '
            'echo "a warning on stderr" >&2',
        ]
        ids = []
        for task in tasks:
            result = show([*ECC, "start", "--harness", "shell", task], repo)
            ids.append(result.stdout.split()[-1])

        step("Wait for both, then list them")
        for sid in ids:
            status = wait_finished(sid, repo)
            if status["state"] != "completed":
                show([*ECC, "logs", sid], repo, check=False)
                raise SystemExit(f"session {sid} ended {status['state']}: {status['reason']}")
        show([*ECC, "sessions", "--all"], repo)

        step("Their captured output (stdout and stderr, line by line)")
        for sid in ids:
            show([*ECC, "logs", sid], repo)

        step("Worktrees: ahead of main, clean, and mergeable")
        show([*ECC, "worktree", "list"], repo)
        show([*ECC, "worktree", "status", ids[0]], repo)

        step("The diff of the first session against main")
        show([*ECC, "worktree", "diff", ids[0]], repo)

        step("Merge both into main (checked with git merge-tree first)")
        for sid in ids:
            show([*ECC, "worktree", "merge", sid], repo)
        show(["git", "log", "--oneline", "--graph", "-n", "6"], repo)

        step("One more: a session that fails, and its exit code")
        show([*ECC, "run", "--no-worktree", "echo about to fail; exit 3"], repo, check=False)
        show([*ECC, "status", "latest"], repo)

        step("Prune the merged worktrees (branches go only because they are merged)")
        show([*ECC, "worktree", "prune", "--merged"], repo)

        step("Memory: one agent hands off to another through the project vault")
        note = "Both sessions merged cleanly. Next: add tests for hello()."
        show(
            [*ECC, "memory", "handoff", "--from", "claude", "--target", "codex",
             "--title", "Demo handoff: merged hello and notes", "--stdin"],
            repo, stdin=note,
        )  # fmt: skip
        show([*ECC, "memory", "search", "merged hello", "--target-harness", "codex"], repo)
        show([*ECC, "memory", "doctor"], repo)
        print("\nDemo finished: every step above ran real git and real processes.")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
