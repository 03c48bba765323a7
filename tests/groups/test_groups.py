"""``ecc run --harness a,b --count N --check``, ``ecc group`` and ``ecc group pick`` through the
real CLI, with real runners, real git worktrees and both stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ecc.store.base import Store
from tests.conftest import git, run_ecc
from tests.sessions.conftest import ecc_json

# Each session writes its own id and three lines, and deletes README's only line; the check
# passes for an id ending in an even hex digit and fails (exit 3, saying why) for an odd one,
# so one run of the group shows both outcomes side by side, each predictable from its id.
TASK = 'echo "$ECC_SESSION_ID" > who.txt; printf "1\\n2\\n3\\n" >> who.txt; : > README.md'
CHECK = (
    'case "$ECC_SESSION_ID" in *[02468ace]) echo fine;; '
    '*) echo "odd $ECC_SESSION_ID"; exit 3;; esac'
)


def _expected_check(session_id: str) -> str:
    return "passed" if int(session_id[-1], 16) % 2 == 0 else "failed"


def _run_group(repo: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    """``ecc run`` of a group, waited for; returns the process and ``ecc group ID --json``."""
    result = run_ecc("run", *args, cwd=repo, timeout=120)
    groups = ecc_json("groups", cwd=repo)
    return result, ecc_json("group", groups[0]["id"], cwd=repo)


def _branches(repo: Path) -> list[str]:
    listed = git(repo, "branch", "--list", "ecc/*", "--format=%(refname:short)")
    return sorted(listed.split())


def test_a_group_of_three_shows_each_ones_changes_and_check(git_repo: Path, store: Store) -> None:
    result, group = _run_group(
        git_repo, "--harness", "shell,shell", "--count", "3", "--check", CHECK, TASK
    )
    assert group["kind"] == "fanout" and group["check_command"] == CHECK
    members = group["members"]
    assert [m["position"] for m in members] == [1, 2, 3]
    assert {m["harness"] for m in members} == {"shell"}
    ids = [m["session_id"] for m in members]
    assert len(set(ids)) == 3
    worktrees = {m["worktree"] for m in members}
    assert len(worktrees) == 3 and all(Path(w).is_dir() for w in worktrees)
    for member in members:
        assert member["state"] == "completed"
        # who.txt: 4 new lines; README.md: its one line deleted
        assert member["changes"] == {"files": 2, "added": 4, "deleted": 1}
        check = member["check"]
        want = _expected_check(member["session_id"])
        assert check["state"] == want
        if want == "passed":
            assert check["exit_code"] == 0 and "fine" in check["output_tail"]
        else:
            assert check["exit_code"] == 3
            assert f"odd {member['session_id']}" in check["output_tail"]
        session = store.get_session(member["session_id"])
        assert session is not None and session.worktree_path == member["worktree"]
    all_pass = all(_expected_check(i) == "passed" for i in ids)
    assert group["state"] == ("completed" if all_pass else "failed")
    assert result.returncode == (0 if all_pass else 1), result.stderr
    for session_id in ids:  # ecc run said as each one ended
        assert f"session {session_id} completed" in result.stderr
    table = run_ecc("group", group["id"][:4], cwd=git_repo)  # a unique prefix works
    assert table.returncode == 0, table.stderr
    for member in members:
        row = next(line for line in table.stdout.splitlines() if member["session_id"] in line)
        assert row.split()[3:7] == ["completed", "2", "+4", "-1"]
        assert _expected_check(member["session_id"]) in row


def test_pick_merges_one_and_removes_the_other_worktrees_and_branches(
    git_repo: Path, store: Store
) -> None:
    _, group = _run_group(git_repo, "--harness", "shell", "--count", "3", TASK)
    ids = [m["session_id"] for m in group["members"]]
    assert _branches(git_repo) == sorted(f"ecc/{i}" for i in ids)
    chosen, *others = ids
    picked = ecc_json("group", "pick", group["id"], chosen[:6], cwd=git_repo)
    assert picked["picked"] == chosen and picked["merge"]["base"] == "main"
    assert picked["committed"]["committed"] is True  # the agent left its work uncommitted
    # the picked branch is in main, with the picked session's own file
    assert (git_repo / "who.txt").read_text().splitlines()[0] == chosen
    assert (git_repo / "README.md").read_text() == ""
    git(git_repo, "merge-base", "--is-ancestor", f"ecc/{chosen}", "main")  # raises if not
    # the others' worktrees (with their uncommitted work) and branches are gone
    assert _branches(git_repo) == [f"ecc/{chosen}"]
    listed = git(git_repo, "worktree", "list", "--porcelain")
    for member in group["members"]:
        gone = member["session_id"] != chosen
        assert Path(member["worktree"]).exists() is not gone
        assert (member["worktree"] in listed) is not gone
    assert {r["id"] for r in picked["removed"]} == set(others)
    after = ecc_json("group", group["id"], cwd=git_repo)
    assert after["state"] == "picked" and after["picked_session_id"] == chosen
    assert [m["picked"] for m in after["members"]] == [True, False, False]
    again = run_ecc("group", "pick", group["id"], others[0], cwd=git_repo)
    assert again.returncode == 1
    assert again.stderr.strip() == f"Error: group {group['id']} already picked session {chosen}"


def test_pick_changes_nothing_when_the_checkout_cannot_take_the_merge(
    git_repo: Path, store: Store
) -> None:
    _, group = _run_group(git_repo, "--harness", "shell,shell", TASK)
    ids = [m["session_id"] for m in group["members"]]
    (git_repo / "README.md").write_text("edited by hand\n")  # the base checkout is dirty
    refused = run_ecc("group", "pick", group["id"], ids[1], cwd=git_repo)
    assert refused.returncode == 1 and "uncommitted changes" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert _branches(git_repo) == sorted(f"ecc/{i}" for i in ids)
    assert all(Path(m["worktree"]).is_dir() for m in group["members"])
    assert ecc_json("group", group["id"], cwd=git_repo)["picked_session_id"] is None
    wrong = run_ecc("group", "pick", group["id"], "ffff", cwd=git_repo)
    assert wrong.returncode == 1 and "is not a session of group" in wrong.stderr


def test_a_failing_check_and_one_that_hangs(git_repo: Path, store: Store) -> None:
    result, group = _run_group(
        git_repo, "--harness", "shell", "--check", "echo boom; exit 7", "true"
    )
    assert result.returncode == 1  # the session completed, its check did not pass
    (member,) = group["members"]
    assert member["state"] == "completed" and group["state"] == "failed"
    assert member["check"]["state"] == "failed" and member["check"]["exit_code"] == 7
    assert member["check"]["output_tail"].strip() == "boom"
    table = run_ecc("group", group["id"], cwd=git_repo).stdout
    assert "failed (7)" in table and "  boom" in table
    _, hung = _run_group(
        git_repo,
        "--harness",
        "shell",
        "--check",
        "echo started; sleep 60",
        "--check-timeout",
        "0.5",
        "true",
    )
    (member,) = hung["members"]
    assert member["check"]["state"] == "timeout" and member["check"]["exit_code"] is None
    assert "started" in member["check"]["output_tail"]
    session = store.get_session(member["session_id"])
    assert session is not None and session.state.value == "completed"


def test_detached_group_and_bad_input(git_repo: Path, store: Store) -> None:
    started = run_ecc("run", "-d", "--harness", "shell,shell", "true", cwd=git_repo)
    assert started.returncode == 0, started.stderr
    group_id = started.stdout.strip()  # stdout is not a terminal: the bare id
    assert len(group_id) == 8
    shown = json.loads(run_ecc("group", group_id, "--json", cwd=git_repo).stdout)
    assert len(shown["members"]) == 2 and shown["kind"] == "fanout"
    before = store.list_sessions()
    for args, message in [
        (["--harness", "shell,nope", "true"], "unknown harness 'nope'"),
        (["--harness", "shell", "--count", "0", "true"], "--count must be between 1 and 32"),
        (["--harness", "a,b,c", "--count", "2", "true"], "fewer than the 3 harnesses"),
        (["--harness", "shell", "--count", "2", "--check", " ", "true"], "must not be empty"),
        (["--harness", "shell,shell", "--var", "x=1", "true"], "--var fills a template"),
        (["--harness", "shell,", "true"], "has an empty name"),
    ]:
        refused = run_ecc("run", "-d", *args, cwd=git_repo)
        assert refused.returncode == 1, (args, refused.stdout)
        assert refused.stderr.strip().splitlines() == [f"Error: {refused.stderr.strip()[7:]}"]
        assert message in refused.stderr, refused.stderr
    assert len(store.list_sessions()) == len(before)  # nothing half-started
    assert len(store.list_groups()) == 1
    missing = run_ecc("group", "0000000", cwd=git_repo)
    assert missing.returncode == 1 and "no group '0000000'" in missing.stderr


def test_a_warning_every_member_would_give_is_said_once(git_repo: Path, store: Store) -> None:
    started = run_ecc(
        "-c", "risk.enforce=true", "run", "-d", "--harness", "shell", "--count", "3", "true",
        cwd=git_repo,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    warnings = [line for line in started.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) == 1 and "cannot apply its hook to shell sessions" in warnings[0]
    assert len(ecc_json("group", started.stdout.strip(), cwd=git_repo)["members"]) == 3
