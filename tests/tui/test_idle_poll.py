"""An idle poll of the dashboard judges the runners it watches, not every session it shows:
with hundreds of queued sessions, walking all of them four times a second was idle CPU."""

from __future__ import annotations

from typing import Any

from ecc.store.open import open_store
from ecc.tui import data


def test_liveness_is_judged_only_for_sessions_with_a_runner(store, sessions, monkeypatch):
    queued = [sessions.create(f"echo {number}") for number in range(20)]
    judged: list[list[str]] = []
    real = data.refresh_liveness

    def recording(store: Any, rows: Any, *args: Any, **kwargs: Any) -> Any:
        rows = list(rows)
        judged.append(sorted(s.id for s in rows))
        return real(store, rows, *args, **kwargs)

    monkeypatch.setattr(data, "refresh_liveness", recording)
    watcher = data.SessionWatcher(store)
    watcher.poll()
    watcher.poll()
    assert judged[-1] == []  # no session has a runner yet
    other = open_store()  # a runner's own connection records its pid
    try:
        other.update_session(queued[3].id, runner_pid=999_999_999, runner_host="elsewhere")
    finally:
        other.close()
    watcher.poll()  # reads the change...
    watcher.poll()  # ...and the next look judges that runner
    assert judged[-1] == [queued[3].id]
    store.update_session(queued[3].id, runner_pid=None, runner_host=None)  # nothing to stop
