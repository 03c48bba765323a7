"""The ``webhook`` notifier: an HTTP POST per event, as generic JSON, Slack or Discord.

``[notifications.settings.webhook]`` holds one target, or ``targets = [{...}, ...]``; each has

* ``format``: ``generic`` (the event as JSON), ``slack`` (``{"text"}``) or ``discord``
  (``{"content", "allowed_mentions": {"parse": []}}``, so an agent's text can never ping anyone);
* ``url_env`` (the name of an environment variable) or ``url_file`` (a file holding the URL). A
  webhook URL is a secret, so it never lives in the config, and errors and logs name only where
  it came from. A plain ``url`` key is refused;
* ``timeout`` (seconds per attempt, default 5), ``retries`` (extra attempts on a 5xx, 429,
  timeout or connection error; default 2), ``backoff`` (seconds before the first retry, doubled
  each time; default 0.5).

Only ``http://`` and ``https://`` URLs are accepted; redirects are not followed.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ecc import __version__
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import Notification

FORMATS = ("generic", "slack", "discord")


class WebhookError(RuntimeError):
    pass


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is reported as the 3xx it is


def payload(notification: Notification, fmt: str) -> dict[str, Any]:
    if fmt == "slack":
        return {"text": f"*{notification.title}*\n{notification.body}"}
    if fmt == "discord":
        return {
            "content": f"**{notification.title}**\n{notification.body}"[:2000],
            "allowed_mentions": {"parse": []},
        }
    if fmt == "generic":
        return {
            "source": "ecc",
            "event": notification.event,
            "title": notification.title,
            "body": notification.body,
            "session_id": notification.session_id,
            "data": notification.data,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    raise WebhookError(f"unknown webhook format {fmt!r} (use one of {', '.join(FORMATS)})")


def resolve_url(target: dict[str, Any]) -> tuple[str, str]:
    """(url, label): the label says where the URL came from and is safe to log."""
    if "url" in target:
        raise WebhookError(
            "a webhook URL is a secret: put it in an environment variable (url_env) or a file "
            "(url_file), not in the config"
        )
    if target.get("url_env"):
        name = str(target["url_env"])
        label = f"${name}"
        url = os.environ.get(name, "").strip()
        if not url:
            raise WebhookError(f"webhook URL variable {label} is not set")
    elif target.get("url_file"):
        path = Path(str(target["url_file"])).expanduser()
        label = f"file {path}"
        try:
            url = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise WebhookError(f"cannot read webhook URL from {label}: {exc.strerror}") from None
    else:
        raise WebhookError("webhook target has neither url_env nor url_file")
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.netloc:
        raise WebhookError(f"webhook URL from {label} must be an http:// or https:// URL")
    return url, label


def post(url: str, label: str, body: bytes, timeout: float, retries: int, backoff: float) -> int:
    """POST ``body``; retry transient failures; return the final status or raise."""
    opener = urllib.request.build_opener(_NoRedirect)
    attempts = max(0, retries) + 1
    problem = ""
    for attempt in range(attempts):
        if attempt:
            time.sleep(backoff * (2 ** (attempt - 1)))
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": f"ecc/{__version__}"},
        )
        try:
            with opener.open(request, timeout=timeout) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            problem = f"HTTP {exc.code}"
            if exc.code < 500 and exc.code != 429:
                break  # the request itself is wrong: retrying will not help
        except TimeoutError:
            problem = f"no answer within {timeout:g} s"
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                problem = f"no answer within {timeout:g} s"
            else:
                problem = f"connection failed ({type(reason).__name__})"
        except OSError as exc:
            problem = f"connection failed ({type(exc).__name__})"
    raise WebhookError(f"webhook to {label} failed after {attempt + 1} attempt(s): {problem}")


def _targets(settings: dict[str, Any]) -> list[dict[str, Any]]:
    targets = settings.get("targets")
    if targets is None:
        return [settings]
    if not isinstance(targets, list) or not all(isinstance(t, dict) for t in targets):
        raise WebhookError("webhook targets must be a list of tables")
    return targets


@hookimpl
def ecc_notify(notification: Notification, settings: dict[str, Any]) -> None:
    errors: list[str] = []
    for target in _targets(settings):
        try:
            fmt = str(target.get("format", "generic"))
            body = json.dumps(payload(notification, fmt), default=str).encode("utf-8")
            url, label = resolve_url(target)
            post(
                url,
                label,
                body,
                timeout=float(target.get("timeout", 5)),
                retries=int(target.get("retries", 2)),
                backoff=float(target.get("backoff", 0.5)),
            )
        except WebhookError as exc:
            errors.append(str(exc))
    if errors:
        raise WebhookError("; ".join(errors))


@hookimpl
def ecc_doctor_checks(config: Any) -> list[dict[str, Any]]:
    """For ``ecc doctor``: can every target's URL be found? Names where it comes from, never it."""
    raw = (config.notifications.settings or {}).get("webhook", {})
    settings = dict(raw.to_dict() if hasattr(raw, "to_dict") else raw)
    fix = (
        "set the variable named by url_env, or write the URL into url_file, "
        "under [notifications.settings.webhook]"
    )
    try:
        labels = [resolve_url(target)[1] for target in _targets(settings)]
    except WebhookError as exc:
        return [_check(False, str(exc), fix)]
    return [_check(True, "URL from " + ", ".join(labels), "")]


def _check(ok: bool, detail: str, fix: str) -> dict[str, Any]:
    level = "ok" if ok else "fail"
    return {"name": "notifier webhook", "detail": detail, "level": level, "fix": fix}
