"""``ecc sync`` for OpenCode: the project's shared rules, commands and hooks in its own files.

* **rules** (native): OpenCode reads the project's ``AGENTS.md`` (the first of ``AGENTS.md``,
  ``CLAUDE.md``, ``CONTEXT.md`` found from its directory up to the worktree). The rules go into
  ecc's ``rules`` section of it, the very section codex is given
  (:func:`ecc.adapterkit.surfaces.agents_md_rules`), so a project synced for both holds the
  rules once and OpenCode does not read them twice (as ``opencode.json`` ``instructions``
  pointing at ``rules/*.md`` would make it, next to that section). ``opencode.json`` is left
  alone.
* **commands** (native): ``.opencode/commands/NAME.md``, a ``description`` front matter and the
  body, whose ``$ARGUMENTS`` and ``$1``… OpenCode substitutes itself.
* **hooks** (translated): one plugin module, ``.opencode/plugins/ecc-sync-hooks.js``, which
  OpenCode loads from that folder by itself (no ``opencode.json`` entry). ``pre_tool`` and
  ``post_tool`` are ``tool.execute.before``/``after``, ``prompt_submit`` is ``chat.message``,
  ``session_start``/``session_end`` are the ``session.created``/``session.idle`` events. Each
  command runs through ``sh`` in the project directory, its own process group killed at its
  timeout, with a Claude-style JSON payload on stdin; a ``pre_tool`` hook exiting 2 stops the
  tool call, its stderr the reason.
"""

from __future__ import annotations

import json

from ecc.adapterkit.surfaces import agents_md_rules, front_matter
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import SurfaceFile, SurfacePlan, SyncSource

__all__ = ["ecc_sync_surface"]

HOOKS_MODULE = "ecc-sync-hooks.js"
# harness-neutral event -> (the name the payload gives, as Claude Code's hooks do)
PAYLOAD_EVENTS = {
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "prompt_submit": "UserPromptSubmit",
}
ARGUMENTS_NOTE = (
    "OpenCode gives a command's last numbered placeholder ($1 to $9) every remaining word,"
    " and reads a quoted phrase as one word"
)
HINT_NOTE = "OpenCode shows no argument-hint: it is left out of .opencode/commands/"
SESSION_END_NOTE = (
    "session_end runs on OpenCode's session.idle (the agent finished its turn, which ends an"
    " `opencode run`); a matcher is a JavaScript regular expression, matched case-insensitively"
    " on OpenCode's tool names (bash, edit, ...)"
)

# The plugin module. HOOKS is the list of {event, command, matcher, timeout_ms}.
HOOKS_TEMPLATE = """// ecc sync: written from the project's [[sync.hooks]] by `ecc sync`.
import {{ spawn }} from "node:child_process";

const NAMES = {names};
// A matcher names the source's tools (Claude Code's Bash, Edit): matched case-insensitively
// against OpenCode's (bash, edit). One JavaScript cannot compile skips its hook, not every call.
const HOOKS = {hooks}.flatMap((hook) => {{
  try {{
    return [{{ ...hook, pattern: hook.matcher ? new RegExp(hook.matcher, "i") : null }}];
  }} catch (error) {{
    console.error(`ecc sync: hook ${{hook.command}} skipped: ${{error.message}}`);
    return [];
  }}
}});

function run(hook, payload, cwd) {{
  return new Promise((resolve) => {{
    let child;
    try {{
      child = spawn("sh", ["-c", hook.command], {{
        cwd, detached: true, stdio: ["pipe", "ignore", "pipe"],
      }});
    }} catch (error) {{
      resolve({{ status: null, stderr: String(error) }});
      return;
    }}
    let stderr = "";
    const timer = setTimeout(() => {{
      try {{ process.kill(-child.pid, "SIGTERM"); }} catch {{}}
    }}, hook.timeout_ms);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {{ stderr += chunk; }});
    child.on("error", (error) => {{
      clearTimeout(timer);
      resolve({{ status: null, stderr: String(error) }});
    }});
    child.on("close", (status) => {{
      clearTimeout(timer);
      resolve({{ status, stderr }});
    }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify(payload));
  }});
}}

async function fire(event, fields, cwd, tool) {{
  let blocked = null;
  for (const hook of HOOKS) {{
    if (hook.event !== event) continue;
    if (tool !== undefined && hook.pattern && !hook.pattern.test(tool)) continue;
    const payload = {{ hook_event_name: NAMES[event], ...fields, cwd }};
    const result = await run(hook, payload, cwd);
    if (event === "pre_tool" && result.status === 2 && blocked === null) {{
      blocked = (result.stderr || "blocked by a project hook").trim();
    }}
  }}
  if (blocked !== null) throw new Error(blocked);
}}

function text(parts) {{
  return (parts || []).filter((p) => p && p.type === "text").map((p) => p.text).join("\\n");
}}

export const EccSyncHooks = async ({{ directory }}) => ({{
  "tool.execute.before": async (input, output) => {{
    const fields = {{
      session_id: input.sessionID, tool_name: input.tool, tool_input: output.args,
    }};
    await fire("pre_tool", fields, directory, input.tool);
  }},
  "tool.execute.after": async (input, output) => {{
    const fields = {{
      session_id: input.sessionID, tool_name: input.tool, tool_input: input.args,
      tool_response: output && output.output,
    }};
    await fire("post_tool", fields, directory, input.tool);
  }},
  "chat.message": async (input, output) => {{
    const fields = {{ session_id: input.sessionID, prompt: text(output && output.parts) }};
    await fire("prompt_submit", fields, directory);
  }},
  event: async ({{ event }}) => {{
    const properties = (event && event.properties) || {{}};
    if (event && event.type === "session.created") {{
      const id = properties.info && properties.info.id;
      await fire("session_start", {{ session_id: id, source: "startup" }}, directory);
    }} else if (event && event.type === "session.idle") {{
      await fire("session_end", {{ session_id: properties.sessionID }}, directory);
    }}
  }},
}});
"""


def hooks_module(source: SyncSource) -> str:
    """The plugin module running ``source.hooks`` (see :data:`HOOKS_TEMPLATE`)."""
    hooks = [
        {
            "event": hook.event,
            "command": hook.command,
            "matcher": hook.matcher,
            "timeout_ms": hook.timeout_secs * 1000,
        }
        for hook in source.hooks
    ]
    return HOOKS_TEMPLATE.format(
        hooks=json.dumps(hooks, indent=2), names=json.dumps(PAYLOAD_EVENTS)
    )


def _rules(source: SyncSource) -> SurfacePlan:
    body = agents_md_rules(source)
    if body is None:
        return SurfacePlan("native")
    return SurfacePlan("native", [SurfaceFile(source.project_dir / "AGENTS.md", section=body)])


def _commands(source: SyncSource) -> SurfacePlan:
    import re

    folder = source.project_dir / ".opencode" / "commands"
    files = [
        SurfaceFile(
            folder / f"{command.name}.md",
            content=front_matter({"description": command.description}) + command.body,
        )
        for command in source.commands
    ]
    numbered = re.compile(r"\$[1-9]")
    notes = [ARGUMENTS_NOTE] if any(numbered.search(c.body) for c in source.commands) else []
    if any(c.argument_hint for c in source.commands):
        notes.append(HINT_NOTE)
    return SurfacePlan("native", files, notes)


def _hooks(source: SyncSource) -> SurfacePlan:
    if not source.hooks:
        return SurfacePlan("translated")
    path = source.project_dir / ".opencode" / "plugins" / HOOKS_MODULE
    return SurfacePlan(
        "translated", [SurfaceFile(path, content=hooks_module(source))], [SESSION_END_NOTE]
    )


@hookimpl
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    render = {"rules": _rules, "commands": _commands, "hooks": _hooks}.get(surface)
    return None if render is None else render(source)
