"""The built-in ``heuristic`` risk scorer: the reference's formula, on words and paths.

Four components, added in this order (at most one tier each), as in the reference:

1. base by tool kind: shell 0.20, write/multiedit 0.15, edit 0.10, anything else 0.05;
2. file sensitivity: a write to ecc's or a harness's hook configuration +0.55 (not in the
   reference; see below), else a secret or credential surface +0.25, else shared
   infrastructure +0.15;
3. blast radius: shared state or history +0.35, else many files or directories +0.25;
4. irreversibility: destructive +0.45, else difficult to undo +0.40.

Unlike the reference it does not match raw substrings of a 220-character summary: shell commands
are tokenised (POSIX ``shlex`` words, in linear time: :mod:`ecc_plugins.shellwords`) and split
into simple commands, flags are read as flags (``rm -r -f`` is ``rm -rf``,
``--force-with-lease`` is not ``--force``), paths are matched by component and suffix
(``.keyboard`` is not ``.key``, ``/tmp/x`` is not ``/``) and words with boundaries (``author`` is
not ``auth``, ``tokenizer`` is not ``token``). Paths come from the tool's parameters
(``file_path``, ``command``...) when it has them; written file *content* is never scanned for
commands. ``bash -c``/``sh -c`` strings and ``xargs`` commands are scored as the commands they run.

A *write* to hook configuration (:mod:`ecc_plugins.guardfiles`, which says why +0.55) could
switch ecc's check off for every later call: it lands at ``require_confirmation`` or above.

5. patterns (not in the reference; :mod:`ecc_plugins.riskpatterns` says why): download or
   secrets to the network +0.65 (block), decode and execute or a recursive permission change
   of a home or system directory +0.40 (require_confirmation), the strongest one only.
"""

from __future__ import annotations

import re

from ecc.contract.markers import hookimpl  # without the specs module (ecc hook)
from ecc.contract.types import RiskContribution, ToolCall
from ecc_plugins import guardfiles, riskpatterns, shellwords

TYPE_CHECKING = False  # typing stays unimported: this scores every tool call's hook
if TYPE_CHECKING:
    from typing import Any

NAME = "heuristic"

# -- 1. base by tool kind --------------------------------------------------------------------

_KIND_OF_TOOL = {
    "bash": "shell",
    "shell": "shell",
    "exec_command": "shell",
    "run_shell_command": "shell",
    "local_shell": "shell",
    "write": "write",
    "write_file": "write",
    "create_file": "write",
    "multiedit": "multiedit",
    "edit": "edit",
    "replace": "edit",
    "str_replace": "edit",
    "apply_patch": "edit",
    "notebookedit": "edit",
}
_BASE = {
    "shell": (0.20, "shell execution can modify local or shared state"),
    "write": (0.15, "writes files directly"),
    "multiedit": (0.15, "writes files directly"),
    "edit": (0.10, "modifies existing files"),
}
_OTHER_BASE = 0.05

# -- 2. sensitivity --------------------------------------------------------------------------

GUARD_REASON = "writes ecc's or a harness's hook configuration"
SECRET_REASON = "targets a sensitive file or credential surface"
INFRA_REASON = "targets shared infrastructure or release-critical files"
_SECRET_WORDS = frozenset(
    {
        "secret",
        "secrets",
        "credential",
        "credentials",
        "token",
        "tokens",
        "auth",
        "apikey",
        "password",
        "passwords",
        "passwd",
    }
)
_SECRET_COMPOUND = re.compile(
    r"(?<![a-z0-9])(api|access|private|secret|client)[_-]?(key|secret|token)s?(?![a-z0-9])"
)
_SECRET_FILES = frozenset(
    {
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        ".netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".htpasswd",
        "shadow",
    }
)
_SECRET_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".docker"})
_SECRET_SUFFIXES = frozenset({".pem", ".key", ".p12", ".pfx", ".keystore", ".jks", ".asc"})
_INFRA_FILES = frozenset(
    {
        "cargo.toml",
        "cargo.lock",
        "package.json",
        "package-lock.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "pyproject.toml",
        "setup.py",
        "go.mod",
        "go.sum",
        "gemfile",
        "gemfile.lock",
        "dockerfile",
        "docker-compose.yml",
        "docker-compose.yaml",
        "compose.yaml",
        "compose.yml",
        "terraform.tfstate",
    }
)
_INFRA_WORDS = frozenset({"schema", "schemas", "migration", "migrations", "production"})

# -- 3. blast radius -------------------------------------------------------------------------

SHARED_REASON = "has a broad blast radius across shared state or history"
SCOPE_REASON = "has a broad blast radius across multiple files or directories"
_ROOT_TARGETS = frozenset({"/", "/*", ".", "./", "..", "../", "*", "~", "~/", "$home", "${home}"})
_PROTECTED_BRANCHES = frozenset({"main", "master"})
_SCOPE_PHRASES = re.compile(
    r"\b(?:entire|whole) (?:repo|repository|codebase|project)\b|\ball files\b|\bacross (?:src/|"
    r"the (?:repo|repository|codebase))"
)

# -- 4. irreversibility ----------------------------------------------------------------------

DESTRUCTIVE_REASON = "includes an irreversible or destructive operation"
HARD_TO_UNDO_REASON = "includes an irreversible or difficult-to-undo operation"
_SQL_DESTRUCTIVE = re.compile(r"\b(?:drop\s+(?:database|table|schema)|truncate\s+table)\b")
_SQL_HARD = re.compile(r"\bdelete\s+from\b")
_DESTRUCTIVE_PROGRAMS = frozenset({"shred", "truncate", "mkfs", "wipefs"})

_PATH_KEYS = (
    "file_path",
    "filePath",
    "file_paths",
    "path",
    "paths",
    "source_path",
    "destination_path",
    "old_file_path",
    "new_file_path",
    "notebook_path",
    "absolute_path",
    "dir_path",
    "directory",
    "pattern",
    "glob",
)
_COMMAND_KEYS = ("command", "cmd")
_NOT_SCANNED = frozenset(
    {"content", "new_string", "old_string", "oldString", "newString", "edits", "description"}
)
_WRITE_KINDS = frozenset({"write", "multiedit", "edit"})
_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$", re.MULTILINE)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+)$", re.MULTILINE)
_OPERATORS = frozenset(";&|()<>")
_WRAPPERS = frozenset({"sudo", "env", "command", "nohup", "time", "nice", "exec", "doas"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")


class _Findings:
    """The strongest tier found for each component, with a detail for the reason."""

    def __init__(self) -> None:
        self.guard: str | None = None
        self.secret: str | None = None
        self.infra: str | None = None
        self.shared: str | None = None
        self.scope: str | None = None
        self.destructive: str | None = None
        self.hard: str | None = None
        self.patterns: list[tuple[float, str]] = []  # (amount, reason) of riskpatterns


def _words(text: str) -> list[str]:
    split = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return re.findall(r"[a-z0-9]+", split.lower())


_tokens = shellwords.words  # shlex's words in linear time (whitespace runs for bad quotes)


def _simple_commands(tokens: list[str], written: list[str]) -> list[list[str]]:
    """The argv of each simple command; output redirection targets go to ``written``."""
    commands: list[list[str]] = [[]]
    redirect = output = False
    for token in tokens:
        if token and token[0] in _OPERATORS and set(token) <= _OPERATORS:
            redirect = ">" in token or "<" in token
            output = ">" in token
            if not redirect:
                commands.append([])
            continue
        if redirect:  # the target of a redirection is not an argument
            if output:
                written.append(token)
            redirect = False
            continue
        commands[-1].append(token)
    return [command for command in commands if command]


def _check_written(path: str, found: _Findings) -> None:
    """A path the call writes, deletes or moves: is it hook configuration?"""
    if found.guard is None:
        what = guardfiles.describe(path)
        if what is not None:
            found.guard = f"{what}: {path}"


def _strip_wrappers(words: list[str]) -> list[str]:
    index = 0
    while index < len(words):
        word = words[index]
        if word in _WRAPPERS or _ASSIGNMENT.fullmatch(word):
            index += 1
            continue
        break
    return words[index:]


def _is_env_file(name: str) -> bool:
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


def _check_path(token: str, found: _Findings) -> None:
    lowered = token.lower().strip("'\"")
    if not lowered:
        return
    parts = [part for part in re.split(r"[/\\]", lowered) if part]
    base = parts[-1] if parts else lowered
    if found.secret is None and (
        any(_is_env_file(part) for part in parts)
        or base in _SECRET_FILES
        or any(part in _SECRET_DIRS for part in parts[:-1] or parts)
        or any(base.endswith(suffix) for suffix in _SECRET_SUFFIXES)
    ):
        found.secret = token
    if found.infra is None and (
        base in _INFRA_FILES or ".github/workflows" in lowered or "/.github/" in f"/{lowered}"
    ):
        found.infra = token
    if found.infra is None and ("/" in lowered or "." in base):
        stem_words = set(_words(lowered))
        if stem_words & _INFRA_WORDS:
            found.infra = token
    if found.scope is None and ("**" in lowered or lowered.endswith("/*")) and lowered != "/*":
        found.scope = f"glob {token}"


def _check_text(text: str, found: _Findings) -> None:
    """Word-level checks on free text (a command line or a summary)."""
    lowered = text.lower()
    words = set(_words(text))
    if found.secret is None:
        hit = words & _SECRET_WORDS
        compound = _SECRET_COMPOUND.search(lowered)
        if hit:
            found.secret = sorted(hit)[0]
        elif compound:
            found.secret = compound.group(0)
    if found.infra is None and "production" in words:
        found.infra = "production"
    if found.scope is None:
        phrase = _SCOPE_PHRASES.search(lowered)
        if phrase:
            found.scope = phrase.group(0)
    if found.destructive is None:
        sql = _SQL_DESTRUCTIVE.search(lowered)
        if sql:
            found.destructive = " ".join(sql.group(0).split())
    if found.hard is None:
        sql = _SQL_HARD.search(lowered)
        if sql:
            found.hard = " ".join(sql.group(0).split())


def _check_rm(args: list[str], found: _Findings) -> None:
    letters, longs, operands = shellwords.flags(args)
    recursive = bool({"r", "R"} & letters) or "--recursive" in longs
    force = "f" in letters or "--force" in longs
    if recursive:
        found.destructive = found.destructive or ("rm -rf" if force else "rm -r")
        roots = [op for op in operands if op.lower() in _ROOT_TARGETS]
        if roots and found.shared is None:
            found.shared = f"rm -r {roots[0]}"
    else:
        found.hard = found.hard or ("rm -f" if force else "rm")


def _check_git(args: list[str], found: _Findings) -> None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        index += 2 if args[index] in {"-C", "-c"} else 1
    if index >= len(args):
        return
    sub, rest = args[index], args[index + 1 :]
    letters, longs, operands = shellwords.flags(rest)
    if sub == "push":
        forced = (
            "f" in letters
            or "--force" in longs
            or "--mirror" in longs
            or any(op.startswith("+") for op in operands)
        )
        lease = bool({"--force-with-lease", "--force-if-includes"} & longs)
        protected = [
            op
            for op in operands
            if op.lstrip("+").rsplit(":", 1)[-1].removeprefix("refs/heads/") in _PROTECTED_BRANCHES
        ]
        if forced:
            found.shared = found.shared or "git push --force"
            found.hard = found.hard or "git push --force"
        elif lease:
            found.shared = found.shared or "git push --force-with-lease"
        elif protected:
            found.shared = found.shared or f"git push to {protected[0]}"
        if "--delete" in longs or "d" in letters:
            found.hard = found.hard or "git push --delete"
        if "--all" in longs and found.scope is None:
            found.scope = "git push --all"
    elif sub == "reset" and "--hard" in longs:
        found.destructive = found.destructive or "git reset --hard"
    elif sub == "clean" and ("f" in letters or "--force" in longs):
        if "d" in letters or "x" in letters:
            found.destructive = found.destructive or "git clean -fd"
        else:
            found.hard = found.hard or "git clean -f"
    elif sub == "branch" and "D" in letters:
        found.hard = found.hard or "git branch -D"
    elif sub in {"checkout", "restore"} and "." in operands:
        found.hard = found.hard or f"git {sub} ."


def _check_command(
    command: str, found: _Findings, depth: int = 0, summary_of_a_write: bool = False
) -> None:
    """Score a command line; for a write tool's one-line summary every word may be the file
    it writes. A check only fills a finding still empty, from its words alone, so a repeated
    word or simple command can add nothing and is skipped (long generated commands)."""
    _check_text(command, found)
    if depth == 0:  # the patterns read nested commands (bash -c, $( … )) themselves
        riskpatterns.scan(command, found)
    written: list[str] = []
    seen_words: set[str] = set()
    seen_commands: set[tuple[str, ...]] = set()
    for simple in _simple_commands(_tokens(command), written):
        if tuple(simple) in seen_commands:
            continue
        seen_commands.add(tuple(simple))
        words = _strip_wrappers(simple)
        if not words:
            continue
        for word in words:  # a lone word may be a path ("Cargo.toml" as a summary)
            if word not in seen_words:
                seen_words.add(word)
                _check_path(word, found)
                if summary_of_a_write:
                    _check_written(word, found)
        _check_argv(words, found, depth)
    for path in dict.fromkeys(written):
        _check_written(path, found)


def _check_argv(words: list[str], found: _Findings, depth: int) -> None:
    program = words[0].rsplit("/", 1)[-1].lower()
    args = words[1:]
    letters, longs, operands = shellwords.flags(args)
    if program in {"bash", "sh", "zsh", "dash"} and "c" in letters and operands and depth < 3:
        _check_command(operands[0], found, depth + 1)
        return
    if program == "xargs":
        inner = [w for w in args if not w.startswith("-")]
        if found.scope is None:
            found.scope = "xargs"
        if inner:
            _check_argv(inner, found, depth + 1)
        return
    for path in guardfiles.written_operands(program, letters, longs, operands):
        _check_written(path, found)
    if found.guard is None:
        found.guard = guardfiles.ecc_command(words)
    if program == "find" and found.scope is None:
        found.scope = "find"
    if program != "rm" and found.scope is None:
        scope_flags = {"--all", "--recursive"} & longs
        if scope_flags:
            found.scope = f"{program} {sorted(scope_flags)[0]}"
    if program == "rm":
        _check_rm(args, found)
    elif program == "git":
        _check_git(args, found)
    elif program in _DESTRUCTIVE_PROGRAMS or program.startswith("mkfs."):
        found.destructive = found.destructive or program
    elif program == "dd" and any(arg.startswith("of=/dev/") for arg in args):
        found.destructive = found.destructive or "dd of=/dev/…"


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def _findings(call: ToolCall, kind: str) -> _Findings:
    found = _Findings()
    writes = kind in _WRITE_KINDS
    if isinstance(call.input, str):
        # A one-line summary (the CLI, the reference's logs): read it as a command line.
        _check_command(call.input, found, summary_of_a_write=writes)
        return found
    data = call.input
    for key in _COMMAND_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            import shlex  # argv-list commands only: most calls never need it

            _check_command(shlex.join(str(v) for v in value), found)
        elif isinstance(value, str):
            _check_command(value, found)
    for key in _PATH_KEYS:
        for path in _strings(data.get(key)):
            _check_path(path, found)
            _check_text(path, found)
            if writes:
                _check_written(path, found)
    patch = data.get("patch") or data.get("input") if kind == "edit" else None
    if isinstance(patch, str):
        for action, path in _PATCH_FILE.findall(patch):
            _check_path(path.strip(), found)
            _check_written(path.strip(), found)
            if action == "Delete" and found.hard is None:
                found.hard = f"deletes {path.strip()}"
        for path in _PATCH_MOVE.findall(patch):
            _check_written(path.strip(), found)
    for key, value in data.items():  # other short scalar parameters (queries, urls, names)
        if key in _NOT_SCANNED or key in _COMMAND_KEYS or key in _PATH_KEYS or key == "patch":
            continue
        for text in _strings(value):
            if len(text) <= 500:
                _check_text(text, found)
    return found


def score(call: ToolCall) -> list[RiskContribution]:
    """The heuristic's contributions for ``call`` (exposed for tests and other scorers)."""
    name = call.tool.lower()
    kind = _KIND_OF_TOOL.get(name) or (
        "multiedit" if name == "multiedit" else (call.kind if call.kind in _BASE else "")
    )
    base, base_reason = _BASE.get(kind, (_OTHER_BASE, ""))
    contributions = [RiskContribution(base, base_reason, NAME)]
    found = _findings(call, kind)
    if found.guard is not None:
        contributions.append(RiskContribution(0.55, f"{GUARD_REASON} ({found.guard})", NAME))
    elif found.secret is not None:
        contributions.append(RiskContribution(0.25, f"{SECRET_REASON} ({found.secret})", NAME))
    elif found.infra is not None:
        contributions.append(RiskContribution(0.15, f"{INFRA_REASON} ({found.infra})", NAME))
    if found.shared is not None:
        contributions.append(RiskContribution(0.35, f"{SHARED_REASON} ({found.shared})", NAME))
    elif found.scope is not None:
        contributions.append(RiskContribution(0.25, f"{SCOPE_REASON} ({found.scope})", NAME))
    if found.destructive is not None:
        reason = f"{DESTRUCTIVE_REASON} ({found.destructive})"
        contributions.append(RiskContribution(0.45, reason, NAME))
    elif found.hard is not None:
        contributions.append(RiskContribution(0.40, f"{HARD_TO_UNDO_REASON} ({found.hard})", NAME))
    if found.patterns:  # the first of the strongest
        amount, reason = max(found.patterns, key=lambda pattern: pattern[0])
        contributions.append(RiskContribution(amount, reason, NAME))
    return contributions


@hookimpl
def ecc_score_tool_call(call: ToolCall) -> list[RiskContribution]:
    return score(call)
