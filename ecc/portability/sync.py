"""``ecc sync``'s engine: plan every harness's files from the shared source, then write, check
or show them, owning exactly what it recorded.

1. **Plan.** Each harness's adapter renders each surface (``ecc_sync_surface``); the files of all
   the plans are combined: one file given identically by several harnesses (``AGENTS.md`` for
   Codex and OpenCode) is written once, two different versions of it are refused, naming both.
2. **Reconcile** with the project and ``.ecc/sync-state.json``: a whole file ecc does not own, or
   changed since ecc wrote it, and a section edited by hand, stop everything before a byte is
   written (``force`` overrides); merges always run (they keep what is not ecc's); what ecc
   recorded and no plan gives any more is removed, if unchanged.
3. **Apply** the changes (atomic writes, created folders recorded and pruned), or print them
   (dry run), or compare (``--check``: any difference is drift).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.types import SURFACE_MODES, SYNC_SURFACES, SurfacePlan, SyncSource
from ecc.portability import syncmarkers
from ecc.portability.syncsource import check_inside, read_text
from ecc.portability.syncstate import STATE_FILE, Entry, State, parse_state, sha256

MAX_TARGET_BYTES = 4 * 1024 * 1024
Asker = Callable[[str, str, SyncSource], Any]  # (harness, surface, source) -> SurfacePlan | None


@dataclass
class Wanted:
    """One file (or one section of one) the combined plans give."""

    relative: str
    kind: str  # whole | section | merge
    surface: str
    harnesses: list[str]
    text: str = ""  # the whole file's content, or the section's body
    merges: list[tuple[str, Callable[[str | None], str]]] = field(default_factory=list)
    record: bool = True  # False: a dropped harness's merge, run once to take its entries out

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.relative, self.kind, self.surface if self.kind != "whole" else "")


@dataclass
class PlanRow:
    harness: str
    surface: str
    mode: str
    notes: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"harness": self.harness, "surface": self.surface, "mode": self.mode,
                "notes": self.notes}  # fmt: skip


@dataclass
class Plan:
    project: Path
    harnesses: list[str]  # the ones rendered from the source
    retired: list[str]  # recorded before, no longer configured: their files go
    rows: list[PlanRow] = field(default_factory=list)
    wanted: dict[tuple[str, str, str], Wanted] = field(default_factory=dict)

    def covers(self, harness: str, surface: str) -> bool:
        """Whether this plan decides ``harness``'s files of ``surface``: its adapter answered
        (no answer, as from an older adapter, leaves what a sync wrote before alone), or the
        harness is retired."""
        return harness in self.retired or any(
            row.harness == harness and row.surface == surface for row in self.rows
        )

    @property
    def unsupported(self) -> list[str]:
        """Harnesses whose adapter gave no plan for any surface."""
        answered = {row.harness for row in self.rows}
        return [name for name in self.harnesses if name not in answered]


@dataclass
class Change:
    relative: str
    old: str | None
    new: str | None  # None: the file is removed
    harnesses: list[str]

    @property
    def action(self) -> str:
        return "remove" if self.new is None else "write"

    def diff(self) -> str:
        return unified_diff(self.relative, self.old, self.new)


@dataclass
class Outcome:
    changes: list[Change]
    state: State
    state_text: str | None  # the record as it is on disk
    refusals: list[str]

    @property
    def state_changed(self) -> bool:
        new = self.state.text() if self.state.entries or self.state.created_dirs else None
        return new != self.state_text


def unified_diff(relative: str, old: str | None, new: str | None) -> str:
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=relative if old is not None else "/dev/null",
            tofile=relative if new is not None else "/dev/null",
        )
    )


# -- 1. plan ---------------------------------------------------------------------------------


def _plan_files(harness: str, surface: str, plan: Any, project: Path) -> list[Wanted]:
    where = f"{harness}'s {surface} plan"
    if not isinstance(plan, SurfacePlan) or plan.mode not in SURFACE_MODES:
        raise EccError(f"{where} is not a SurfacePlan with a mode of {', '.join(SURFACE_MODES)}")
    found = []
    for item in plan.files:
        path = Path(item.path)
        given = [v is not None for v in (item.content, item.section, item.merge)]
        if sum(given) != 1:
            raise EccError(f"{where}: {path} must give exactly one of content, section, merge")
        if not path.is_absolute():
            raise EccError(f"{where}: {path} is not an absolute path")
        relative = check_inside(project, path)
        if relative.split("/")[0] == ".git" or relative == STATE_FILE.as_posix():
            raise EccError(f"{where}: {relative} is not a file ecc sync may write")
        if item.merge is not None:
            found.append(
                Wanted(relative, "merge", surface, [harness], merges=[(harness, item.merge)])
            )
        else:
            kind = "whole" if item.content is not None else "section"
            text = item.content if item.content is not None else item.section
            if not isinstance(text, str):
                raise EccError(f"{where}: {relative} has content that is not text")
            if kind == "section":
                text = syncmarkers.section_body(text)
            found.append(Wanted(relative, kind, surface, [harness], text=text))
    return found


def _combine(plan: Plan, item: Wanted) -> None:
    """Add one planned file, merging it with the same file of another harness or refusing it."""
    for other in plan.wanted.values():
        if other.relative == item.relative and other.kind != item.kind:
            raise EccError(
                f"{other.harnesses[0]} and {item.harnesses[0]} give {item.relative} in "
                f"different ways ({other.kind}, {item.kind}); nothing was written"
            )
    existing = plan.wanted.get(item.key)
    if existing is None:
        plan.wanted[item.key] = item
        return
    if item.kind == "merge":
        existing.merges += item.merges
        existing.record = existing.record or item.record
        if item.record:
            existing.harnesses += [h for h in item.harnesses if h not in existing.harnesses]
        return
    if existing.text != item.text:
        raise EccError(
            f"{existing.harnesses[0]} and {item.harnesses[0]} give different versions of "
            f"{item.relative} ({item.surface}); change one adapter's plan, nothing was written"
        )
    existing.harnesses += [h for h in item.harnesses if h not in existing.harnesses]


def build_plan(
    project: Path,
    source: SyncSource,
    harnesses: Iterable[str],
    ask: Asker,
    retired: Iterable[str] = (),
) -> Plan:
    """Ask each harness's adapter for each surface and combine the files into one plan.

    ``retired`` harnesses were synced before and are configured no longer: their whole files
    and sections are left out (so the reconcile removes them) and their merges are run on an
    empty source, which takes their entries out of the shared config files.
    """
    plan = Plan(project, list(harnesses), list(retired))
    empty = SyncSource(project_dir=project)
    for harness, given, live in [(h, source, True) for h in plan.harnesses] + [
        (h, empty, False) for h in plan.retired
    ]:
        for surface in SYNC_SURFACES:
            answer = ask(harness, surface, given)
            if answer is None:
                continue
            for item in _plan_files(harness, surface, answer, project):
                if live:
                    _combine(plan, item)
                elif item.kind == "merge":
                    item.record = False
                    _combine(plan, item)
            if live:
                plan.rows.append(PlanRow(harness, surface, answer.mode, list(answer.notes)))
    return plan


# -- 2. reconcile ----------------------------------------------------------------------------


def read_state(project: Path) -> tuple[State, str | None]:
    text = read_text(project, project / STATE_FILE, limit=MAX_TARGET_BYTES)
    return parse_state(text), text


def _run_merges(item: Wanted, current: str | None) -> str | None:
    def once(text: str | None) -> str | None:
        for harness, merge in item.merges:
            try:
                result = merge(text)
            except EccError:
                raise
            except Exception as exc:  # an adapter's bug or a file it cannot parse
                raise EccError(f"{harness} could not merge {item.relative}: {exc}") from None
            if not isinstance(result, str):
                raise EccError(f"{harness}'s merge of {item.relative} did not return text")
            text = result or None  # "": the file should not exist
        return text

    merged = once(current)
    if once(merged) != merged:
        names = " and ".join(dict.fromkeys(h for h, _ in item.merges))
        raise EccError(
            f"the merge of {item.relative} by {names} changes its own result; "
            "a merge must be idempotent, nothing was written"
        )
    return merged


def reconcile(plan: Plan, state: State, state_text: str | None, *, force: bool) -> Outcome:
    """What to write and remove, the new record, and every refusal (ownership checks)."""
    project = plan.project
    new_state = State(created_dirs=set(state.created_dirs))
    refusals: list[str] = []
    by_path: dict[str, list[Wanted]] = {}
    for item in plan.wanted.values():
        by_path.setdefault(item.relative, []).append(item)
    stale: dict[str, list[Entry]] = {}
    for key, entry in state.entries.items():
        if key in plan.wanted:
            continue
        if not all(plan.covers(name, entry.surface) for name in entry.harnesses):
            new_state.entries[key] = entry  # another harness's, not synced this time
        else:
            stale.setdefault(entry.path, []).append(entry)
    changes = []
    for relative in sorted(set(by_path) | set(stale)):
        current = read_text(project, project / relative, limit=MAX_TARGET_BYTES)
        new = current
        harnesses: list[str] = []
        items = sorted(by_path.get(relative, []), key=lambda w: (w.kind != "whole", w.surface))
        for item in items:
            old = state.entries.get(item.key)
            harnesses += [h for h in item.harnesses if h not in harnesses]
            if item.kind == "whole":
                if new != item.text and new is not None:
                    owned = old is not None and sha256(new) == old.sha256
                    if not owned and not force:
                        why = (
                            "was changed since ecc sync wrote it"
                            if old
                            else "exists and is not ecc's"
                        )
                        refusals.append(
                            f"{relative} {why}; nothing was written (run `ecc sync --force` to "
                            "overwrite it, or move your change into the source)"
                        )
                new = item.text
                digest = sha256(item.text)
            elif item.kind == "section":
                sections = syncmarkers.find_sections(new or "", relative)
                body = sections[item.surface][2] if item.surface in sections else None
                edited = old is not None and body is not None and sha256(body) != old.sha256
                if edited and body != item.text and not force:
                    refusals.append(
                        f"{relative}: ecc's {item.surface} section was edited by hand; "
                        "nothing was written (move the edit into the source or outside the "
                        "markers, or run `ecc sync --force`)"
                    )
                new = syncmarkers.put_section(new, item.surface, item.text, relative)
                digest = sha256(item.text)
            else:
                new = _run_merges(item, new)
                digest = ""  # the merged file's, below
            if item.record:
                kept = [
                    h for h in (old.harnesses if old else []) if not plan.covers(h, item.surface)
                ]
                new_state.entries[item.key] = Entry(
                    relative, item.kind, item.surface, sorted(set(item.harnesses + kept)), digest
                )
        for entry in stale.get(relative, []):
            harnesses += [h for h in entry.harnesses if h not in harnesses]
            if entry.kind == "whole" and new is not None:
                if sha256(new) != entry.sha256 and not force:
                    refusals.append(
                        f"{relative} was changed since ecc sync wrote it and its source is gone; "
                        "delete it yourself, or run `ecc sync --force`"
                    )
                new = None
            elif entry.kind == "section" and new is not None:
                sections = syncmarkers.find_sections(new, relative)
                if entry.surface in sections:
                    if sha256(sections[entry.surface][2]) != entry.sha256 and not force:
                        refusals.append(
                            f"{relative}: ecc's {entry.surface} section was edited by hand and "
                            "its source is gone; remove it yourself, or run `ecc sync --force`"
                        )
                    new = syncmarkers.drop_section(new, entry.surface, relative) or None
        for item in items:
            if item.kind == "merge" and item.key in new_state.entries:
                if new is None:  # merged into no file: nothing of ecc's to keep track of
                    del new_state.entries[item.key]
                else:
                    new_state.entries[item.key].sha256 = sha256(new)
        if new != current:
            changes.append(Change(relative, current, new, harnesses))
    return Outcome(changes, new_state, state_text, refusals)


# -- 3. apply --------------------------------------------------------------------------------


def apply(project: Path, outcome: Outcome) -> None:
    """Write and remove the changes, then the record (nothing of it when nothing changed)."""
    from ecc.runtime.paths import replace_file

    created = outcome.state.created_dirs
    for change in outcome.changes:
        target = project / check_inside(project, project / change.relative)
        if change.new is None:
            target.unlink(missing_ok=True)
            continue
        missing = []
        for parent in target.parents:
            if parent == project or parent.exists():
                break
            missing.append(parent)
        for directory in reversed(missing):
            directory.mkdir()
            created.add(directory.relative_to(project).as_posix())
        replace_file(target, change.new.encode("utf-8"), private=False)
    for relative in sorted(created, key=lambda r: -r.count("/")):
        directory = project / relative
        if not directory.exists():
            created.discard(relative)
            continue
        try:
            directory.rmdir()  # only when empty: someone else's files keep it
        except OSError:
            continue
        created.discard(relative)
    if not outcome.state_changed:
        return
    path = project / STATE_FILE
    if outcome.state.entries or outcome.state.created_dirs:
        path.parent.mkdir(exist_ok=True)
        replace_file(path, outcome.state.text().encode("utf-8"), private=False)
    else:
        path.unlink(missing_ok=True)


def relative_to(project: Path, path: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(project).as_posix()
    except ValueError:
        return str(path)
