"""``ecc schedule`` and the daemon's schedules step, with real ``ecc`` processes and stores.

No test waits for a real minute: a due window is made by writing ``next_run_at`` into the past
directly in the store, then the real daemon runs one pass (``ecc daemon --once``)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ecc.store.base import Store
from ecc.store.models import TERMINAL, iso, parse_iso
from tests.conftest import run_ecc
from tests.sessions.conftest import ecc_json, wait_state, wait_until


def _add(cwd: Path, task: str, *extra: str, cron: str = "* * * * *") -> dict[str, Any]:
    return ecc_json("schedule", "add", cron, task, "--harness", "shell", *extra, cwd=cwd)


def _make_due(store: Store, schedule_id: str, minutes_ago: float) -> None:
    """Pretend the daemon was away: the schedule's next run lies ``minutes_ago`` in the past."""
    past = iso(datetime.now(UTC) - timedelta(minutes=minutes_ago))
    store._exec("UPDATE schedules SET next_run_at = ? WHERE id = ?", (past, schedule_id))


def _clear_of_a_minute_boundary(seconds: float) -> None:
    """Wait, when needed, so the next ``seconds`` hold no real minute boundary: a test that
    says "nothing more starts in this window" must not see the real next window arrive."""
    import time

    now = datetime.now(UTC)
    if now.second + now.microsecond / 1e6 + seconds >= 60:
        time.sleep(60.2 - now.second - now.microsecond / 1e6)


def _sessions_of(store: Store, schedule_id: str) -> list[Any]:
    return [s for s in store.list_sessions() if s.name == f"schedule {schedule_id}"]


def _daemon_pass() -> dict[str, Any]:
    """One pass of a real daemon, run outside every schedule's directory."""
    result = run_ecc("daemon", "--once", "--json", cwd=Path(os.environ["HOME"]))
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def test_add_list_rm(git_repo: Path, store: Store) -> None:
    before = datetime.now(UTC)
    added = _add(git_repo, "echo scheduled", "--tz", "Europe/Paris")
    assert added["cron"] == "* * * * *" and added["timezone"] == "Europe/Paris"
    assert added["working_dir"] == str(git_repo.resolve())
    assert added["enabled"] is True and added["skip_if_running"] is True
    assert added["catch_up"] == "once"
    after = datetime.now(UTC)  # `add` may run in the minute after `before`
    following = parse_iso(added["next_run_at"])
    assert following is not None
    assert before < following <= after + timedelta(seconds=60)
    assert following.second == 0 and following.microsecond == 0

    listing = run_ecc("schedule", "list", cwd=git_repo)
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.splitlines()
    assert "NEXT RUN (LOCAL)" in header and "NEXT RUN (UTC)" in header
    assert row.startswith(added["id"]) and "echo scheduled" in row and "UTC" in row
    assert [r["id"] for r in ecc_json("schedule", "list")] == [added["id"]]

    unknown = run_ecc("schedule", "rm", "nosuchid")
    assert unknown.returncode == 1
    assert unknown.stderr.strip().count("\n") == 0 and "no schedule 'nosuchid'" in unknown.stderr
    removed = run_ecc("schedule", "rm", added["id"][:5])  # a unique prefix names it
    assert removed.returncode == 0, removed.stderr
    assert ecc_json("schedule", "list") == []


def test_bad_input_is_one_line_and_writes_nothing(git_repo: Path, store: Store) -> None:
    cases = {
        "61 * * * *": "bad minute field '61'",
        "* * * 13 *": "bad month field '13'",
        "* * * * mon-xyz": "bad day-of-week field 'mon-xyz'",
        "0 */5 * * * *": "has 6 fields; ecc takes 5",
        "* * *": "has 3 fields",
        "0 0 31 2 *": "never comes due",  # every field fine, the date impossible
    }
    for cron, expected in cases.items():
        result = run_ecc("schedule", "add", cron, "echo x", "--harness", "shell", cwd=git_repo)
        assert result.returncode == 1, (cron, result.stdout)
        assert expected in result.stderr and result.stderr.strip().count("\n") == 0, result.stderr
    result = run_ecc(
        "schedule", "add", "* * * * *", "echo x", "--harness", "shell", "--tz", "Mars/Base"
    )
    assert result.returncode == 1 and "unknown time zone 'Mars/Base'" in result.stderr
    result = run_ecc("schedule", "add", "* * * * *", "echo x", "--harness", "nosuch")
    assert result.returncode == 1 and "unknown harness 'nosuch'" in result.stderr
    assert ecc_json("schedule", "list") == []


def test_one_session_per_window_and_one_after_a_restart(git_repo: Path, store: Store) -> None:
    _clear_of_a_minute_boundary(15)
    schedule = _add(git_repo, "echo scheduled")
    assert _daemon_pass()["schedules"] == []  # not due yet: nothing starts
    assert _sessions_of(store, schedule["id"]) == []

    _make_due(store, schedule["id"], minutes_ago=10)  # ten windows missed while no daemon ran
    report = _daemon_pass()
    assert [r["outcome"] for r in report["schedules"]] == ["started"]
    (first,) = _sessions_of(store, schedule["id"])
    assert first.harness == "shell" and first.task == "echo scheduled"
    assert Path(first.project_dir) == git_repo.resolve()
    row = store.find_schedule(schedule["id"])
    assert row["last_session_id"] == first.id and row["last_outcome"] == "started"
    assert row["next_run_at"] > iso(datetime.now(UTC))  # the missed windows collapsed into one

    assert _daemon_pass()["schedules"] == []  # a restart in the same window starts nothing
    assert len(_sessions_of(store, schedule["id"])) == 1

    wait_state(store, first.id, "completed")
    _make_due(store, schedule["id"], minutes_ago=0.5)  # the next minute's window
    assert [r["outcome"] for r in _daemon_pass()["schedules"]] == ["started"]
    assert len(_sessions_of(store, schedule["id"])) == 2


def test_a_failing_schedule_does_not_block_the_next(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    doomed_dir = tmp_path / "doomed"
    doomed_dir.mkdir()
    doomed = _add(doomed_dir, "echo never")
    healthy = _add(git_repo, "echo healthy")
    shutil.rmtree(doomed_dir)
    _make_due(store, doomed["id"], minutes_ago=3)  # due first: it is tried first
    _make_due(store, healthy["id"], minutes_ago=2)

    outcomes = {r["schedule"]: r for r in _daemon_pass()["schedules"]}
    assert outcomes[doomed["id"]]["outcome"] == "failed"
    assert outcomes[healthy["id"]]["outcome"] == "started"
    failed = store.find_schedule(doomed["id"])
    assert "does not exist" in failed["last_error"] and failed["last_outcome"] == "failed"
    assert failed["next_run_at"] > iso(datetime.now(UTC))  # advanced: not retried every pass
    assert len(_sessions_of(store, healthy["id"])) == 1
    assert _sessions_of(store, doomed["id"]) == []


def test_overlap_is_skipped_and_run_now_keeps_the_next_run(git_repo: Path, store: Store) -> None:
    schedule = _add(git_repo, "echo started; sleep 1000")
    before = store.find_schedule(schedule["id"])["next_run_at"]
    started = ecc_json("schedule", "run-now", schedule["id"])
    session_id = started["session"]
    wait_state(store, session_id, "running")
    assert store.find_schedule(schedule["id"])["next_run_at"] == before

    _make_due(store, schedule["id"], minutes_ago=1)
    (result,) = _daemon_pass()["schedules"]
    assert result["outcome"] == "skipped" and session_id in result["reason"]
    row = store.find_schedule(schedule["id"])
    assert row["last_outcome"] == "skipped" and row["last_session_id"] == session_id
    assert row["next_run_at"] > iso(datetime.now(UTC))
    assert [s.id for s in _sessions_of(store, schedule["id"])] == [session_id]

    assert run_ecc("stop", session_id).returncode == 0
    wait_until(lambda: store.get_session(session_id).state in TERMINAL, what="the session to stop")


def test_disable_enable(git_repo: Path, store: Store) -> None:
    schedule = _add(git_repo, "echo x")
    assert run_ecc("schedule", "disable", schedule["id"]).returncode == 0
    _make_due(store, schedule["id"], minutes_ago=5)
    assert _daemon_pass()["schedules"] == []  # off: not due
    assert run_ecc("schedule", "enable", schedule["id"]).returncode == 0
    row = store.find_schedule(schedule["id"])
    assert row["enabled"] == 1 and row["next_run_at"] > iso(datetime.now(UTC))  # no catch-up


def test_a_window_is_claimed_once(store: Store, git_repo: Path) -> None:
    schedule = _add(git_repo, "echo x")
    other = store.reopen()
    try:
        seen = schedule["next_run_at"]
        later = iso(datetime.now(UTC) + timedelta(hours=1))
        claims = [
            store.claim_schedule_run(schedule["id"], seen, later),
            other.claim_schedule_run(schedule["id"], seen, later),  # saw the same next run
        ]
        assert claims == [True, False]
    finally:
        other.close()


def test_time_zones_follow_the_schedule() -> None:
    from ecc.sessions.schedules import next_run

    summer = datetime(2026, 7, 1, tzinfo=UTC)
    assert next_run("0 9 * * *", "Europe/Paris", summer) == "2026-07-01T07:00:00.000Z"
    winter = datetime(2026, 12, 1, tzinfo=UTC)
    assert next_run("0 9 * * *", "Europe/Paris", winter) == "2026-12-01T08:00:00.000Z"
    assert next_run("*/15 * * * *", "UTC", summer) == "2026-07-01T00:15:00.000Z"


def test_a_running_daemon_starts_one_session_per_window(git_repo: Path, store: Store) -> None:
    import signal
    import subprocess
    import time

    from tests.conftest import ECC

    _clear_of_a_minute_boundary(15)
    schedule = _add(git_repo, "echo scheduled")
    _make_due(store, schedule["id"], minutes_ago=5)
    daemon = subprocess.Popen(
        [*ECC, "daemon", "--interval", "0.1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ,
        cwd=os.environ["HOME"],
    )
    try:
        first = wait_until(lambda: _sessions_of(store, schedule["id"]), what="the first run")
        wait_state(store, first[0].id, "completed")
        time.sleep(1.0)  # about ten more passes inside the same window
        assert len(_sessions_of(store, schedule["id"])) == 1
        _make_due(store, schedule["id"], minutes_ago=0.1)  # the next minute comes
        wait_until(lambda: len(_sessions_of(store, schedule["id"])) == 2, what="the second run")
        time.sleep(1.0)
        assert len(_sessions_of(store, schedule["id"])) == 2
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(timeout=20)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def test_the_session_gets_its_directorys_config_as_ecc_run_would(
    git_repo: Path, tmp_path: Path, store: Store
) -> None:
    from tests.conftest import git

    evil = tmp_path / "evil"
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("auto_create_worktrees = false\n")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "initial")
    (other / ".ecc").mkdir()  # an untrusted file's guarded key counts for nothing
    (other / ".ecc" / "config.toml").write_text(f"worktree_root = {str(evil)!r}\n")
    plain = _add(git_repo, "echo plain")
    guarded = _add(other, "echo guarded")
    _make_due(store, plain["id"], minutes_ago=1)
    _make_due(store, guarded["id"], minutes_ago=1)
    assert {r["outcome"] for r in _daemon_pass()["schedules"]} == {"started"}
    (in_place,) = _sessions_of(store, plain["id"])
    assert not in_place.use_worktree and Path(in_place.working_dir) == git_repo.resolve()
    (started,) = _sessions_of(store, guarded["id"])
    in_worktree = wait_state(store, started.id, "completed")  # its runner made the worktree
    assert in_worktree.use_worktree and in_worktree.worktree_path
    assert not Path(in_worktree.worktree_path).is_relative_to(evil) and not evil.exists()


def test_catch_up_skip_starts_no_missed_run(git_repo: Path, store: Store) -> None:
    schedule = _add(git_repo, "echo on time only", "--catch-up", "skip")
    assert schedule["catch_up"] == "skip"
    _make_due(store, schedule["id"], minutes_ago=10)  # missed while no daemon ran
    (result,) = _daemon_pass()["schedules"]
    assert result["outcome"] == "skipped" and "catch_up = skip" in result["reason"]
    assert _sessions_of(store, schedule["id"]) == []
    assert store.find_schedule(schedule["id"])["next_run_at"] > iso(datetime.now(UTC))
    _make_due(store, schedule["id"], minutes_ago=0.1)  # due now: a daemon pass on time
    assert [r["outcome"] for r in _daemon_pass()["schedules"]] == ["started"]
    bad = run_ecc("schedule", "add", "* * * * *", "x", "--harness", "shell", "--catch-up", "all")
    assert bad.returncode == 2 and "--catch-up" in bad.stderr
