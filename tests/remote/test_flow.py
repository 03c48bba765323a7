"""The full flow over real HTTP: create a shell session, follow its output live over SSE, stop it;
and a server restart that loses nothing."""

from __future__ import annotations

import http.client
import os
from pathlib import Path

from tests.remote.conftest import Server, launch, read_sse

# Prints, then waits for a file the test creates, so the second line can only be produced (and
# streamed) after the test has seen the first one: proof that output is followed live.
WAIT_FOR_GO = "echo first; while [ ! -f go ]; do sleep 0.05; done; echo second; exec sleep 600"


def _open_stream(server: Server, session_id: str, after: int = 0, last_event_id: str | None = None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    headers = {"Authorization": f"Bearer {server.token}", "Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    conn.request("GET", f"/v1/sessions/{session_id}/stream?after={after}", headers=headers)
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("content-type").startswith("text/event-stream")
    return conn, response


def test_create_stream_live_then_stop(start_server) -> None:
    server = start_server()
    created = server.create(WAIT_FOR_GO, name="live")
    session_id = created["id"]
    assert server.call("GET", f"/v1/sessions/{session_id}").status == 200

    conn, response = _open_stream(server, session_id)
    try:
        frames = read_sse(response)
        event, data, ident = next(frames)
        assert (event, data["line"], data["stream"]) == ("line", "first", "stdout")
        assert ident == str(data["seq"])
        # the session is still running and "second" does not exist yet
        assert server.call("GET", f"/v1/sessions/{session_id}").body["state"] == "running"
        (server.root / "go").write_text("")
        event, data, _ = next(frames)
        assert (event, data["line"]) == ("line", "second")

        stopped = server.call("POST", f"/v1/sessions/{session_id}/stop", {"grace": 1})
        assert stopped.status == 200, stopped.body
        assert stopped.body["state"] == "stopped"

        event, data, _ = next(frames)
        assert event == "end"
        assert data["id"] == session_id and data["state"] == "stopped"
        assert next(frames, None) is None  # the server closes the stream after "end"
    finally:
        conn.close()

    # a late reader can resume after any line and still gets the end event
    conn, response = _open_stream(server, session_id, last_event_id="1")
    try:
        events = list(read_sse(response))
    finally:
        conn.close()
    assert [e[0] for e in events] == ["line", "end"]
    assert events[0][1]["line"] == "second"


def test_server_restart_loses_nothing(tmp_path: Path) -> None:
    base = tmp_path / "srv"
    first = launch(base)
    try:
        session_id = first.create(WAIT_FOR_GO)["id"]
        assert first.wait_state(session_id, {"running"})["state"] == "running"
    finally:
        first.shutdown()  # SIGTERM: the server goes, the detached session does not
    second = launch(base, token_file=first.token_file)
    try:
        session = second.call("GET", f"/v1/sessions/{session_id}").body
        assert session["state"] == "running"
        (second.root / "go").write_text("")
        conn, response = _open_stream(second, session_id)
        try:
            frames = read_sse(response)
            lines = [next(frames)[1]["line"], next(frames)[1]["line"]]
            assert lines == ["first", "second"]
            stopped = second.call("POST", f"/v1/sessions/{session_id}/stop", {"grace": 1})
            assert stopped.body["state"] == "stopped"
            assert next(frames)[0] == "end"
        finally:
            conn.close()
    finally:
        second.stop_all()
        second.shutdown()


def test_token_from_env_is_not_inherited_by_sessions(start_server, tmp_path: Path) -> None:
    token = "env-token-" + os.urandom(12).hex()
    server = start_server(extra_env={"ECC_REMOTE_TOKEN": token})
    assert server.call("GET", "/v1/sessions", token=token).status == 200
    # the file-based token of the fixture is not accepted: the env token was chosen
    assert server.call("GET", "/v1/sessions").status == 401
    server.token = token
    created = server.create('echo "token=${ECC_REMOTE_TOKEN:-absent}"')
    final = server.wait_state(created["id"], {"completed", "failed"})
    assert final["state"] == "completed"
    page = server.call("GET", f"/v1/sessions/{created['id']}/output").body
    assert [line["line"] for line in page["lines"]] == ["token=absent"]
    assert token not in "".join(server.log)


def test_several_tokens_in_one_file_are_all_accepted(start_server, tmp_path: Path) -> None:
    tokens = ["first-token-" + "a" * 20, "second-token-" + "b" * 20]
    path = tmp_path / "tokens"
    path.write_text("# two clients\n" + "\n".join(tokens) + "\n")
    path.chmod(0o600)
    server = start_server(token_file=path)
    for token in tokens:
        assert server.call("GET", "/v1/sessions", token=token).status == 200
    assert server.call("GET", "/v1/sessions", token="# two clients").status == 401


def test_env_token_is_dropped_even_when_a_token_file_wins(start_server, tmp_path: Path) -> None:
    path = tmp_path / "file-token"
    path.write_text("file-token-" + "f" * 30 + "\n")
    path.chmod(0o600)
    env_token = "env-token-" + os.urandom(12).hex()
    server = start_server(
        token_file=path,
        extra_args=["--token-file", str(path)],
        extra_env={"ECC_REMOTE_TOKEN": env_token},
    )
    assert server.call("GET", "/v1/sessions", token=env_token).status == 401
    created = server.create('echo "token=${ECC_REMOTE_TOKEN:-absent}"')
    final = server.wait_state(created["id"], {"completed", "failed"})
    page = server.call("GET", f"/v1/sessions/{final['id']}/output").body
    assert [line["line"] for line in page["lines"]] == ["token=absent"]
