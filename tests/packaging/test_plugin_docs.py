"""The plugin-author reference covers every family: each entry-point group of the contract has
its own section in docs/plugin-hooks.md and a row in its table of groups, and the way to start
a plugin (``ecc plugins new adapter``, ``ecc install``) is named there."""

from __future__ import annotations

import re

import pytest

from ecc.contract.hookspecs import GROUPS
from tests.conftest import REPO

DOC = (REPO / "docs" / "plugin-hooks.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_every_group_has_a_section_and_a_row(group: str) -> None:
    assert re.search(rf"^## .+ \(`{re.escape(group)}`\)$", DOC, re.M), f"no section for {group}"
    assert re.search(rf"^\| `{re.escape(group)}` \|", DOC, re.M), f"no table row for {group}"


def test_it_says_how_to_start_and_install_a_plugin() -> None:
    assert "ecc plugins new adapter" in DOC and "ecc install" in DOC
