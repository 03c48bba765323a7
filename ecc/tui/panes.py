"""The dashboard's detail panes as Rich ``Text``: a session's fields and conversation, a
worktree diff, a memory. Every piece of agent or vault text goes through
:func:`ecc.runtime.terminal.sanitize` (or :func:`ecc.tui.data.one_line`), never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from ecc.runtime.money import format_cost
from ecc.runtime.terminal import sanitize
from ecc.store.models import WAITING
from ecc.tui.data import one_line, worktree_text

if TYPE_CHECKING:
    from ecc.store.models import Session


CONFLICT_NOTE = "same file as another session: c resolves (ecc conflicts)"


def details_text(session: Session, conversation: list[dict[str, Any]] | None = None) -> Text:
    """The selected session's fields, one per line, then its conversation (once there is more
    than the task: each run's prompt and the agent's answers, one line each, the newest 20)."""
    out = Text()
    rows = [
        ("Session", session.id + (f" ({session.name})" if session.name else "")),
        ("State", session.display_state + (f" - {session.reason}" if session.reason else "")),
        *(
            [("Approval", f"{session.pending_approval}: a approves, x denies (ecc approvals)")]
            if session.display_state == WAITING
            else []
        ),
        *(
            [("Conflict", f"{session.open_conflict}: {CONFLICT_NOTE}")]
            if session.open_conflict
            else []
        ),
        ("Task", session.task),
        ("Harness", session.harness),
        ("Enforced", session.enforced_text),
        ("Profile", session.profile_name or "-"),
        ("Directory", session.working_dir),
        (
            "Worktree",
            f"{session.worktree_path} ({session.worktree_branch})"
            if session.worktree_path
            else worktree_text(session),
        ),
        (
            "Base",
            f"{session.base_branch or 'detached'} @ {session.base_commit[:12]}"
            if session.base_commit
            else "-",
        ),
        ("PR", session.pr_url or "-"),
        ("Exit", _exit_text(session)),
        ("Tokens", f"{session.input_tokens} in, {session.output_tokens} out"),
        ("Cost", format_cost(session.cost_usd)),
        ("Created", session.created_at),
        ("Ended", session.ended_at or "-"),
    ]
    for key, value in rows:
        out.append(f"{key + ':':<11}", style="bold")
        out.append(sanitize(value))
        out.append("\n")
    turns = conversation or []
    if len(turns) > 1 or any(turn["status"] == "queued" for turn in turns):
        out.append("Conversation:\n", style="bold")
        for turn in turns[-20:]:
            who = "agent" if turn["role"] == "agent" else "you"
            run = f"run {turn['run']}" if turn["run"] is not None else "queued"
            out.append(f"  [{run}] {who}: ", style="bold")
            out.append(one_line(turn["text"], 200) + "\n")
    return out


def _exit_text(session: Session) -> str:
    if session.exit_signal:
        return f"signal {session.exit_signal}"
    if session.exit_code is not None:
        return f"code {session.exit_code}"
    return "-"


def diff_text(diff: str, limit: int = 4000) -> Text:
    """A unified diff coloured by line kind (sanitised; at most ``limit`` lines)."""
    out = Text()
    lines = diff.splitlines()
    for line in lines[:limit]:
        clean = sanitize(line)
        if clean.startswith(("+++", "---")):
            style = "bold"
        elif clean.startswith("+"):
            style = "green"
        elif clean.startswith("-"):
            style = "red"
        elif clean.startswith("@@"):
            style = "cyan"
        elif clean.startswith("diff "):
            style = "bold yellow"
        else:
            style = ""
        out.append(clean + "\n", style=style)
    if len(lines) > limit:
        out.append(f"… {len(lines) - limit} more line(s)\n", style="dim")
    return out


def memory_text(result: dict[str, Any]) -> Text:
    """Memory search results (``ecc.memory.search.v1``) as display text."""
    out = Text()
    items = result.get("results") or []
    if not items:
        out.append("No matching memories found.", style="dim")
        return out
    for item in items:
        memory = item.get("memory") or {}
        out.append(f"[{sanitize(memory.get('trust', ''))}] ", style="dim")
        out.append(sanitize(memory.get("id", "")), style="cyan")
        out.append(" — ")
        out.append(sanitize(memory.get("title", "")), style="bold")
        out.append(f" (score {item.get('score')})\n", style="dim")
        out.append("  " + one_line(item.get("excerpt", "")) + "\n")
    return out
