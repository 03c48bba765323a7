"""The input excerpt people and notifiers see of a held call: one bounded line, sanitised, with
common credential shapes masked and ordinary words left alone."""

from __future__ import annotations

from ecc.observability.approvals import EXCERPT_CHARS, excerpt


def test_credentials_are_masked_and_words_are_not() -> None:
    command = (
        'curl -H "Authorization: Bearer abcdefghijkl" https://me:hunter2@x.example/y '
        "--token=zzz API_KEY='k e y' AKIAABCDEFGHIJKLMNOP sk-abcdefghijklmnopqrstu; "
        "echo basic setup; git push origin main"
    )
    shown = excerpt({"command": command, "description": "push"})
    for secret in ("abcdefghijkl", "hunter2", "zzz", "k e y", "AKIAABCDEFGHIJKLMNOP", "sk-abc"):
        assert secret not in shown, secret
    assert "Bearer ***" in shown and "me:***@x.example" in shown and "--token=***" in shown
    assert shown.endswith("echo basic setup; git push origin main")


def test_one_bounded_line_without_control_sequences() -> None:
    shown = excerpt("rm -rf build\n\x1b]0;title\x07\x1b[2Jdone\t" + "x" * 5000)
    assert shown.startswith("rm -rf build done x") and len(shown) == EXCERPT_CHARS
    assert shown.endswith("…") and "\x1b" not in shown and "\n" not in shown
    assert excerpt({"file_path": "/srv/app/.env", "content": "SECRET=1"}) == "/srv/app/.env"
    assert excerpt({"pattern": "TODO"}) == '{"pattern": "TODO"}'
