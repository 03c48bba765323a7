"""Authentication, validation and error shapes of the real server over HTTP (shared server)."""

from __future__ import annotations

import http.client
import os
import socket

import pytest

from tests.remote.conftest import Server

WRONG = "x" * 43


def _error(reply, status: int, code: str) -> dict:
    assert reply.status == status, (reply.status, reply.body)
    assert reply.headers["content-type"].startswith("application/json")
    assert reply.body["error"] == code, reply.body
    assert reply.body["message"]
    return reply.body  # type: ignore[no-any-return]


def test_health_needs_no_token_and_says_nothing_else(shared_server: Server) -> None:
    reply = shared_server.call("GET", "/v1/health", token=None)
    assert reply.status == 200
    assert reply.body == {"ok": True}


def test_openapi_is_served_and_lists_the_v1_endpoints(shared_server: Server) -> None:
    reply = shared_server.call("GET", "/openapi.json", token=None)
    assert reply.status == 200
    paths = reply.body["paths"]
    assert set(paths) == {
        "/v1/health",
        "/v1/sessions",
        "/v1/sessions/{session_id}",
        "/v1/sessions/{session_id}/output",
        "/v1/sessions/{session_id}/stream",
        "/v1/sessions/{session_id}/tool-calls",
        "/v1/sessions/{session_id}/stop",
        "/v1/sessions/{session_id}/messages",
        "/v1/approvals",
        "/v1/approvals/{approval_id}",
    }
    assert "HTTPBearer" in reply.body["components"]["securitySchemes"]


@pytest.mark.parametrize(
    "header",
    [
        None,  # missing
        "Basic dXNlcjpwYXNz",  # another scheme
        "Bearer",  # no token
        "Bearer ",  # empty token
        "Bearer a b",  # two words
        f"Bearer {WRONG}",  # well formed, wrong
        "Bearer " + "y" * 600,  # absurdly long
    ],
)
def test_missing_wrong_and_malformed_tokens_get_401(shared_server: Server, header) -> None:
    headers = {"Authorization": header} if header is not None else {}
    reply = shared_server.call("GET", "/v1/sessions", token=None, headers=headers)
    body = _error(reply, 401, "unauthorized")
    assert reply.headers["www-authenticate"].startswith("Bearer")
    assert shared_server.token not in reply.raw.decode()
    assert "sessions" not in body


def test_non_ascii_token_bytes_get_401_not_500(shared_server: Server) -> None:
    with socket.create_connection((shared_server.host, shared_server.port), timeout=30) as sock:
        sock.sendall(
            b"GET /v1/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\xc3\xa9tok\r\n"
            b"Connection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 401 ")


def test_token_compared_exactly_a_prefix_or_extension_fails(shared_server: Server) -> None:
    token = shared_server.token
    for candidate in (token[:-1], token + "x", token.upper() if token != token.upper() else WRONG):
        reply = shared_server.call("GET", "/v1/sessions", token=candidate)
        _error(reply, 401, "unauthorized")
    assert shared_server.call("GET", "/v1/sessions").status == 200


def test_unknown_route_needs_a_token_then_is_404_json(shared_server: Server) -> None:
    _error(shared_server.call("GET", "/v1/nothing", token=None), 401, "unauthorized")
    _error(shared_server.call("GET", "/v1/nothing"), 404, "not_found")
    _error(shared_server.call("DELETE", "/v1/sessions"), 405, "method_not_allowed")


def test_repository_outside_allowed_roots_is_403(shared_server: Server, tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for repository in (
        str(outside),
        "/",
        str(shared_server.root / ".." / "outside"),
        str(shared_server.root) + "-sibling",
    ):
        reply = shared_server.call(
            "POST", "/v1/sessions", {"task": "echo no", "repository": repository}
        )
        _error(reply, 403, "forbidden_path")


def test_symlink_inside_allowed_root_pointing_out_is_403(shared_server: Server, tmp_path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    link = shared_server.root / f"link-{os.getpid()}-{id(tmp_path)}"
    link.symlink_to(outside)
    reply = shared_server.call(
        "POST", "/v1/sessions", {"task": "echo no", "repository": str(link), "harness": "shell"}
    )
    _error(reply, 403, "forbidden_path")
    assert not list(outside.iterdir())


def test_repository_must_exist_and_be_absolute(shared_server: Server) -> None:
    missing = shared_server.root / "does-not-exist"
    body = {"task": "echo", "repository": str(missing), "harness": "shell"}
    _error(shared_server.call("POST", "/v1/sessions", body), 422, "invalid")
    body = {"task": "echo", "repository": "relative/path", "harness": "shell"}
    _error(shared_server.call("POST", "/v1/sessions", body), 422, "invalid")


def test_unknown_harness_and_profile_are_422(shared_server: Server) -> None:
    root = str(shared_server.root)
    reply = shared_server.call(
        "POST", "/v1/sessions", {"task": "x", "repository": root, "harness": "nosuchharness"}
    )
    assert "nosuchharness" in _error(reply, 422, "unknown_harness")["message"]
    reply = shared_server.call(
        "POST", "/v1/sessions", {"task": "x", "repository": root, "profile": "nosuchprofile"}
    )
    assert "nosuchprofile" in _error(reply, 422, "unknown_profile")["message"]


def test_harness_and_profile_outside_the_allow_lists_are_403(shared_server: Server) -> None:
    root = str(shared_server.root)
    reply = shared_server.call(
        "POST", "/v1/sessions", {"task": "x", "repository": root, "harness": "other"}
    )
    _error(reply, 403, "harness_not_allowed")
    reply = shared_server.call(
        "POST", "/v1/sessions", {"task": "x", "repository": root, "profile": "secret"}
    )
    _error(reply, 403, "profile_not_allowed")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"repository": "/tmp"}, "task"),  # missing
        ({"task": "", "repository": "/tmp"}, "task"),  # empty
        ({"task": "   \n", "repository": "/tmp"}, "task"),  # blank
        ({"task": 5, "repository": "/tmp"}, "task"),  # wrong type
        ({"task": "a\x00b", "repository": "/tmp"}, "task"),  # NUL
        ({"task": "x", "repository": "/tmp", "worktree": "true"}, "worktree"),  # no coercion
        ({"task": "x", "repository": "/tmp", "harness": "../../bin/sh"}, "harness"),
        ({"task": "x", "repository": "/tmp", "name": "a\x1b[31m"}, "name"),
        ({"task": "x", "repository": "/tmp", "surprise": 1}, "surprise"),  # unknown field
        ({"task": "x" * 100_001, "repository": "/tmp"}, None),  # too long (413 or 422)
    ],
)
def test_invalid_fields_are_422_with_the_field_named(shared_server: Server, body, field) -> None:
    reply = shared_server.call("POST", "/v1/sessions", body)
    if field is None:
        assert reply.status == 413  # the 4 KiB body cap of this server comes first
        return
    error = _error(reply, 422, "invalid")
    assert any(field in detail["loc"] for detail in error["details"]), error


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"[1, 2", b"\xff\xfe", b'{"task": "x", "repository": "/tmp"'],
)
def test_malformed_json_is_400(shared_server: Server, raw: bytes) -> None:
    reply = shared_server.call(
        "POST", "/v1/sessions", raw=raw, headers={"Content-Type": "application/json"}
    )
    _error(reply, 400, "bad_request")


def test_a_json_array_or_scalar_body_is_422(shared_server: Server) -> None:
    for raw in (b"[]", b"42", b'"task"', b"null"):
        reply = shared_server.call(
            "POST", "/v1/sessions", raw=raw, headers={"Content-Type": "application/json"}
        )
        assert reply.status == 422, (raw, reply.body)


def test_unknown_session_is_404_and_bad_ids_are_422(shared_server: Server) -> None:
    _error(shared_server.call("GET", "/v1/sessions/abcdef012345"), 404, "not_found")
    _error(shared_server.call("POST", "/v1/sessions/abcdef012345/stop", {}), 404, "not_found")
    _error(shared_server.call("GET", "/v1/sessions/abcdef012345/stream"), 404, "not_found")
    _error(shared_server.call("GET", "/v1/sessions/ZZ..top"), 422, "invalid")


def test_query_parameters_are_validated(shared_server: Server) -> None:
    _error(shared_server.call("GET", "/v1/sessions?limit=0"), 422, "invalid")
    _error(shared_server.call("GET", "/v1/sessions?state=exploded"), 422, "invalid")
    _error(shared_server.call("GET", "/v1/sessions?all=maybe"), 422, "invalid")
    typo = _error(shared_server.call("GET", "/v1/sessions?limt=5"), 422, "invalid")
    assert "limt" in typo["message"]
    assert shared_server.call("GET", "/v1/sessions?limit=5&all=true").status == 200


def test_list_get_output_of_a_finished_session(shared_server: Server) -> None:
    created = shared_server.create("echo one; echo two >&2; exit 4", name="lister")
    session_id = created["id"]
    assert created["state"] in {"pending", "queued", "running"}
    final = shared_server.wait_state(session_id, {"completed", "failed"})
    assert final["state"] == "failed" and final["exit_code"] == 4
    assert final["output_lines"] == 2
    assert final["pr_url"] is None  # no pull request opened
    assert final["enforced"] is False  # the shell harness cannot run ecc's hook
    listed = shared_server.call("GET", "/v1/sessions?all=true").body["sessions"]
    assert session_id in [s["id"] for s in listed]
    active = shared_server.call("GET", "/v1/sessions").body["sessions"]
    assert session_id not in [s["id"] for s in active]
    failed = shared_server.call("GET", "/v1/sessions?state=failed").body["sessions"]
    assert session_id in [s["id"] for s in failed]
    page = shared_server.call("GET", f"/v1/sessions/{session_id}/output").body
    assert [(line["stream"], line["line"]) for line in page["lines"]] == [
        ("stdout", "one"),
        ("stderr", "two"),
    ]
    assert page["finished"] is True and page["next_after"] == page["lines"][-1]["seq"]
    only_err = shared_server.call("GET", f"/v1/sessions/{session_id}/output?stream=stderr").body
    assert [line["line"] for line in only_err["lines"]] == ["two"]
    tail = shared_server.call("GET", f"/v1/sessions/{session_id}/output?tail=1").body
    assert [line["line"] for line in tail["lines"]] == ["two"]
    by_prefix = shared_server.call("GET", f"/v1/sessions/{session_id[:6]}").body
    assert by_prefix["id"] == session_id
    reply = shared_server.call("POST", f"/v1/sessions/{session_id}/stop", {})
    _error(reply, 409, "finished")


def test_a_profile_supplies_the_harness(shared_server: Server) -> None:
    body = {
        "task": "echo via-profile",
        "repository": str(shared_server.root),
        "profile": "quick",
        "worktree": False,
    }
    reply = shared_server.call("POST", "/v1/sessions", body)
    assert reply.status == 201, reply.body
    assert reply.body["harness"] == "shell" and reply.body["profile_name"] == "quick"
    final = shared_server.wait_state(reply.body["id"], {"completed", "failed"})
    assert final["state"] == "completed"


def test_worktree_flag_runs_in_a_fresh_worktree(shared_server: Server) -> None:
    import subprocess

    repo = shared_server.root / "gitrepo"
    if not repo.exists():
        repo.mkdir()
        for args in (
            ["init", "-q", "-b", "main"],
            [
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e.invalid",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "init",
            ],
        ):
            subprocess.run(["git", *args], cwd=repo, check=True, env=shared_server.env)
    body = {"task": "pwd", "repository": str(repo), "harness": "shell", "worktree": True}
    reply = shared_server.call("POST", "/v1/sessions", body)
    assert reply.status == 201, reply.body
    final = shared_server.wait_state(reply.body["id"], {"completed", "failed"})
    assert final["state"] == "completed", final
    assert final["use_worktree"] is True and final["worktree_path"]
    page = shared_server.call("GET", f"/v1/sessions/{final['id']}/output").body
    assert page["lines"][0]["line"] == final["worktree_path"]
    assert final["worktree_path"] != str(repo)


def test_a_connection_is_reused_for_several_requests(shared_server: Server) -> None:
    conn = http.client.HTTPConnection(shared_server.host, shared_server.port, timeout=30)
    auth = {"Authorization": f"Bearer {shared_server.token}"}
    try:
        for _ in range(3):
            conn.request("GET", "/v1/sessions", headers=auth)
            response = conn.getresponse()
            response.read()
            assert response.status == 200
    finally:
        conn.close()
