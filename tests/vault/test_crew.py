"""The cold build's forked workers (``ecc.vault.crew``): every piece handed out is done exactly
once, by a worker or by the caller's own claim; a failing worker is reported, never lost work
taken as done; and the caller runs no thread of its own (its threads had to win the
interpreter lock from a busy caller before a worker got its next piece)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecc.vault import rowbuild
from ecc.vault.crew import Crew
from tests.vault.test_cold_build import _write_vault


def _work(number: int) -> bytes:
    return f"{number}:{os.getpid()}".encode() * (number % 5 + 1) * 1000  # some span pipes


def _run(crew: Crew, total: int, window: int, claims: list[bool]) -> dict[int, bytes]:
    """The caller's loop: results in order, claiming a piece itself when told to."""
    done: dict[int, bytes] = {}
    turn = 0
    for number in range(total):
        while number not in done:
            crew.hand_out(number + window, total)
            if (data := crew.take(number)) is not None:
                done[number] = data
                continue
            assert not crew.failed
            mine = claims[turn % len(claims)]
            turn += 1
            if mine and (claimed := crew.claim()) is not None:
                assert claimed not in done
                done[claimed] = _work(claimed)
            else:
                crew.poll(0.05)
    return done


@settings(max_examples=15, deadline=None)
@given(
    total=st.integers(1, 40),
    window=st.integers(1, 8),
    size=st.integers(1, 3),
    claims=st.lists(st.booleans(), min_size=1, max_size=6),
)
def test_every_piece_is_done_once_whoever_takes_it(
    total: int, window: int, size: int, claims: list[bool]
) -> None:
    crew = Crew.start(size, _work)
    assert crew is not None
    try:
        done = _run(crew, total, window, claims)
    finally:
        crew.close()
    assert sorted(done) == list(range(total))
    for number, data in done.items():
        assert data.split(b":")[0] == str(number).encode()


def test_workers_end_cleanly_once_everything_is_handed_out() -> None:
    crew = Crew.start(2, _work)
    assert crew is not None
    pids = set(crew.workers.values())
    try:
        _run(crew, 10, 4, [False])
        while crew.workers:
            crew.poll(1.0)
        assert not crew.failed
    finally:
        crew.close()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped


def _dies(number: int) -> bytes:
    if number == 3:
        os._exit(7)
    return _work(number)


def _raises(number: int) -> bytes:
    if number == 3:
        raise RuntimeError("a worker's own failure")
    return _work(number)


@pytest.mark.parametrize("work", [_dies, _raises])
def test_a_worker_that_fails_is_reported(work) -> None:
    crew = Crew.start(1, work)
    assert crew is not None
    try:
        crew.hand_out(5, 5)
        got = {}
        while not crew.failed:
            crew.poll(1.0)
            got.update(crew.results)
        assert 3 not in got  # never taken as done
    finally:
        crew.close()


def test_a_parallel_build_starts_no_thread_in_the_caller(
    make_service, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rowbuild, "PARALLEL_MIN", 40)
    monkeypatch.setattr(rowbuild, "CHUNK", 16)
    monkeypatch.setattr(rowbuild, "_load", lambda: 0.0)
    _write_vault(repo, 300)
    counts: list[int] = []
    forks: list[int] = []
    original = Crew.start.__func__  # type: ignore[attr-defined]

    def start(cls, size, work):
        crew = original(cls, size, work)
        forks.append(len(crew.workers) if crew else 0)
        return crew

    monkeypatch.setattr(Crew, "start", classmethod(start))
    real_received = rowbuild._received

    def received(data: bytes):
        counts.append(threading.active_count())
        return real_received(data)

    monkeypatch.setattr(rowbuild, "_received", received)
    found = make_service().search("migration", scopes=["project"])
    assert forks and forks[0] >= 1 and counts, "no worker's chunk came back"
    assert set(counts) == {1}
    assert found == make_service(cache_dir=None).search("migration", scopes=["project"])


def test_a_worker_that_fails_to_start_never_runs_the_callers_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker that fails before its loop exits: it never returns from the fork into
    the caller's code (which would go on as a second copy of the caller)."""
    from ecc.vault import crew as crew_module

    def broken(tasks: int, results: int, work) -> None:
        raise RuntimeError("a worker that could not start")

    monkeypatch.setattr(crew_module, "_serve", broken)
    log = tmp_path / "callers.log"
    caller = os.getpid()
    try:
        crew = Crew.start(1, _work)
    except RuntimeError:
        crew = None
    with open(log, "a") as file:
        file.write(f"{os.getpid()}\n")
    if os.getpid() != caller:
        os._exit(0)  # a worker came back here: recorded, and stopped before it does more
    assert crew is not None
    try:
        crew.hand_out(2, 2)
        while not crew.failed:
            crew.poll(1.0)
    finally:
        crew.close()
    assert log.read_text().split() == [str(os.getpid())]
