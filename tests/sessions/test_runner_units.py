"""Capture in-process: line splitting, parser ownership, usage events (ecc.sessions.capture)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ecc.contract.types import OutputEvent
from ecc.sessions.parsing import apply_output_event, owning_parser
from ecc.sessions.spool import MAX_LINE_BYTES, LineSplitter
from ecc.store.base import Store
from ecc.store.models import State
from ecc.store.sqlite import SqliteStore


class _Impl:
    def __init__(self, name: str, function: Any, argnames: tuple[str, ...]) -> None:
        self.plugin_name = name
        self.function = function
        self.argnames = argnames


class _Hook:
    def __init__(self, impls: list[_Impl]) -> None:
        self.impls = impls

    def get_hookimpls(self) -> list[_Impl]:
        return self.impls


def test_line_splitting_joins_chunks_and_caps_lines() -> None:
    """The line rules every stream of a spool is read with (``LineSplitter``): CR-LF, a line
    split across chunks, an over-long line truncated, bad UTF-8 replaced, the unterminated
    rest at the end."""
    splitter = LineSplitter()
    got: list[str] = []
    for chunk in (b"a\r\nb", b"c\n" + b"x" * (MAX_LINE_BYTES + 10) + b"\nafter\n\xff\nrest"):
        splitter.feed(chunk)
        while batch := splitter.lines():
            got += batch
    got += splitter.rest()
    assert got[:2] == ["a", "bc"]
    assert got[2].endswith("[line truncated]")
    assert got[3:] == ["after", "\ufffd", "rest"]
    assert splitter.truncated == 1


def test_parser_owner_is_the_one_that_does_not_return_none() -> None:
    calls: list[str] = []

    def other(harness: str, line: str, stream: str) -> Any:
        calls.append("other")
        return None

    def mine(harness: str, line: str) -> Any:  # fewer arguments than the spec: allowed
        calls.append("mine")
        return [OutputEvent("usage", {"input_tokens": 1})] if harness == "x" else None

    parser = owning_parser(
        _Hook(
            [
                _Impl("o", other, ("harness", "line", "stream")),
                _Impl("m", mine, ("harness", "line")),
            ]
        ),
        "x",
        "l",
        "stdout",
    )
    assert parser is not None
    calls.clear()
    assert parser(harness="x", line="l2", stream="stdout")[0].kind == "usage"
    assert calls == ["mine"]
    # the plugins that declare the harness are the only ones asked: a sole one is the parser even
    # when it has nothing to say about the first line
    calls.clear()
    sole = owning_parser(_Hook([_Impl("m", mine, ("harness", "line"))]), "x", "banner", "stdout")
    assert sole is not None and calls == []  # not asked about the first line twice
    assert sole(harness="x", line="l", stream="stdout")[0].kind == "usage"
    assert owning_parser(_Hook([]), "x", "l", "stdout") is None


def test_output_events_land_in_the_store(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "ecc.db")
    session = store.insert_session(
        "s1",
        task="t",
        harness="h",
        state=State.PENDING,
        reason="created",
        project_dir="/",
        working_dir="/",
    )
    apply_output_event(store, session, OutputEvent("harness_session", {"id": "abc"}))
    apply_output_event(
        store,
        session,
        OutputEvent("usage", {"input_tokens": 3, "output_tokens": 4, "cost_usd": 0.01}),
    )
    apply_output_event(
        store, session, OutputEvent("tool_call", {"tool": "Bash", "input": {"command": "ls"}})
    )
    apply_output_event(store, session, OutputEvent("final", {"text": "done"}))
    fresh = store.get_session("s1")
    assert fresh is not None and fresh.harness_session_id == "abc"
    assert (fresh.input_tokens, fresh.output_tokens, fresh.cost_usd) == (3, 4, 0.01)
    assert store.list_tool_calls("s1")[0]["tool"] == "Bash"
    assert store.list_events("s1")[-1]["kind"] == "output_final"
    store.close()


def test_runner_reads_the_cached_config_view_not_pydantic(tmp_path: Path, store: Store) -> None:
    """A runner starts beside the next ``ecc run -d``: no pydantic for a profile-less session."""
    import json
    import subprocess
    import sys

    from ecc.runtime.config import view as fastconfig
    from ecc.sessions import manager

    config = fastconfig.view(cwd=tmp_path)  # fills the cached view, as ecc run does there
    request = manager.Request(task="echo hi", harness="shell", use_worktree=False, cwd=tmp_path)
    session = manager.create(store, request, config)
    probe = (
        "import json, sys\n"
        "from ecc.sessions.runner import run_session\n"
        "status = run_session(sys.argv[1])\n"
        "heavy = [m for m in ('pydantic', 'ecc.runtime.config.model') if m in sys.modules]\n"
        "print(json.dumps([status, heavy]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, session.id],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [0, []]
    final = store.get_session(session.id)
    assert final is not None and final.state == State.COMPLETED
    assert [row["line"] for row in store.read_output(session.id)] == ["hi"]


def test_an_idle_writer_ends_when_closed_not_at_its_safety_timeout(tmp_path: Path) -> None:
    """Closing wakes an idle store writer for good: it used to sleep on through the wake-up
    (no work had come) until its 5 s safety net, and every runner waited as long to exit."""
    from ecc.sessions.capture import Writer

    store = SqliteStore(tmp_path / "ecc.db")
    session = store.insert_session(
        "s1", task="t", harness="h", state=State.PENDING, reason="created",
        project_dir="/", working_dir="/",
    )  # fmt: skip
    writer = Writer(store.reopen, session, None, 1, {}, 0, retry_secs=1.0)
    writer.start()
    try:
        assert writer.call(lambda db: db.get_session("s1")).id == "s1"  # then it waits, idle
        writer.close(timeout=2.0)
        assert not writer.is_alive()
        # and a call after the end is refused at once, never left unanswered
        future = writer.submit(lambda db: db.get_session("s1"))
        assert future.exception(timeout=1.0) is not None
    finally:
        writer.close()
        store.close()
