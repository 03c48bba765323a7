"""Semantic recall through the real CLI: ``ecc memory save`` then ``ecc memory search
--semantic``, the ``semantic`` ranker of the ecc-semantic plugin, its embeddings beside the index,
and the exact search unchanged whenever no ranker is asked for."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import git, run_ecc

QUERY = "sign-in problems"
MEMORIES = {
    # relevant, sharing no word with the query
    "auth": ("Authentication fails after token expiry",
             "Users get logged out: the authentication token is not refreshed when the session "
             "expires. Refresh it in the auth middleware."),
    "login": ("Users cannot log in after a password reset",
              "The login form rejects the new password until the cache of credentials expires."),
    # irrelevant, sharing the word "problems"
    "ci": ("Known problems with the CI cache",
           "The CI cache gets corrupted; clear it weekly when builds show problems."),
    "deploy": ("Deploy problems on Fridays",
               "Never deploy on Friday: rollback problems are common."),
    # unrelated
    "db": ("Database migrations", "Migrations must be reversible and reviewed before merging."),
}  # fmt: skip
TITLES = {title: name for name, (title, _) in MEMORIES.items()}


def save(repo: Path, title: str, body: str) -> str:
    out = run_ecc("memory", "save", "--title", title, "--stdin", "--json", cwd=repo, input=body)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["memory"]["id"]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for title, body in MEMORIES.values():
        save(repo, title, body)
    return repo


def search(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    out = run_ecc("memory", "search", *args, "--json", cwd=repo, env=env, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def names(result: dict) -> list[str]:
    return [TITLES[item["memory"]["title"]] for item in result["results"]]


def cached_digests(home: Path) -> int:
    path = home / ".cache" / "ecc" / "memory-index" / "semantic-embeddings.sqlite3"
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM vectors").fetchone()[0]


def test_semantic_recall_brings_the_relevant_memories_up(vault: Path) -> None:
    exact = search(vault, QUERY)
    assert names(exact) == ["ci", "deploy"] or names(exact) == ["deploy", "ci"]
    assert "ranker" not in exact and all("similarity" not in item for item in exact["results"])

    ranked = search(vault, "--semantic", QUERY)
    assert ranked["ranker"] == "semantic"
    assert set(names(ranked)[:2]) == {"auth", "login"}, names(ranked)
    assert set(names(ranked)[2:]) == {"ci", "deploy"}  # exact matches stay, below; "db" is out
    similarities = [item["similarity"] for item in ranked["results"]]
    assert similarities == sorted(similarities, reverse=True)
    scores = {TITLES[item["memory"]["title"]]: item["score"] for item in ranked["results"]}
    assert scores["auth"] == 0 and scores["ci"] > 0  # the exact score is shown as it was

    limited = search(vault, "--semantic", "--limit", "1", QUERY)
    assert names(limited) == names(ranked)[:1]


def test_the_human_output_shows_the_similarity(vault: Path) -> None:
    out = run_ecc("memory", "search", "--semantic", QUERY, cwd=vault, timeout=180)
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert "Authentication fails" in first or "log in" in first
    assert "(score 0, similarity 0." in first


def test_without_a_ranker_the_output_is_byte_identical(vault: Path, isolated_env: Path) -> None:
    def outputs(env: dict[str, str] | None = None) -> list[tuple[int, str, str]]:
        runs = [run_ecc("memory", "search", QUERY, *more, cwd=vault, env=env)
                for more in ([], ["--json"], ["--limit", "1"])]  # fmt: skip
        return [(out.returncode, out.stdout, out.stderr) for out in runs]

    plain = outputs()  # the plugin installed, no ranker configured
    assert outputs({"ECC_PLUGINS": "files"}) == plain  # the plugin left out, as if uninstalled
    config = isolated_env / ".config" / "ecc" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[memory]\nranker = "semantic"\n', encoding="utf-8")
    assert outputs({"ECC__MEMORY__RANKER": ""}) == plain  # configured, then turned off
    assert "similarity" not in "".join(out[1] for out in plain)
    # no ranker ran, so nothing was embedded
    cache = isolated_env / ".cache" / "ecc" / "memory-index"
    assert not (cache / "semantic-embeddings.sqlite3").exists()
    assert outputs() != plain  # and the configured ranker does change them


def test_asking_for_a_ranker_that_is_not_there_is_one_line(vault: Path) -> None:
    out = run_ecc("memory", "search", "--semantic", QUERY, cwd=vault, env={"ECC_PLUGINS": "files"})
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("Error: No memory ranker named 'semantic' is installed")
    assert "pip install ecc-semantic" in out.stderr


def test_config_chooses_the_ranker(vault: Path, isolated_env: Path) -> None:
    config = isolated_env / ".config" / "ecc" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[memory]\nranker = "semantic"\n', encoding="utf-8")
    ranked = search(vault, QUERY)
    assert ranked["ranker"] == "semantic"
    assert set(names(ranked)[:2]) == {"auth", "login"}


def test_embeddings_are_cached_and_refresh_with_the_vault(vault: Path, isolated_env: Path) -> None:
    search(vault, "--semantic", QUERY)
    assert cached_digests(isolated_env) == len(MEMORIES)

    save(vault, "OAuth sign in loop", "The SSO provider redirects back to the sign in page.")
    ranked = search(vault, "--semantic", QUERY)
    assert cached_digests(isolated_env) == len(MEMORIES) + 1  # the new memory alone embedded
    assert "OAuth sign in loop" in [item["memory"]["title"] for item in ranked["results"]]

    [removed] = [path for path in vault.rglob("*.md") if "Deploy problems" in path.read_text()]
    removed.unlink()
    search(vault, "--semantic", QUERY)
    assert cached_digests(isolated_env) == len(MEMORIES)  # the removed memory's vector dropped
