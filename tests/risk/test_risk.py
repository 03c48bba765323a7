"""Risk scoring: the reference's acceptance cases, its false positives, config thresholds,
scorer plugins and the ``ecc risk score`` command."""

from __future__ import annotations

import json

import pluggy
import pytest

from ecc.contract import hookspecs
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import RiskContribution, ToolCall
from ecc.observability.risk import action_for, assess
from ecc.runtime.config.model import Config
from ecc_plugins import heuristic
from tests.conftest import run_ecc


def manager(*plugins: object) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("ecc")
    pm.add_hookspecs(hookspecs)
    pm.register(heuristic, name="ecc.risk_scorers:heuristic")
    for index, plugin in enumerate(plugins):
        pm.register(plugin, name=f"ecc.risk_scorers:extra{index}")
    return pm


def score(tool: str, text: object, config: Config | None = None, **call: object):
    return assess(ToolCall(tool=tool, input=text, **call), config or Config(), manager().hook)


# Spec section 4.3: (tool, input, score, action), the spec's action names.
ACCEPTANCE = [
    ("Write", "Update .env.production with rotated API token", 0.40, "review"),
    ("Edit", "Apply the same replacement across src/**/*.rs", 0.35, "review"),
    ("Bash", "rm -f /tmp/ecc-temp.txt", 0.60, "require_confirmation"),
    ("Bash", "rm -rf . && git push --force origin main", 1.00, "block"),
    ("Read", "first", 0.05, "allow"),
    ("Write", "second", 0.15, "allow"),
    ("Bash", "third", 0.20, "allow"),
    ("Read", "Read src/lib.rs", 0.05, "allow"),
    ("Edit", "Edit src/config.ts", 0.10, "allow"),
    ("Bash", "git push --force", 0.95, "block"),
    ("Bash", "git push origin main", 0.55, "review"),
    ("Edit", "Cargo.toml", 0.25, "allow"),
    ("Write", "package.json", 0.30, "allow"),
    ("Bash", "git reset --hard HEAD~1", 0.65, "require_confirmation"),
    ("Bash", "rm -rf node_modules", 0.65, "require_confirmation"),
    ("Bash", "psql -c 'DROP TABLE users'", 0.65, "require_confirmation"),
    ("Bash", "find . -name '*.log' -delete", 0.45, "review"),
    ("MultiEdit", "src/auth/login.ts", 0.40, "review"),
    ("Bash", "cat ~/.ssh/id_rsa", 0.45, "review"),
    ("Grep", "TODO", 0.05, "allow"),
    ("Bash", "echo hi > /dev/null && rm -rf /", 1.00, "block"),
]


@pytest.mark.parametrize(("tool", "text", "expected", "action"), ACCEPTANCE)
def test_spec_acceptance_cases(tool: str, text: str, expected: float, action: str) -> None:
    result = score(tool, text)
    assert result.score == pytest.approx(expected)
    assert result.action == action


def test_reasons_name_each_component() -> None:
    assert any("sensitive file" in r for r in score("Write", ".env.production").reasons)
    assert any("blast radius" in r for r in score("Edit", "across src/**/*.rs").reasons)
    assert any("irreversible" in r for r in score("Bash", "rm -f /tmp/x").reasons)
    block = score("Bash", "rm -rf . && git push --force origin main")
    assert len(block.contributions) == 3  # base, shared state, destructive
    assert all(c.scorer == "heuristic" for c in block.contributions)


def test_boundary_sums_use_binary_doubles_like_the_reference() -> None:
    # 0.20 + 0.40 = 0.6000000000000001 >= 0.60; 0.10 + 0.25 = 0.35 >= 0.35
    assert score("Bash", "rm -f x").action == "require_confirmation"
    assert score("Edit", "src/**/*.rs").action == "review"


# Spec section 8.2: the reference's substring false positives and odd tiers.
@pytest.mark.parametrize(
    ("tool", "text", "at_most"),
    [
        ("Read", "author notes", 0.05),  # "auth" in "author"
        ("Read", "src/tokenizer.py", 0.05),  # "token" in "tokenizer"
        ("Read", "docs/keyboard.keyboard", 0.05),  # ".key" in ".keyboard"
        ("Bash", "echo 'update the schema docs'", 0.20),  # "schema" in prose
        ("Bash", "grep -n '/* comment' src/a.c", 0.20),  # "/*" inside a quoted pattern
    ],
)
def test_false_positives_of_the_reference_are_fixed(tool: str, text: str, at_most: float) -> None:
    assert score(tool, text).score <= at_most + 1e-9


def test_rm_rf_of_a_subdirectory_is_not_a_shared_state_wipe() -> None:
    assert score("Bash", "rm -rf /tmp/x").score == pytest.approx(0.65)  # reference: block
    assert score("Bash", "rm -rf /").action == "block"


def test_split_and_reordered_rm_flags_score_like_rm_rf() -> None:
    expected = score("Bash", "rm -rf build").score
    for variant in (
        "rm -r -f build",
        "rm -fr build",
        "rm --recursive --force build",
        "rm -R build",
    ):
        assert score("Bash", variant).score == pytest.approx(expected), variant


def test_force_with_lease_is_safer_than_force() -> None:
    lease = score("Bash", "git push --force-with-lease origin feature")
    force = score("Bash", "git push --force origin feature")
    assert lease.score < force.score
    assert force.action == "block"


def test_words_without_trailing_space_and_wrappers_are_seen() -> None:
    assert score("Bash", "shred secrets.txt").score >= 0.65
    assert score("Bash", "truncate -s 0 app.log").score >= 0.65
    assert score("Bash", "sudo rm -rf /").action == "block"
    assert score("Bash", "bash -c 'rm -rf /'").action == "block"
    # many files (find/xargs) + destructive: a mass deletion
    assert score("Bash", "find . -name x | xargs rm -rf").action == "block"


def test_structured_input_scores_the_command_and_paths_not_file_content() -> None:
    harmless = score("Write", {"file_path": "notes.md", "content": "never run rm -rf / here"})
    assert harmless.score == pytest.approx(0.15)
    secret = score("Write", {"file_path": "/repo/.env", "content": "A=1"})
    assert secret.score == pytest.approx(0.40)
    assert score("Bash", {"command": "rm -rf .", "description": "clean"}).action == "block"


def test_other_harnesses_tool_names_get_the_shell_base() -> None:
    gemini = score("run_shell_command", {"command": "rm -rf ."}, kind="shell")
    assert gemini.action == "block"
    codex = score("exec_command", {"cmd": ["rm", "-f", "x"]})
    assert codex.score == pytest.approx(0.60)
    patch = "*** Begin Patch\n*** Delete File: src/main.py\n*** End Patch\n"
    assert score("apply_patch", {"patch": patch}, kind="edit").score == pytest.approx(0.50)


def test_thresholds_come_from_config() -> None:
    config = Config.model_validate({"risk": {"review": 0.1, "require_confirmation": 0.3}})
    assert score("Bash", "third", config).action == "review"
    assert score("Bash", "git push origin main", config).action == "require_confirmation"
    strict = Config.model_validate(
        {"risk": {"review": 0.3, "require_confirmation": 0.4, "block": 0.5}}
    )
    assert score("Bash", "git push origin main", strict).action == "block"
    assert action_for(0.0, Config().risk) == "allow"


def test_every_scorer_counts_and_a_broken_one_is_reported_not_fatal() -> None:
    class Bonus:
        @hookimpl
        def ecc_score_tool_call(self, call: ToolCall) -> list[RiskContribution]:
            return [RiskContribution(0.5, "team policy: no deploys", "")]

    class Broken:
        @hookimpl
        def ecc_score_tool_call(self, call: ToolCall) -> list[RiskContribution]:
            raise RuntimeError("boom")

    result = assess(ToolCall("Bash", "deploy"), Config(), manager(Bonus(), Broken()).hook)
    assert result.score == pytest.approx(0.70)
    assert "team policy: no deploys" in result.reasons
    assert any(c.scorer == "extra0" for c in result.contributions)
    assert result.errors and "boom" in result.errors[0]


def test_negative_contributions_and_clamping() -> None:
    class Trusted:
        @hookimpl
        def ecc_score_tool_call(self) -> list[RiskContribution]:
            return [RiskContribution(-1.0, "trusted", "")]

    result = assess(ToolCall("Bash", "rm -rf /"), Config(), manager(Trusted()).hook)
    assert result.score == 0.0
    assert result.action == "allow"


def test_cli_score_json_and_text() -> None:
    done = run_ecc("risk", "score", "--tool", "Bash", "--input", "rm -rf / ", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["action"] == "block"
    assert data["score"] == 1.0
    assert any("irreversible" in reason for reason in data["reasons"])
    text = run_ecc("risk", "score", "--tool", "Read", "--input", "author notes")
    assert "action: allow" in text.stdout
    structured = run_ecc(
        "risk", "score", "--tool", "Bash", "--input", '{"command": "git push -f"}', "--json"
    )
    assert json.loads(structured.stdout)["action"] == "block"


def test_cli_uses_configured_thresholds_and_disabled_scorers() -> None:
    done = run_ecc(
        "-c",
        "risk.review=0.3",
        "-c",
        "risk.require_confirmation=0.4",
        "-c",
        "risk.block=0.5",
        "risk",
        "score",
        "--tool",
        "Bash",
        "--input",
        "git push origin main",
    )
    assert "action: block" in done.stdout
    off = run_ecc(
        "risk",
        "score",
        "--tool",
        "Bash",
        "--input",
        "rm -rf /",
        "--json",
        env={"ECC__RISK__DISABLED_SCORERS": '["heuristic"]'},
    )
    assert json.loads(off.stdout)["score"] == 0.0
