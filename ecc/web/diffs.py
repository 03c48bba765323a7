"""A unified diff (``git diff`` text) as files with their hunks, for the diff page.

The text is untrusted (an agent wrote the files); it is only split here, never interpreted, and
the page escapes every line. Sizes are bounded: a huge diff shows its first files and lines and
says what was left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_FILES = 300
MAX_LINES = 20_000  # in all files together
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass
class Hunk:
    header: str
    lines: list[tuple[str, str]] = field(default_factory=list)  # (kind: add/del/ctx/note, text)


@dataclass
class FileDiff:
    old: str
    new: str
    status: str = "modified"  # added, deleted, renamed, modified, binary
    added: int = 0
    removed: int = 0
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.new if self.new != "/dev/null" else self.old


@dataclass
class Diff:
    files: list[FileDiff] = field(default_factory=list)
    truncated: bool = False

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)


def _path(text: str, prefix: str) -> str:
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
    return text[len(prefix) :] if text.startswith(prefix) else text


def parse(text: str) -> Diff:
    """Split ``git diff`` output into files and hunks (bounded by MAX_FILES and MAX_LINES)."""
    diff = Diff()
    current: FileDiff | None = None
    hunk: Hunk | None = None
    lines = 0
    for line in text.splitlines():
        if line.startswith("diff --git "):
            if len(diff.files) >= MAX_FILES:
                diff.truncated = True
                break
            names = line[len("diff --git ") :].split(" b/", 1)
            old = _path(names[0], "a/")
            current = FileDiff(old, names[1] if len(names) > 1 else old)
            diff.files.append(current)
            hunk = None
            continue
        if current is None:
            continue
        if hunk is None or line[:1] not in ("+", "-", " ", "\\"):
            if line.startswith("new file mode"):
                current.status = "added"
            elif line.startswith("deleted file mode"):
                current.status = "deleted"
            elif line.startswith("rename from "):
                current.status, current.old = "renamed", line[len("rename from ") :]
            elif line.startswith("rename to "):
                current.new = line[len("rename to ") :]
            elif line.startswith("Binary files "):
                current.status = "binary"
            elif line.startswith("--- ") and hunk is None:
                current.old = _path(line[4:], "a/")
            elif line.startswith("+++ ") and hunk is None:
                current.new = _path(line[4:], "b/")
            elif _HUNK.match(line):
                hunk = Hunk(line)
                current.hunks.append(hunk)
            continue
        if lines >= MAX_LINES:
            diff.truncated = True
            continue
        lines += 1
        kind = {"+": "add", "-": "del", " ": "ctx"}.get(line[:1], "note")
        if kind == "add":
            current.added += 1
        elif kind == "del":
            current.removed += 1
        hunk.lines.append((kind, line[1:] if kind != "note" else line))
    return diff
