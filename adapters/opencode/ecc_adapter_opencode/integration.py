"""OpenCode integration: a plugin module whose ``tool.execute.before`` runs ``ecc hook``,
ecc's MCP server and skills.

OpenCode has no command hooks; its equivalent is a JS plugin. ``ecc hooks install --harness
opencode`` writes ``ecc-hooks.js`` (``<project>/.opencode/`` with ``--project``,
``$XDG_CONFIG_HOME/opencode/`` with ``--user``) and lists it as ``file://…`` in the ``plugin``
array of the matching ``opencode.json``. Before each tool call the module pipes
``{"event": "tool.execute.before", "tool", "sessionID", "callID", "args"}`` into
``ecc hook --harness opencode`` as an asynchronous child process (OpenCode's event loop runs on
while a call is held); exit status 2 makes it throw, which stops the tool and shows the
reason (stderr) to the agent. OpenCode cannot ask: ``require_confirmation`` is held for a
person's decision in an ecc session (the module's timeout outlasts ``risk.approval_timeout``)
and denied outside one.

MCP: ``ecc-memory`` in ``mcp`` of the same ``opencode.json``, ``{"type": "local", "command":
[argv], "environment": {"ECC_MEMORY_HARNESS": "opencode"}, "enabled": true}``.
Skills: ``<project>/.opencode/skills/<name>/`` or ``$XDG_CONFIG_HOME/opencode/skills/<name>/``.
An ``opencode.jsonc`` (comments) is never edited: ecc says what to add by hand.

Loaded on its own by ``ecc hook``'s hot path: it imports nothing from its package.
"""

from __future__ import annotations

import json
import os

from ecc.adapterkit import install
from ecc.adapterkit.hooks import HookProtocol
from ecc.contract.markers import hookimpl  # without the specs module (ecc hook)
from ecc.contract.types import (
    HookDecision,
    HookEvent,
    HookResponse,
    IntegrationRequest,
    IntegrationResult,
)

TYPE_CHECKING = False  # typing and pathlib stay unimported: ecc hook loads this module
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["ecc_hook_response", "ecc_install_integration", "ecc_parse_hook_payload"]

NAME = "opencode"
# What the plugin module below pipes in: {"event", "tool", "sessionID", "callID", "args"}.
PROTOCOL = HookProtocol(
    NAME,
    phases={"tool.execute.before": "pre_tool", "tool.execute.after": "post_tool"},
    kinds={
        "bash": "shell",
        "write": "write",
        "edit": "edit",
        "patch": "edit",
        "multiedit": "edit",
        "read": "read",
        "glob": "search",
        "grep": "search",
        "list": "search",
        "webfetch": "fetch",
    },
    event_field="event",
    session_field="sessionID",
    tool_use_id_field="callID",
    tool_field="tool",
    input_field="args",
    cwd_field=None,
    output_field=None,
    product="OpenCode",
)
EVENT = "tool.execute.before"
MODULE_NAME = "ecc-hooks.js"
MARKER = "// ecc-hooks: installed by `ecc hooks install --harness opencode`"

# The JS module: before each tool call it pipes the payload into ``ECC`` (the hook command as
# argv) through an asynchronous child process, so a call held for a person's decision waits on
# a promise and never blocks OpenCode's event loop. Exit 2 throws (the tool is stopped, the
# reason shown to the agent); with FAIL_CLOSED a hook that times out or cannot start throws too.
PLUGIN_TEMPLATE = """{marker}
import {{ spawn }} from "node:child_process";

const ECC = {argv};
const TIMEOUT_MS = {timeout_ms};
const FAIL_CLOSED = {fail_closed};

function decide(payload) {{
  return new Promise((resolve) => {{
    let child;
    try {{
      child = spawn(ECC[0], ECC.slice(1), {{ stdio: ["pipe", "ignore", "pipe"] }});
    }} catch (error) {{
      resolve({{ status: null, stderr: `ecc's hook could not start: ${{error.message}}` }});
      return;
    }}
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {{
      timedOut = true;
      child.kill("SIGTERM");
    }}, TIMEOUT_MS);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {{
      stderr += chunk;
    }});
    child.on("error", (error) => {{
      clearTimeout(timer);
      resolve({{ status: null, stderr: `ecc's hook could not start: ${{error.message}}` }});
    }});
    child.on("close", (status) => {{
      clearTimeout(timer);
      const late = `ecc's hook did not answer within ${{TIMEOUT_MS / 1000}} s`;
      resolve({{ status: timedOut ? null : status, stderr: timedOut ? late : stderr }});
    }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(payload);
  }});
}}

export const {export} = async () => ({{
  "tool.execute.before": async (input, output) => {{
    const payload = JSON.stringify({{
      event: "tool.execute.before",
      tool: input.tool,
      sessionID: input.sessionID,
      callID: input.callID,
      args: output.args,
    }});
    const result = await decide(payload);
    if (result.status === 2 || (FAIL_CLOSED && result.status !== 0)) {{
      throw new Error((result.stderr || "denied by ecc").trim());
    }}
  }},
}});
"""


def locations(request: IntegrationRequest) -> tuple[Path, Path]:
    """(plugin module, opencode.json) for the request's scope."""
    if request.scope == "user":
        from pathlib import Path

        base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        directory = Path(base) / "opencode"
        return directory / MODULE_NAME, directory / "opencode.json"
    return request.project_dir / ".opencode" / MODULE_NAME, request.project_dir / "opencode.json"


def module_text(options: dict[str, Any]) -> str:
    """The module ``ecc hooks install`` writes: it fails open (as before) on a hook that times
    out or cannot start, and only exit 2 denies."""
    import shlex

    from ecc.portability.harnessfiles import ecc_prefix

    argv = [*shlex.split(ecc_prefix(options)), "hook", "--harness", NAME, "--event", EVENT]
    seconds = int(options.get("hook_timeout") or install.DEFAULT_HOOK_TIMEOUT)
    marker = f"{MARKER}; `ecc hooks uninstall` removes it."
    return plugin_module(marker, argv, seconds, fail_closed=False, export="EccHooks")


def plugin_module(
    marker: str, argv: list[str], timeout_secs: int, *, fail_closed: bool, export: str
) -> str:
    """The JS plugin module running ``argv`` before each tool call (see ``PLUGIN_TEMPLATE``)."""
    return PLUGIN_TEMPLATE.format(
        marker=marker,
        argv=json.dumps(argv),
        timeout_ms=timeout_secs * 1000,
        fail_closed=json.dumps(fail_closed),
        export=export,
    )


def skills_dir(request: IntegrationRequest) -> Path:
    module, _ = locations(request)
    return module.parent / "skills"


def _refuse_jsonc(config_file: Path, what: str, where: str) -> None:
    """Stop when only an ``opencode.jsonc`` exists: say what to add by hand instead."""
    if not config_file.exists() and config_file.with_suffix(".jsonc").exists():
        from ecc.contract.errors import EccError

        raise EccError(
            f"{config_file.with_suffix('.jsonc')} is JSONC, which ecc does not edit; add "
            f"{what} to its {where} by hand, nothing was changed"
        )


def _mcp(request: IntegrationRequest) -> IntegrationResult:
    from ecc.portability.harnessfiles import MCP_SERVER_NAME, mcp_argv

    _, config_file = locations(request)
    entry = {
        "type": "local",
        "command": mcp_argv(request.options),
        "environment": {"ECC_MEMORY_HARNESS": NAME},
        "enabled": True,
    }
    _refuse_jsonc(config_file, f'"{MCP_SERVER_NAME}": {json.dumps(entry)}', '"mcp" object')
    return install.mcp_server(request, config_file, "OpenCode config file", "mcp", entry)


def _skills(request: IntegrationRequest) -> IntegrationResult:
    return install.skills(request, NAME, skills_dir(request))


def _hooks(request: IntegrationRequest) -> IntegrationResult:
    import difflib

    from ecc.contract.errors import EccError
    from ecc.portability.harnessfiles import (
        edit_target,
        prune_empty_dirs,
        read_json,
        write_json,
        write_text,
    )

    module, config_file = locations(request)
    _refuse_jsonc(config_file, f'"file://{module}"', '"plugin" list')
    root = install.root(request)
    real_config = edit_target(config_file, root)
    data, original = read_json(real_config, "OpenCode config file")
    from pathlib import Path

    entry = Path(os.path.abspath(module)).as_uri()
    plugins = data.get("plugin", [])
    if not isinstance(plugins, list):
        raise EccError(f'"plugin" in {config_file} is not a list; nothing was changed')
    try:
        current = module.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    if current is not None and MARKER not in current:
        raise EccError(f"{module} exists and was not written by ecc; nothing was changed")
    updated = dict(data)
    others = [p for p in plugins if not (isinstance(p, str) and p.endswith("/" + MODULE_NAME))]
    wanted_module: str | None
    if request.action == "install":
        updated["plugin"] = plugins if entry in plugins else [*others, entry]
        wanted_module = module_text(request.options)
    else:
        if others:
            updated["plugin"] = others
        else:
            updated.pop("plugin", None)
        wanted_module = None
    result = IntegrationResult()
    if wanted_module != current:
        result.diff += "".join(
            difflib.unified_diff(
                (current or "").splitlines(keepends=True),
                (wanted_module or "").splitlines(keepends=True),
                fromfile=str(module) if current is not None else "/dev/null",
                tofile=str(module) if wanted_module is not None else "/dev/null",
            )
        )
        result.changed_files.append(module)
        if not request.dry_run:
            if wanted_module is None:
                module.unlink()
                prune_empty_dirs(module.parent, root)
            else:
                write_text(module, wanted_module)
    if updated != data:
        written = write_json(
            real_config,
            updated,
            original,
            request.dry_run,
            delete_if_empty=request.action == "uninstall",
            what="OpenCode config file",
            link=real_config != config_file,
            prune_to=root,
        )
        result.changed_files += written.changed_files
        result.diff += written.diff
    result.message = (
        f"{config_file}: updated" if result.changed_files else f"{config_file}: already up to date"
    )
    return result


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    return install.dispatch(request, hooks=_hooks, mcp=_mcp, skills=_skills)


@hookimpl
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent:
    return PROTOCOL.parse(event, payload)


@hookimpl
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse:
    return PROTOCOL.respond(decision)
