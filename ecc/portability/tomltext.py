"""Adding and removing one ``[a.b]`` table in a TOML file's text, every other byte left alone.

A parser that re-renders the document (tomlkit) moves blank lines, final newlines and line
endings; these two functions work on lines instead, so ``remove_table(add_table(text))`` gives
back ``text`` exactly:

* the table goes after the last table of its family (``[a]``, ``[a.*]``), else at the end; the
  comments and blank lines in front of the next table stay with that table;
* it is preceded by one blank line (none at the very start of a file) and written with the file's
  line ending; a file without a final newline keeps ending without one.

Only valid TOML is given here (the caller parsed it first); the caller checks the result parses
to what it wants and falls back otherwise.
"""

from __future__ import annotations

import tomllib

BLANK, COMMENT, CONTENT, HEADER = "blank", "comment", "content", "header"


def line_ending(text: str) -> str:
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _header_path(line: str) -> tuple[str, ...]:
    """The key path of a ``[a."b c"]`` or ``[[a.b]]`` header line."""
    body = line.strip().lstrip("[")
    quote, end = "", 0
    while end < len(body):
        char = body[end]
        if quote:
            if char == "\\" and quote == '"':
                end += 1
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "]":
            break
        end += 1
    node: object = tomllib.loads(f"{body[:end]} = 0")
    path: list[str] = []
    while isinstance(node, dict):
        (key, node), *_ = node.items()
        path.append(key)
    return tuple(path)


def _scan(body: str, state: str, depth: int) -> tuple[str, int]:
    """Multi-line string delimiter still open and bracket depth after one line of content."""
    i = 0
    while i < len(body):
        if state:
            if state == '"""' and body[i] == "\\":
                i += 2
                continue
            if body.startswith(state, i):
                i += 3
                while i < len(body) and body[i] == state[0]:
                    i += 1
                state = ""
                continue
            i += 1
            continue
        char = body[i]
        if char == "#":
            break
        if body.startswith('"""', i) or body.startswith("'''", i):
            state, i = body[i : i + 3], i + 3
            continue
        if char in "\"'":
            i += 1
            while i < len(body) and body[i] != char:
                i += 2 if char == '"' and body[i] == "\\" else 1
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return state, depth


def classify(lines: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each line's kind (blank, comment, content, header) and, for a header, its key path."""
    kinds: list[tuple[str, tuple[str, ...]]] = []
    state, depth = "", 0
    for line in lines:
        body = line.rstrip("\r\n")
        stripped = body.strip()
        if not state and depth == 0:
            if not stripped:
                kinds.append((BLANK, ()))
                continue
            if stripped.startswith("#"):
                kinds.append((COMMENT, ()))
                continue
            if stripped.startswith("["):
                kinds.append((HEADER, _header_path(stripped)))
                continue
        kinds.append((CONTENT, ()))
        state, depth = _scan(body, state, depth)
    return kinds


def _last_content(kinds: list[tuple[str, tuple[str, ...]]], start: int, stop: int) -> int:
    """Index of the last line in ``[start, stop)`` that is a header or a key, else -1."""
    return next((i for i in range(stop - 1, start - 1, -1) if kinds[i][0] in (CONTENT, HEADER)), -1)


def add_table(text: str, path: tuple[str, ...], header: str, body: list[str]) -> str:
    """``text`` with the table ``header`` (whose key path is ``path``) and its ``body`` lines."""
    eol = line_ending(text)
    lines = text.splitlines(keepends=True)
    kinds = classify(lines)
    headers = [i for i, (kind, _) in enumerate(kinds) if kind == HEADER]
    family = [i for i in headers if kinds[i][1][: len(path) - 1] == path[:-1]]
    anchor = family[-1] if family else (headers[-1] if headers else 0)
    following = next((i for i in headers if i > anchor), None)
    if following is not None:
        at = _last_content(kinds, anchor, following) + 1
    else:  # the end: after the last line that is not blank, comments included
        at = next((i + 1 for i in range(len(lines) - 1, -1, -1) if kinds[i][0] != BLANK), 0)
    block = [line + eol for line in [header, *body]]
    if at > 0:
        block.insert(0, eol)
    if at == len(lines) and lines and not lines[-1].endswith("\n"):
        lines[-1] += eol
        block[-1] = block[-1][: -len(eol)]
    return "".join(lines[:at] + block + lines[at:])


def remove_table(text: str, path: tuple[str, ...]) -> str | None:
    """``text`` without the table ``path`` as :func:`add_table` writes it; None when it is not
    there in that form (another spelling, sub-tables of its own), for the caller to handle."""
    lines = text.splitlines(keepends=True)
    kinds = classify(lines)
    headers = [i for i, (kind, _) in enumerate(kinds) if kind == HEADER]
    own = [i for i in headers if kinds[i][1] == path]
    if len(own) != 1 or any(kinds[i][1][: len(path)] == path and i not in own for i in headers):
        return None
    start = own[0]
    following = next((i for i in headers if i > start), len(lines))
    end = _last_content(kinds, start, following) + 1
    unterminated = end == len(lines) and not lines[-1].endswith("\n")
    if start > 0 and kinds[start - 1][0] == BLANK:
        start -= 1
    kept = lines[:start] + lines[end:]
    if unterminated and kept and end == len(lines):
        kept[-1] = kept[-1].rstrip("\r\n")
    return "".join(kept)
