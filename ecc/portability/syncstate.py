"""``.ecc/sync-state.json``: what ``ecc sync`` wrote into the project, with checksums.

The record is committed with the repository, so a teammate's sync and CI's ``--check`` know the
same files are ecc's. Each entry names a file relative to the project, how ecc owns it
(``whole``: the file; ``section``: its marked section of the surface; ``merge``: its entries in a
shared config file), the surface, the harnesses it is for, and the SHA-256 of what ecc wrote
(the file, the section's text or the merged file). ``created_dirs`` are the folders ecc made, so
a removal takes them away again when they are left empty.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from ecc.contract.errors import EccError

STATE_FILE = Path(".ecc") / "sync-state.json"
STATE_SCHEMA = "ecc.sync-state.v1"
KINDS = ("whole", "section", "merge")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Entry:
    path: str  # relative to the project, with "/"
    kind: str  # one of KINDS
    surface: str
    harnesses: list[str]
    sha256: str

    @property
    def key(self) -> tuple[str, str, str]:
        """One whole file or merge per path, one section per path and surface."""
        return (self.path, self.kind, self.surface if self.kind != "whole" else "")

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "kind": self.kind,
            "surface": self.surface,
            "harnesses": sorted(self.harnesses),
            "sha256": self.sha256,
        }


@dataclass
class State:
    entries: dict[tuple[str, str, str], Entry] = field(default_factory=dict)
    created_dirs: set[str] = field(default_factory=set)

    def text(self) -> str:
        record = {
            "schema": STATE_SCHEMA,
            "files": [self.entries[key].as_dict() for key in sorted(self.entries)],
            "created_dirs": sorted(self.created_dirs),
        }
        return json.dumps(record, indent=2, ensure_ascii=False) + "\n"


def parse_state(text: str | None) -> State:
    """The record in ``text`` (None: no record yet); a damaged one is refused, never guessed."""
    if text is None:
        return State()
    where = STATE_FILE.as_posix()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EccError(f"{where} is not valid JSON ({exc}); restore it from git") from None
    if not isinstance(data, dict) or data.get("schema") != STATE_SCHEMA:
        raise EccError(f"{where} is not an {STATE_SCHEMA} record; restore it from git")
    state = State(created_dirs={str(d) for d in data.get("created_dirs") or []})
    for item in data.get("files") or []:
        try:
            entry = Entry(
                path=str(item["path"]),
                kind=str(item["kind"]),
                surface=str(item["surface"]),
                harnesses=[str(h) for h in item["harnesses"]],
                sha256=str(item["sha256"]),
            )
        except (KeyError, TypeError):
            raise EccError(
                f"{where} has an entry without its fields; restore it from git"
            ) from None
        if entry.kind not in KINDS or entry.path.startswith("/") or ".." in entry.path.split("/"):
            raise EccError(f"{where} has a bad entry for {entry.path!r}; restore it from git")
        state.entries[entry.key] = entry
    return state
