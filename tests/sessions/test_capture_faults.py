"""Output capture under faults: a locked store, a full disk, a killed runner, a flood.

Real processes throughout: the runner is the detached ``ecc run-session`` that ``ecc start``
spawns, the lock is another process's ``BEGIN IMMEDIATE`` on the session's ``ecc.db``, the full
disk is a small tmpfs mounted over the state dir (a file-size limit where mounting is refused),
and the runner is killed with a real SIGKILL.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ecc.sessions import procs
from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.open import open_store
from tests.conftest import ECC, run_ecc
from tests.sessions.conftest import start, wait_state, wait_until, write_config

# These faults belong to SQLite (another process's lock on the file, the disk under it): the
# tests run against the SQLite store only, where the others run against both.
sqlite_only = pytest.mark.parametrize("store_kind", ["sqlite"])

# A harness that prints numbered lines (about 10,000 a second) until a flag file appears, and
# keeps going when a write fails (a full disk), so only the runner can end it.
FLOOD = """
import os, sys, time
i = 0
while not os.path.exists(sys.argv[1]):
    chunk = "".join(f"{n}\\n" for n in range(i + 1, i + 101)).encode()
    try:
        os.write(1, chunk)
        i += 100
    except OSError:
        pass
    time.sleep(0.01)
"""


def flood_task(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "flood.py"
    script.write_text(FLOOD)
    flag = tmp_path / "enough"
    return f"{sys.executable} {script} {flag}", flag


@contextlib.contextmanager
def write_lock(db: Path, seconds: float = 3600.0) -> Iterator[subprocess.Popen[str]]:
    """Another process holds SQLite's write lock on ``db`` for ``seconds`` (or until the block
    ends): the lock a second writer of ``ecc.db`` waits for and then gets "database is locked"."""
    script = (
        "import sqlite3, sys, time\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "time.sleep(float(sys.argv[2]))\n"
        "db.execute('COMMIT')\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(db), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def lines_of(store: Store, sid: str) -> list[str]:
    return [row["line"] for row in store.read_output(sid)]


def assert_counts_up(lines: list[str], total: int | None = None) -> None:
    """1, 2, 3, … each exactly once and in order (the last may be cut short by a kill)."""
    assert lines, "no output stored"
    expected = [str(n) for n in range(1, len(lines) + 1)]
    if total is not None:
        assert len(lines) == total
    assert lines[:-1] == expected[:-1]
    assert expected[-1].startswith(lines[-1]) and lines[-1]


def runner_gone(session: object) -> bool:
    return not procs.alive(session.runner_pid, session.runner_token)  # type: ignore[attr-defined]


def spool_of(sid: str) -> Path:
    return Path(os.environ["ECC_STATE_DIR"]) / "spool" / sid


def vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


@sqlite_only  # no store in it: once is enough
def test_lines_are_the_same_however_the_spool_is_read() -> None:
    """The splitter reads a spool in any chunks, a batch at a time (its fast path decodes a
    chunk at once): the lines are always those of splitting the whole output, as ecc has."""
    from ecc.sessions.spool import MAX_LINE_BYTES, LineSplitter

    rng = random.Random(21)
    pieces = [b"a", b"\n", b"\r", b"\xff", b"\xe2\x82", b"\xe2\x82\xac", b"z" * 999]

    def whole(data: bytes) -> list[str]:
        parts = data.split(b"\n")
        if parts[-1] == b"":
            parts.pop()
        out = []
        for part in parts:
            text = part[:MAX_LINE_BYTES].removesuffix(b"\r").decode("utf-8", "replace")
            out.append(text + " [line truncated]" if len(part) > MAX_LINE_BYTES else text)
        return out

    for _ in range(400):
        chosen = [rng.choice(pieces) for _ in range(rng.randint(0, 40))]
        if rng.random() < 0.3:
            chosen.insert(rng.randint(0, len(chosen)), b"y" * (MAX_LINE_BYTES + rng.randint(-2, 9)))
        data = b"".join(chosen)
        cuts = sorted(rng.sample(range(len(data) + 1), min(len(data) + 1, rng.randint(0, 6))))
        splitter, got, start = LineSplitter(), [], 0
        for cut in [*cuts, len(data)]:
            splitter.feed(data[start:cut])
            start = cut
            while (batch := splitter.lines(rng.choice([1, 3, 5000]))) or splitter.buf.count(b"\n"):
                got += batch
        got += splitter.rest()
        assert got == whole(data) and splitter.consumed == len(data)


def test_a_spool_cursor_moves_once_with_its_lines(store: Store) -> None:
    """Lines and the cursor past them are stored together, and only from where the cursor is:
    a second reader of the same part stores nothing (no line twice)."""
    store.insert_session(
        "s1", task="t", harness="shell", state=State.PENDING, reason="c", project_dir="/",
        working_dir="/",
    )  # fmt: skip
    rows = [
        (1, "stdout", "2026-01-01T00:00:00.000Z", "a"),
        (2, "stdout", "2026-01-01T00:00:00.000Z", "b"),
    ]
    assert store.append_spooled("s1", 1, rows, {"stdout": ((0, False), (4, False))})
    assert not store.append_spooled("s1", 1, rows, {"stdout": ((0, False), (4, False))})
    assert store.spool_cursors("s1", 1) == {"stdout": (4, False)}
    assert store.spool_cursors("s1", 2) == {}
    assert [row["line"] for row in store.read_output("s1")] == ["a", "b"]


@sqlite_only
def test_a_store_locked_longer_than_sqlite_waits_loses_no_line(
    tmp_path: Path, store: Store
) -> None:
    """Item 4: the store is locked for longer than SQLite's busy timeout (10 s) while lines pour
    in; the runner retries, and once the lock is gone every line is stored, once, in order."""
    write_config(Path.home(), heartbeat_interval_secs=1.0)
    task, flag = flood_task(tmp_path)
    sid = start(task, tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) > 500, what="the first lines")
    with write_lock(store.path, seconds=11.0) as holder:
        holder.wait(timeout=30)  # the holder commits after 11 s
    wait_until(lambda: procs.group_alive(session.harness_pgid), 5, "the harness still printing")
    flag.touch()
    final = wait_state(store, sid, "completed", "failed", timeout=60)
    assert final.state == State.COMPLETED, final.reason
    assert_counts_up(lines_of(store, sid))
    assert int(lines_of(store, sid)[-1]) % 100 == 0  # the harness prints whole hundreds
    wait_until(lambda: runner_gone(session), 10, "the runner to exit")
    assert not spool_of(sid).exists()


@sqlite_only
def test_a_store_locked_past_the_retry_window_fails_the_session_and_the_runner_exits(
    tmp_path: Path, store: Store
) -> None:
    """Item 4: a lock that outlasts ``store_retry_secs`` ends the session failed with the reason;
    the runner ends its harness and exits (it used to join its writer forever), and recovery
    stores the rest of the output afterwards."""
    write_config(Path.home(), store_retry_secs=1.0, heartbeat_interval_secs=1.0)
    task, _ = flood_task(tmp_path)
    sid = start(task, tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) > 500, what="the first lines")
    with write_lock(store.path):
        wait_until(
            lambda: not procs.group_alive(session.harness_pgid), 30, "the runner to end its harness"
        )
    wait_until(lambda: runner_gone(session), 20, "the runner to exit")
    final = store.get_session(sid)
    assert final is not None and final.state == State.FAILED, final
    assert "could not be stored" in final.reason, final.reason
    assert "database is locked" in final.reason, final.reason
    result = run_ecc("daemon", "--once", "--json")
    assert result.returncode == 0, result.stderr
    assert_counts_up(lines_of(store, sid))  # what the harness printed, none twice
    assert not spool_of(sid).exists()


@pytest.fixture
def small_state_fs(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The state dir on a 4 MiB tmpfs; where mounting is refused, a 3 MiB file-size limit for
    the processes ``ecc start`` spawns instead. Yields (state dir, "tmpfs" or "rlimit")."""
    state = Path(os.environ["ECC_STATE_DIR"])
    state.mkdir(parents=True, exist_ok=True)
    mounted = (
        shutil.which("mount") is not None
        and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(state)],
            capture_output=True,
        ).returncode
        == 0
    )
    try:
        yield state, "tmpfs" if mounted else "rlimit"
    finally:
        db = state / "ecc.db"
        if db.exists():  # end every process before the filesystem goes
            with open_store(db) as store:
                rows = store._rows("SELECT runner_pid, harness_pgid FROM sessions")
            for row in rows:
                for group in (row["harness_pgid"], row["runner_pid"]):
                    if group:
                        with contextlib.suppress(OSError):
                            os.killpg(group, signal.SIGKILL)
        if mounted:
            subprocess.run(["umount", "-l", str(state)], check=False)


@sqlite_only
def test_a_full_state_filesystem_fails_the_session_and_the_runner_exits(
    small_state_fs: tuple[Path, str], tmp_path: Path
) -> None:
    """Item 4: the disk under ``ecc.db`` (and the spool) fills up while the harness prints: the
    runner retries for ``store_retry_secs``, ends the harness, records the failure with the
    reason and exits; it used to hang with the session ``running``."""
    state, how = small_state_fs
    write_config(Path.home(), store_retry_secs=1.5, heartbeat_interval_secs=0.5)
    store = open_store(state / "ecc.db")
    task, _ = flood_task(tmp_path)
    limit = 3 * 1024 * 1024

    def small_files() -> None:  # the fallback: every file the runner writes stays under 3 MiB
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    spawned = subprocess.run(
        [*ECC, "start", "--no-worktree", "--json", task],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=None if how == "tmpfs" else small_files,
    )
    assert spawned.returncode == 0, spawned.stderr
    sid = json.loads(spawned.stdout)["id"]
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) > 500, what="the first lines")
    filler = state / "filler"
    if how == "tmpfs":
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        with contextlib.suppress(OSError):  # ENOSPC: full
            while os.write(fd, b"\0" * 65536):
                pass
        os.close(fd)
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 30, "the harness to be ended")
    filler.unlink(missing_ok=True)
    if how == "rlimit":  # room again: lift the runner's limit
        unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        resource.prlimit(session.runner_pid, resource.RLIMIT_FSIZE, unlimited)
    wait_until(lambda: runner_gone(session), 20, "the runner to exit")
    final = store.get_session(sid)
    assert final is not None and final.state == State.FAILED, final
    # a full disk is SQLite's "database or disk is full"; past a file-size limit, "disk I/O error"
    symptom = "full" if how == "tmpfs" else "I/O error"
    assert "could not be stored" in final.reason and symptom in final.reason, final.reason
    store.close()


def test_a_runner_killed_mid_flood_loses_no_line_once_recovered(
    tmp_path: Path, store: Store
) -> None:
    """Item 5: SIGKILL the runner while it is far behind a flood; every line the harness printed
    is in the spool, and ``ecc daemon --once`` stores the rest: each line once, in order."""
    write_config(Path.home(), stop_grace_secs=10.0)  # the harness outlives its runner's death
    total = 200_000
    sid = start(f"trap '' TERM HUP; seq 1 {total}", tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) > 0, what="the first stored lines")
    os.kill(session.runner_pid, signal.SIGKILL)  # type: ignore[arg-type]
    assert store.count_output(sid) < total, "the runner was not behind: nothing to lose"
    wait_until(lambda: runner_gone(session), 10, "the runner to die")
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 20, "the harness to end")
    result = run_ecc("daemon", "--once", "--json")
    assert result.returncode == 0, result.stderr
    final = store.get_session(sid)
    assert final is not None and final.state == State.FAILED
    assert "died" in final.reason
    rows = store.read_output(sid)
    assert_counts_up([row["line"] for row in rows if row["stream"] == "stdout"], total)
    assert [row["seq"] for row in rows] == list(range(1, len(rows) + 1))
    assert not spool_of(sid).exists()


@sqlite_only
def test_memory_stays_bounded_and_the_harness_is_paused_while_the_store_stalls(
    tmp_path: Path, store: Store
) -> None:
    """Item 6: a harness far faster than a stalled store is paused, never dropped, and the
    runner's memory stays bounded (it used to queue every line: about 60 bytes each)."""
    total = 400_000  # printed in 40 bursts over a second or more: it outlasts the first pause
    task = "for i in $(seq 0 39); do seq $((i*10000+1)) $((i*10000+10000)); sleep 0.02; done"
    sid = start(task, tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    peak = 0
    with write_lock(store.path):
        deadline = time.monotonic() + 4.0
        while time.monotonic() < deadline:
            peak = max(peak, vm_hwm_kib(session.runner_pid))  # type: ignore[arg-type]
            time.sleep(0.05)
    while not runner_gone(session):
        peak = max(peak, vm_hwm_kib(session.runner_pid))  # type: ignore[arg-type]
        time.sleep(0.05)
    final = store.get_session(sid)
    assert final is not None and final.state == State.COMPLETED, final.reason
    assert store.count_output(sid) == total
    assert lines_of(store, sid)[-1] == str(total)
    assert 0 < peak < 42 * 1024, f"runner peak RSS {peak / 1024:.0f} MB"
    paused = [e for e in store.list_events(sid) if e["kind"] == "backpressure"]
    assert paused and "paused" in paused[0]["reason"]


def test_stop_is_prompt_under_an_endless_flood(tmp_path: Path, store: Store) -> None:
    """Item 6: ``ecc stop`` of a harness that prints without end is carried out by the runner
    within the stop's grace (it used to run past it, 17 s, and record "runner absent")."""
    sid = start("seq 1 1000000000", tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) > 20_000, what="the flood to be under way")
    result = run_ecc("stop", sid, "--grace", "1", "--json")
    assert result.returncode == 0, result.stderr
    stopped = json.loads(result.stdout)
    assert stopped["state"] == "stopped"
    # the runner's own record, within the time ecc stop gives a live runner (grace + 10 s): past
    # it ecc stop records "runner absent" itself (no wall-clock bound here: CI's load varies)
    assert "runner absent" not in stopped["reason"]
    wait_until(lambda: runner_gone(session), 10, "the runner to exit")
    assert not [e for e in store.list_events(sid) if e["kind"] == "exit"]  # "not applied"
    assert not procs.group_alive(session.harness_pgid)
    lines = lines_of(store, sid)
    assert lines[: len(lines) - 1] == [str(n) for n in range(1, len(lines))]


def test_a_last_stderr_line_comes_after_all_the_stdout_before_it(
    tmp_path: Path, store: Store
) -> None:
    """Two spool files, one order: a line written to stderr after a flood on stdout is stored
    after all of it, however far behind the store is when it is written."""
    sid = start("seq 1 300000; echo err >&2", tmp_path, "--no-worktree")
    assert wait_state(store, sid, "completed", "failed", timeout=60).state == State.COMPLETED
    rows = store.read_output(sid)
    assert [(r["stream"], r["line"]) for r in rows[-2:]] == [
        ("stdout", "300000"),
        ("stderr", "err"),
    ]
    assert len(rows) == 300_001


@sqlite_only
def test_a_harness_paused_in_the_middle_of_a_line_goes_on(tmp_path: Path, store: Store) -> None:
    """Back-pressure counts what the store can take: a line still waiting for its newline is
    not a backlog (pausing the harness on it would wait for the harness forever)."""
    script = tmp_path / "half.py"
    script.write_text(
        "import os, sys, time\n"
        "while not os.path.exists(sys.argv[1]):\n"
        "    time.sleep(0.02)\n"
        "os.write(1, (b'a' * 99 + b'\\n') * 1000 + b'x' * 40000)\n"  # a flood, then half a line
        "time.sleep(0.5)\n"
        "os.write(1, b'\\nend\\n')\n"
    )
    flag = tmp_path / "go"
    sid = start(f"{sys.executable} {script} {flag}", tmp_path, "--no-worktree")
    wait_state(store, sid, "running")
    with write_lock(store.path):  # the flood cannot be stored: the harness is paused on it
        flag.touch()
        time.sleep(1.0)
    final = wait_state(store, sid, "completed", "failed", timeout=30)
    assert final.state == State.COMPLETED, final.reason
    assert lines_of(store, sid) == ["a" * 99] * 1000 + ["x" * 40000, "end"]
