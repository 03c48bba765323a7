"""What every command uses to print, and its ``--json`` option (the printing itself lives in
:mod:`ecc.runtime.terminal`, which the remote client's commands print through too)."""

from __future__ import annotations

import click

from ecc.runtime.terminal import emit_json, say

__all__ = ["emit_json", "json_option", "say"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
