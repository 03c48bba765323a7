"""The ``desktop`` notifier: a native notification on the machine running ecc.

Linux: ``notify-send --app-name=ecc -- TITLE BODY``. macOS: ``osascript`` with a fixed script that
reads the title and body from its own argv (``on run argv``), so no text is ever spliced into
AppleScript source and nothing needs escaping. Always an argv list, never a shell; a timeout
(``timeout`` in ``[notifications.settings.desktop]``, default 10 s). Other systems: reported as
not supported.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import Notification

APPLESCRIPT = (
    "on run argv",
    "display notification (item 2 of argv) with title (item 1 of argv)",
    "end run",
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean(text: str, limit: int) -> str:
    text = _CONTROL.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def command(title: str, body: str, platform: str = sys.platform) -> list[str]:
    """The argv that shows one notification on ``platform``."""
    title, body = clean(title, 120), clean(body, 400)
    if platform == "darwin":
        argv = ["osascript"]
        for line in APPLESCRIPT:
            argv += ["-e", line]
        return [*argv, title, body]
    if platform.startswith(("linux", "freebsd", "openbsd")):
        return ["notify-send", "--app-name=ecc", "--", title, body]
    raise RuntimeError(f"desktop notifications are not supported on {platform}")


@hookimpl
def ecc_notify(notification: Notification, settings: dict[str, Any]) -> None:
    argv = command(notification.title, notification.body)
    try:
        result = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=float(settings.get("timeout", 10)),
            check=False,
        )
    except FileNotFoundError:
        raise RuntimeError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{argv[0]} did not finish in time") from None
    if result.returncode != 0:
        detail = clean(result.stderr, 200) or f"exit status {result.returncode}"
        raise RuntimeError(f"{argv[0]} failed: {detail}")


@hookimpl
def ecc_doctor_checks(config: Any) -> list[dict[str, Any]]:
    """For ``ecc doctor``: is the program this platform's notifications need on PATH?"""
    import shutil

    try:
        program = command("t", "b")[0]
    except RuntimeError as exc:
        return [_check(False, str(exc), "choose another notifier in notifications.notifiers")]
    if shutil.which(program) is None:
        fix = "install it (e.g. libnotify-bin on Debian/Ubuntu, libnotify on Fedora)"
        if program == "osascript":
            fix = "osascript ships with macOS: check PATH"
        return [_check(False, f"{program} is not on PATH", fix)]
    return [_check(True, f"{program} found", "")]


def _check(ok: bool, detail: str, fix: str) -> dict[str, Any]:
    return {
        "name": "notifier desktop",
        "detail": detail,
        "level": "ok" if ok else "fail",
        "fix": fix,
    }
