"""Client of the remote API on the standard library (``urllib``): no extra import cost.

:class:`Client` speaks to one server; the ``*_remote`` functions at the bottom are what
``ecc run|start|sessions|logs|stop|send --remote NAME`` call. Redirects are never followed (the
bearer token must not travel to another host), and proxies are not used for loopback servers.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from ecc import __version__
from ecc.contract.errors import EccError
from ecc.runtime.terminal import emit_json, say

DEFAULT_TIMEOUT = 30.0
STREAM_READ_TIMEOUT = 60.0  # the server sends a keep-alive comment every 15 s
STREAM_RECONNECTS = 5


class RemoteError(EccError):
    """The server refused a request or could not be reached."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> Any:
        newurl = args[-1] if args else kwargs.get("newurl", "?")
        raise RemoteError(f"the server redirected to {newurl}; not following (token safety)")


class Client:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        ca_file: str | None = None,
        name: str = "",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = name or self.base_url
        self.timeout = timeout
        self._token = token
        handlers: list[Any] = [_NoRedirect()]
        parts = urlsplit(self.base_url)
        from ecc.remote.remotes import is_loopback

        if is_loopback(parts.hostname or ""):
            handlers.append(urllib.request.ProxyHandler({}))
        if parts.scheme == "https":
            import ssl

            context = ssl.create_default_context(cafile=ca_file)
            handlers.append(urllib.request.HTTPSHandler(context=context))
        self._opener = urllib.request.build_opener(*handlers)

    @classmethod
    def for_remote(cls, name: str) -> Client:
        from ecc.remote import remotes
        from ecc.remote.tokens import read_token_file

        remote = remotes.get(name)
        token = read_token_file(Path(remote.token_file))[0]
        return cls(remote.url, token, ca_file=remote.ca_file, name=name)

    # -- plumbing -------------------------------------------------------------------------

    def _open(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> Any:
        url = self.base_url + path
        if query:
            clean = {k: v for k, v in query.items() if v is not None}
            if clean:
                url += "?" + urlencode(clean, doseq=True)
        data = None
        all_headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/json",
            "User-Agent": f"ecc/{__version__}",
        }
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
        try:
            return self._opener.open(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as exc:
            raise self._error(exc) from None
        except urllib.error.URLError as exc:
            raise RemoteError(f"cannot reach remote {self.name}: {exc.reason}") from None
        except (TimeoutError, ConnectionError) as exc:
            raise RemoteError(f"cannot reach remote {self.name}: {exc}") from None

    def _error(self, exc: urllib.error.HTTPError) -> RemoteError:
        code = None
        message = exc.reason
        try:
            payload = json.loads(exc.read(64 * 1024) or b"{}")
            code = payload.get("error")
            message = payload.get("message") or message
        except (ValueError, OSError, AttributeError):
            pass
        return RemoteError(f"remote {self.name}: {message} (HTTP {exc.code})", exc.code, code)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        with self._open(method, path, **kwargs) as response:
            raw = response.read()
        try:
            return json.loads(raw)
        except ValueError:
            raise RemoteError(f"remote {self.name} answered with something other than JSON")

    # -- endpoints --------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/v1/health")

    def create(
        self,
        task: str,
        repository: str,
        *,
        harness: str | None = None,
        profile: str | None = None,
        worktree: bool | None = None,
        name: str = "",
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"task": task, "repository": repository, "name": name}
        for key, value in (("harness", harness), ("profile", profile), ("worktree", worktree)):
            if value is not None:
                body[key] = value
        return self.request("POST", "/v1/sessions", body=body)

    def list_sessions(
        self, states: list[str] | None = None, show_all: bool = False, limit: int = 200
    ) -> list[dict[str, Any]]:
        query: dict[str, Any] = {"limit": limit}
        if states:
            query["state"] = states
        if show_all:
            query["all"] = "true"
        return self.request("GET", "/v1/sessions", query=query)["sessions"]

    def get(self, ref: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/sessions/{quote(ref, safe='')}")

    def output(
        self,
        ref: str,
        *,
        after: int = 0,
        tail: int | None = None,
        stream: str | None = None,
        limit: int = 5000,
    ) -> dict[str, Any]:
        query = {"after": after, "tail": tail, "stream": stream, "limit": limit}
        return self.request("GET", f"/v1/sessions/{quote(ref, safe='')}/output", query=query)

    def stop(self, ref: str, grace: float | None = None) -> dict[str, Any]:
        """Stop a session; the server waits for it to end (up to its grace period + 10 s)."""
        body = {"grace": grace} if grace is not None else {}
        wait = max(self.timeout, (60.0 if grace is None else grace) + 15.0)
        path = f"/v1/sessions/{quote(ref, safe='')}/stop"
        return self.request("POST", path, body=body, timeout=wait)

    def send(self, ref: str, text: str) -> dict[str, Any]:
        """Give the session's agent its next instruction: the session, with ``message``."""
        path = f"/v1/sessions/{quote(ref, safe='')}/messages"
        return self.request("POST", path, body={"text": text})

    def messages(self, ref: str) -> dict[str, Any]:
        return self.request("GET", f"/v1/sessions/{quote(ref, safe='')}/messages")

    def stream(
        self, ref: str, *, after: int = 0, stream: str | None = None
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """``("line", row)`` for each output line, then ``("end", session)``; reconnects with
        ``Last-Event-ID`` when the connection drops."""
        last = after
        failures = 0
        path = f"/v1/sessions/{quote(ref, safe='')}/stream"
        while True:
            try:
                response = self._open(
                    "GET",
                    path,
                    query={"after": last, "stream": stream},
                    headers={"Accept": "text/event-stream"},
                    timeout=STREAM_READ_TIMEOUT,
                )
                with response:
                    for event, data, event_id in _parse_sse(response):
                        failures = 0
                        if event == "line":
                            if event_id and event_id.isdigit():
                                last = int(event_id)
                            yield event, data
                        elif event == "end":
                            yield event, data
                            return
            except RemoteError as exc:
                if exc.status is not None or failures >= STREAM_RECONNECTS:
                    raise
            except (OSError, ValueError):
                if failures >= STREAM_RECONNECTS:
                    raise RemoteError(f"lost the output stream of remote {self.name}") from None
            failures += 1
            time.sleep(min(2.0, 0.2 * failures))


def _parse_sse(response: Any) -> Iterator[tuple[str, Any, str | None]]:
    event, event_id = "message", None
    data_lines: list[str] = []
    while True:
        raw = response.readline()
        if not raw:
            raise ConnectionError("stream closed before its end event")
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data_lines:
                yield event, json.loads("\n".join(data_lines)), event_id
            event, data_lines, event_id = "message", [], None
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            event = value
        elif key == "data":
            data_lines.append(value)
        elif key == "id":
            event_id = value


# --------------------------------------------------------------------------------------------
# What the CLI commands call with --remote NAME


def exit_status(session: dict[str, Any]) -> int:
    if session.get("state") == "completed":
        return 0
    if session.get("exit_code"):
        return int(session["exit_code"])
    if session.get("exit_signal"):
        return 128 + int(session["exit_signal"])
    return 1


def _say_row(row: dict[str, Any]) -> None:
    say(row["line"], err=row["stream"] == "stderr")


def _repository(cwd: Path | None) -> str:
    if cwd is None:
        return os.getcwd()
    return str(cwd) if cwd.is_absolute() else os.path.abspath(cwd)


def run_remote(
    remote: str,
    task: str,
    *,
    harness: str | None,
    profile: str | None,
    use_worktree: bool | None,
    name: str,
    cwd: Path | None,
    detach: bool,
    as_json: bool,
) -> None:
    """``ecc run --remote``: create on the server, then follow its output (unless detached)."""
    client = Client.for_remote(remote)
    session = client.create(
        task,
        _repository(cwd),
        harness=harness,
        profile=profile,
        worktree=use_worktree,
        name=name,
    )
    if detach:
        if as_json:
            emit_json(session)
        else:
            terminal = sys.stdout.isatty()  # as ecc run -d: the bare id for ID=$(...)
            say(
                f"Session started: {session['id']} (remote {remote})" if terminal else session["id"]
            )
        return
    if not as_json:
        say(
            f"Session {session['id']} started ({session['harness']}) on remote {remote}; "
            "Ctrl-C detaches.",
            err=True,
        )
    final: dict[str, Any] = session
    try:
        for event, data in client.stream(session["id"]):
            if event == "line" and not as_json:
                _say_row(data)
            elif event == "end":
                final = data
    except KeyboardInterrupt:
        say(f"\nDetached from session {session['id']}; it keeps running.", err=True)
        sys.exit(130)
    if as_json:
        emit_json(final)
    else:
        say(f"Session {final['id']} {final['state']}: {final.get('reason', '')}", err=True)
    sys.exit(exit_status(final))


def _age(text: str | None) -> str:
    from ecc.store.models import age_label

    return age_label(text)


def logs_remote(
    remote: str,
    ref: str,
    *,
    follow: bool,
    tail: int | None,
    stream: str | None,
    as_json: bool,
) -> None:
    """``ecc logs --remote``: the same output and shapes as the local command."""
    client = Client.for_remote(remote)
    rows: list[dict[str, Any]] = []
    session_id = ref
    last = 0
    if tail is not None:
        page = client.output(ref, tail=tail, stream=stream)
        session_id, rows = page["session_id"], page["lines"]
        while page.get("truncated") and len(rows) < tail:  # cut at the server's size cap
            page = client.output(
                ref, after=page["next_after"], stream=stream, limit=tail - len(rows)
            )
            rows.extend(page["lines"])
        if tail == 0 and follow:
            last = (client.output(ref, tail=1, stream=stream)["lines"] or [{"seq": 0}])[-1]["seq"]
    elif not follow:
        while True:
            page = client.output(ref, after=last, stream=stream)
            session_id = page["session_id"]
            rows.extend(page["lines"])
            if not page["lines"]:
                break
            last = page["next_after"]
    if as_json and not follow:
        emit_json([{"session_id": session_id, **row} for row in rows])
        return
    for row in rows:
        last = max(last, row["seq"])
        _print_row(row, as_json, session_id)
    if not follow:
        return
    try:
        for event, data in client.stream(ref, after=last, stream=stream):
            if event == "line":
                _print_row(data, as_json, session_id)
    except KeyboardInterrupt:
        pass


def _print_row(row: dict[str, Any], as_json: bool, session_id: str) -> None:
    if as_json:
        emit_json({"session_id": session_id, **row}, indent=None)
    else:
        _say_row(row)


def stop_remote(remote: str, ref: str, grace: float | None, as_json: bool) -> None:
    final = Client.for_remote(remote).stop(ref, grace)
    if as_json:
        emit_json(final)
    else:
        say(f"Session {final['id']} {final['state']}: {final['reason']}")


def send_remote(remote: str, ref: str, text: str, as_json: bool) -> None:
    from ecc.sessions.manager import sent_outcome

    session = Client.for_remote(remote).send(ref, text)
    if as_json:
        emit_json(session)
    else:
        say(sent_outcome(session["id"], session["state"], session["message"]["status"]))
