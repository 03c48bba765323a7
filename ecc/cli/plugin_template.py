"""``ecc plugins new adapter NAME``: write a third-party adapter package from the template.

The template (``ecc/cli/templates/adapter``, package data) is a small working adapter with its
tests; the files are written into a temporary sibling directory first and renamed into place,
so a failure leaves nothing half-written.
"""

from __future__ import annotations

import re
import shutil
import string
import tempfile
from pathlib import Path

from ecc import __version__
from ecc.contract.errors import EccError

TEMPLATES = Path(__file__).resolve().parent / "templates"
NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def adapter_values(name: str, program: str | None) -> dict[str, str]:
    """The template's placeholders for harness ``name`` (refused unless a plain slug)."""
    if not NAME.fullmatch(name) or len(name) > 40:
        raise EccError(f"invalid adapter name {name!r}: use lowercase letters, digits and '-'")
    program = program or name
    if not PROGRAM.fullmatch(program):
        raise EccError(f"invalid program name {program!r}: a command name, not a path")
    major, minor = (int(part) for part in __version__.split(".")[:2])
    ceiling = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return {
        "name": name,
        "module": "ecc_adapter_" + name.replace("-", "_"),
        "program": program,
        "core_floor": f"{major}.{minor}",
        "core_ceiling": ceiling,
    }


def write_adapter(name: str, directory: Path | None, program: str | None) -> Path:
    """Write the package for ``name`` into ``directory`` (default ``./ecc-adapter-NAME``)."""
    values = adapter_values(name, program)
    target = (directory or Path(f"ecc-adapter-{name}")).absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise EccError(f"{target} already exists and is not empty")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".ecc-new-", dir=target.parent))
    try:
        source = TEMPLATES / "adapter"
        for template in sorted(source.rglob("*.tmpl")):
            relative = template.relative_to(source).with_suffix("")  # drop .tmpl
            parts = [values["module"] if part == "package" else part for part in relative.parts]
            text = string.Template(template.read_text(encoding="utf-8")).substitute(values)
            out = staging.joinpath(*parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        if target.exists():
            target.rmdir()  # empty, checked above
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
