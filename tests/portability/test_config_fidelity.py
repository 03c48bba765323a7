"""Install then uninstall gives back the harness's config file byte for byte.

The edits are tested on the helpers directly (fast, over many generated files) and through the
CLI for what only the CLI shows: symlinks, directories left behind, Gemini's JSONC settings.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecc.contract.errors import EccError
from ecc.portability.harnessfiles import edit_hooks_file, edit_mcp_json
from ecc.portability.jsonctext import parse
from ecc.portability.tomlconfig import edit_mcp_toml
from tests.conftest import run_ecc

ENTRY = {"command": "/opt/ecc/bin/ecc-memory-mcp", "args": [], "env": {"ECC_MEMORY_HARNESS": "x"}}
SERVER = "ecc-memory"


def toml_round_trip(path: Path, original: bytes) -> str:
    """Install into ``original``, check the result, uninstall; returns the installed text."""
    path.write_bytes(original)
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
    installed = path.read_bytes().decode()
    before = tomllib.loads(original.decode())
    after = tomllib.loads(installed)
    assert after["mcp_servers"][SERVER] == ENTRY
    del after["mcp_servers"][SERVER]
    if not after["mcp_servers"] and "mcp_servers" not in before:
        del after["mcp_servers"]
    assert after == before
    again = edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
    assert "already up to date" in again.message
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "uninstall", False)
    assert path.read_bytes() == original
    return installed


CASES = {
    "crlf": b'model = "o3"\r\n\r\n[profiles.fast]\r\nmodel = "o4-mini"\r\n',
    "no final newline": b'model = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"',
    "trailing blank lines": b'model = "o3"\n\n[profiles.fast]\nmodel = "o4-mini"\n\n\n',
    "root keys only": b'model = "o3"\n',
    "comment before a table": b'model = "o3"\n\n# the fast profile\n[profiles.fast]\nx = 1\n',
    "empty servers table": b'model = "o3"\n\n[mcp_servers]\n',
    "empty servers table then more": b"[mcp_servers]\n\n# tools\n[tools]\nweb = true\n",
    "server described by a comment": (
        b'[mcp_servers.docs]\ncommand = "docs"\n\n# the model profile\n[profiles.fast]\nx = 1\n'
    ),
    "whitespace only": b"\n\n",
    "multi-line array looking like a table": b'args = [\n  ["a"],\n]\n[x]\ny = """\n[z]\n"""\n',
    "crlf without final newline": b"[mcp_servers.docs]\r\ncommand = 'docs'",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_codex_config_round_trips_byte_for_byte(tmp_path: Path, name: str) -> None:
    toml_round_trip(tmp_path / "config.toml", CASES[name])


def test_codex_table_goes_with_the_servers_and_before_a_described_table(tmp_path: Path) -> None:
    installed = toml_round_trip(tmp_path / "config.toml", CASES["server described by a comment"])
    assert installed.index("[mcp_servers.ecc-memory]") < installed.index("# the model profile")
    assert "# the model profile\n[profiles.fast]" in installed
    crlf = toml_round_trip(tmp_path / "config.toml", CASES["crlf"])
    assert "\n" not in crlf.replace("\r\n", "")


def test_an_empty_servers_table_survives_uninstall(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    installed = toml_round_trip(path, CASES["empty servers table"])
    assert installed.startswith('model = "o3"\n\n[mcp_servers]\n')
    assert path.read_text() == 'model = "o3"\n\n[mcp_servers]\n'


def test_a_fresh_codex_config_is_removed_by_uninstall(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
    assert path.read_text().startswith("[mcp_servers.ecc-memory]\n")
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "uninstall", False)
    assert not path.exists()


_LINES = st.sampled_from(
    [
        'model = "o3"',
        "# a comment",
        "",
        "[mcp_servers]",
        "[mcp_servers.docs]",
        'command = "docs"',
        "[profiles.fast]",
        "[tools]",
        "web = true",
        'args = [\n  "--a",\n  ["b"],\n]',
        'note = """\n[not.a.table]\n"""',
        "x = 1  # trailing",
    ]
)


@st.composite
def toml_files(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(_LINES, max_size=12))
    seen: set[str] = set()
    kept: list[str] = []
    for line in lines:  # each table once, each key once per table: valid TOML
        key = line.split(" =")[0] if " =" in line else line
        scope = next((k for k in reversed(kept) if k.startswith("[")), "")
        ident = key if key.startswith("[") else f"{scope}/{key}"
        if line and not line.startswith("#") and ident in seen:
            continue
        seen.add(ident)
        kept.append(line)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(part.replace("\n", eol) for part in kept)
    text += draw(st.sampled_from(["", eol, eol * 2, eol * 3])) if text else ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        text = ""
    return text.encode()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(original=toml_files())
def test_generated_codex_configs_round_trip(tmp_path: Path, original: bytes) -> None:
    path = tmp_path / "config.toml"
    if not original:
        path.unlink(missing_ok=True)
        edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
        edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "uninstall", False)
        assert not path.exists()
        return
    installed = toml_round_trip(path, original)
    lines = installed.replace("\r\n", "\n").split("\n")
    header = lines.index("[mcp_servers.ecc-memory]")
    assert header == 0 or not lines[header - 1].startswith("#")


# -- JSON and JSONC --------------------------------------------------------------------------

JSONC = """\
// Gemini CLI settings
{
  /* the theme I like */
  "theme": "GitHub", // keep
  "mcpServers": {
    // the docs server
    "docs": {"command": "docs"}
  }
}
"""


def json_round_trip(path: Path, original: bytes, container: str = "mcpServers") -> str:
    path.write_bytes(original)
    edit_mcp_json(path, "settings file", container, ENTRY, "install", False)
    installed = path.read_bytes().decode()
    again = edit_mcp_json(path, "settings file", container, ENTRY, "install", False)
    assert "already up to date" in again.message
    edit_mcp_json(path, "settings file", container, ENTRY, "uninstall", False)
    after = path.read_bytes() if path.exists() else None
    if after == original:
        return installed
    # else only as the docs say: an emptied container goes (a file left empty with it)
    value = parse(original.decode())[0].value
    assert value.get(container) == {} or not value, (original, after)
    value.pop(container, None)
    if value:
        assert after is not None and parse(after.decode())[0].value == value
    else:
        assert after is None
    return installed


def test_jsonc_settings_keep_their_comments(tmp_path: Path) -> None:
    installed = json_round_trip(tmp_path / "settings.json", JSONC.encode())
    for line in JSONC.splitlines():
        assert line.strip().rstrip(",") in installed
    assert '"ecc-memory": {' in installed


JSON_CASES = {
    "two-space": b'{\n  "theme": "x"\n}\n',
    "four-space crlf": b'{\r\n    "theme": "x",\r\n    "n": [1, 2]\r\n}',
    "compact": b'{"theme":"x","mcpServers":{"docs":{"command":"d"}}}',
    "tabs, no final newline": b'{\n\t"mcpServers": {\n\t\t"docs": {}\n\t}\n}',
    "empty object": b"{}\n",
    "unicode": '{\n  "name": "café ☕"\n}\n'.encode(),
    "jsonc": JSONC.encode(),
    "trailing comma jsonc": b'{\n  "theme": "x", // t\n}\n',
}


@pytest.mark.parametrize("name", sorted(JSON_CASES))
def test_json_configs_round_trip_byte_for_byte(tmp_path: Path, name: str) -> None:
    json_round_trip(tmp_path / "settings.json", JSON_CASES[name])


def test_json_hooks_round_trip_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = JSONC.replace('"theme"', '"hooks": {"AfterTool": []},\n  "theme"').encode()
    path.write_bytes(original)
    entry = {"matcher": ".*", "hooks": [{"type": "command", "command": "ecc hook --harness g"}]}
    edit_hooks_file(path, "settings", "g", {"BeforeTool": entry}, "install", False)
    assert "// the docs server" in path.read_text()
    assert "ecc hook --harness g" in path.read_text()
    edit_hooks_file(path, "settings", "g", {"BeforeTool": entry}, "uninstall", False)
    assert path.read_bytes() == original


def test_jsonc_that_cannot_be_edited_safely_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"a": 1 /* unterminated\n')
    with pytest.raises(EccError, match="nothing was changed"):
        edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "install", False)
    assert path.read_text() == '{"a": 1 /* unterminated\n'


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text('aé"\\/ x', max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=2), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def json_files(draw: st.DrawFn) -> bytes:
    data = draw(
        st.dictionaries(st.sampled_from(["a", "theme", "mcpServers", "z"]), _VALUES, max_size=4)
    )
    if not isinstance(data.get("mcpServers", {}), dict):
        del data["mcpServers"]
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    text = json.dumps(data, indent=indent, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()) and indent is not None:
        text = "// settings\n" + text.replace("{\n", "{ /* c */\n", 1)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = text.replace("\n", eol) + draw(st.sampled_from(["", eol, eol * 2]))
    return text.encode()


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(original=json_files())
def test_generated_json_configs_round_trip(tmp_path: Path, original: bytes) -> None:
    json_round_trip(tmp_path / "settings.json", original)


# -- through the CLI: symlinks and directories -------------------------------------------------


def mcp(repo: Path, action: str, harness: str, *extra: str):
    return run_ecc("mcp", action, "--harness", harness, *extra, cwd=repo)


@pytest.mark.parametrize("harness", ["codex", "gemini"])
def test_install_then_uninstall_leaves_no_empty_directory(git_repo: Path, harness: str) -> None:
    assert mcp(git_repo, "install", harness).returncode == 0
    assert (git_repo / f".{harness}").is_dir()
    assert mcp(git_repo, "uninstall", harness).returncode == 0
    assert not (git_repo / f".{harness}").exists()
    hooks = run_ecc("hooks", "install", "--harness", harness, "--project", cwd=git_repo)
    assert hooks.returncode == 0, hooks.stderr
    done = run_ecc("hooks", "uninstall", "--harness", harness, "--project", cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert not (git_repo / f".{harness}").exists()


def test_a_directory_the_user_keeps_things_in_stays(git_repo: Path) -> None:
    (git_repo / ".codex").mkdir()
    (git_repo / ".codex" / "notes.md").write_text("mine\n")
    assert mcp(git_repo, "install", "codex").returncode == 0
    assert mcp(git_repo, "uninstall", "codex").returncode == 0
    assert (git_repo / ".codex" / "notes.md").read_text() == "mine\n"


def test_a_symlink_inside_the_project_is_edited_through(git_repo: Path) -> None:
    (git_repo / "config").mkdir()
    target = git_repo / "config" / "mcp.json"
    original = b'{\n  "mcpServers": {}\n}\n'
    target.write_bytes(original)
    (git_repo / ".mcp.json").symlink_to("config/mcp.json")
    done = mcp(git_repo, "install", "claude")
    assert done.returncode == 0, done.stderr
    assert (git_repo / ".mcp.json").is_symlink()
    assert SERVER in json.loads(target.read_text())["mcpServers"]
    assert mcp(git_repo, "uninstall", "claude").returncode == 0
    assert (git_repo / ".mcp.json").is_symlink()
    assert target.exists()


def test_a_symlink_out_of_the_project_is_refused(git_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}\n")
    (git_repo / ".mcp.json").symlink_to(outside)
    done = mcp(git_repo, "install", "claude")
    assert done.returncode != 0
    assert str(git_repo / ".mcp.json") in done.stderr and str(outside) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert outside.read_text() == "{}\n" and (git_repo / ".mcp.json").is_symlink()


def test_a_user_config_symlinked_to_dotfiles_is_edited_through(
    git_repo: Path, isolated_env: Path, tmp_path: Path
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "config.toml").write_bytes(CASES["crlf"])
    (isolated_env / ".codex").mkdir()
    (isolated_env / ".codex" / "config.toml").symlink_to(dotfiles / "config.toml")
    assert mcp(git_repo, "install", "codex", "--scope", "user").returncode == 0
    assert "[mcp_servers.ecc-memory]" in (dotfiles / "config.toml").read_text()
    assert (isolated_env / ".codex" / "config.toml").is_symlink()
    assert mcp(git_repo, "uninstall", "codex", "--scope", "user").returncode == 0
    assert (dotfiles / "config.toml").read_bytes() == CASES["crlf"]
    assert (isolated_env / ".codex" / "config.toml").is_symlink()


def test_gemini_settings_with_comments_are_edited_through_the_cli(git_repo: Path) -> None:
    settings_file = git_repo / ".gemini" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(JSONC)
    done = mcp(git_repo, "install", "gemini")
    assert done.returncode == 0, done.stderr
    assert "// the docs server" in settings_file.read_text()
    assert mcp(git_repo, "uninstall", "gemini").returncode == 0
    assert settings_file.read_text() == JSONC


@pytest.mark.parametrize(
    "original",
    [
        b'[mcp_servers]\necc-memory = { command = "/old/ecc-memory-mcp" }\n\n[tools]\nweb = true\n',
        b'mcp_servers.ecc-memory.command = "/old"\n\n[tools]\nweb = true\n',
        b'[mcp_servers.ecc-memory]\ncommand = "/old"\n\n[mcp_servers.ecc-memory.env]\nA = "1"\n',
    ],
)
def test_an_entry_written_another_way_is_replaced_and_removed(
    tmp_path: Path, original: bytes
) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(original)
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
    parsed = tomllib.loads(path.read_text())
    assert parsed["mcp_servers"][SERVER] == ENTRY
    assert parsed.get("tools", {"web": True}) == {"web": True}
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "uninstall", False)
    assert SERVER not in tomllib.loads(path.read_text() if path.exists() else "").get(
        "mcp_servers", {}
    )


def test_a_stale_entry_is_replaced_in_ecc_form_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    original = b'model = "o3"\n\n[profiles.fast]\nx = 1\n'
    path.write_bytes(original)
    stale = {**ENTRY, "command": "/old/ecc-memory-mcp"}
    edit_mcp_toml(path, "Codex config file", "mcp_servers", stale, "install", False)
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "install", False)
    text = path.read_text()
    assert text.count("[mcp_servers.ecc-memory]") == 1 and "/old/" not in text
    edit_mcp_toml(path, "Codex config file", "mcp_servers", ENTRY, "uninstall", False)
    assert path.read_bytes() == original


HOOK = {"matcher": ".*", "hooks": [{"type": "command", "command": "ecc hook --harness g"}]}
_GROUPS = st.lists(
    st.fixed_dictionaries(
        {"matcher": st.sampled_from(["*", "Bash"]), "hooks": st.just([{"command": "mine"}])}
    ),
    max_size=2,
)


@st.composite
def hooks_files(draw: st.DrawFn) -> bytes:
    data: dict = {}
    if draw(st.booleans()):
        data["theme"] = "x"
    if draw(st.booleans()):
        data["hooks"] = draw(st.dictionaries(st.sampled_from(["BeforeTool", "AfterTool"]), _GROUPS))
        data["hooks"] = {k: v for k, v in data["hooks"].items() if v} or {"AfterTool": []}
    indent = draw(st.sampled_from([None, 2, 4]))
    text = json.dumps(data, indent=indent)
    if indent and draw(st.booleans()):
        text = text.replace("{\n", "{\n" + " " * indent + "// settings\n", 1)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return (text.replace("\n", eol) + draw(st.sampled_from(["", eol]))).encode()


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(original=hooks_files())
def test_generated_hook_settings_round_trip(tmp_path: Path, original: bytes) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(original)
    edit_hooks_file(path, "settings", "g", {"BeforeTool": HOOK}, "install", False)
    assert parse(path.read_text())[0].value["hooks"]["BeforeTool"][-1] == HOOK
    edit_hooks_file(path, "settings", "g", {"BeforeTool": HOOK}, "uninstall", False)
    if parse(original.decode())[0].value:
        assert path.read_bytes() == original
    else:
        assert not path.exists()


def test_a_linked_project_directory_inside_the_project_is_used(git_repo: Path) -> None:
    (git_repo / "config" / "codex").mkdir(parents=True)
    (git_repo / ".codex").symlink_to("config/codex")
    assert mcp(git_repo, "install", "codex").returncode == 0
    assert (git_repo / "config" / "codex" / "config.toml").is_file()
    assert mcp(git_repo, "uninstall", "codex").returncode == 0
    assert (git_repo / ".codex").is_symlink()


def test_a_file_with_comments_is_never_deleted_with_them(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = '{\n  // my servers\n  "mcpServers": {}\n}\n'
    path.write_text(original)
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "install", False)
    # the emptied container sits beside the comment: kept, empty, so the file comes back whole
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "uninstall", False)
    assert path.read_text() == original
    path.write_text('{\n  "mcpServers": {\n    "ecc-memory": {} // mine\n  }\n}\n')
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "uninstall", False)
    assert "// mine" in path.read_text()
    assert parse(path.read_text())[0].value == {"mcpServers": {}}
    path.write_text('{\n  "mcpServers": {\n    "ecc-memory": {/* inside */}\n  }\n}\n')
    with pytest.raises(EccError, match="comments this edit would not keep"):
        edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "uninstall", False)
    assert "/* inside */" in path.read_text()
    path.write_text('// mine\n{\n  "theme": "x"\n}\n')
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "install", False)
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "uninstall", False)
    assert path.read_text() == '// mine\n{\n  "theme": "x"\n}\n'


def test_a_byte_order_mark_and_duplicate_keys_are_handled(tmp_path: Path) -> None:
    json_round_trip(tmp_path / "settings.json", '\ufeff{\n  "a": 1\n}\n'.encode())
    path = tmp_path / "dup.json"
    path.write_text('{"a": 1, "a": 2}')
    edit_mcp_json(path, "settings file", "mcpServers", ENTRY, "install", False)
    assert json.loads(path.read_text())["a"] == 2


def test_dates_and_unusual_values_round_trip(tmp_path: Path) -> None:
    toml_round_trip(tmp_path / "config.toml", b"when = 1979-05-27T07:32:00Z\n[t]\nx = inf\n")


def test_an_object_holding_only_comments_round_trips(tmp_path: Path) -> None:
    installed = json_round_trip(tmp_path / "s.json", b"{\n  // my settings go here\n}\n")
    assert installed.endswith("}\n  // my settings go here\n}\n")
