"""Where ``ecc memory save/handoff --body-file`` may read from.

A body file becomes a memory that other agents and teammates read, so a slip of the path (the
user's or an agent's) must not publish ``/etc/shadow`` or ``~/.aws/credentials``. A body file
must resolve (symlinks followed) to a place inside the current repository, the working
directory's tree or the home directory, and not into one of the well-known secret stores under
home or ecc's own config directory (tokens). Anything else is still one deliberate step away:
pipe it with ``--stdin``. The vault's credential-shape check stays the backstop for the content.
"""

from __future__ import annotations

import os

# Under the home directory: where credentials and keys conventionally live.
SECRET_STORES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".config/gcloud",
    ".config/gh",
    ".local/share/keyrings",
    ".netrc",
    ".pgpass",
    ".git-credentials",
)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _allowed_roots() -> list[str]:
    from ecc.runtime import paths

    project = paths.find_project_root()
    candidates = [os.getcwd(), os.path.expanduser("~"), str(project) if project else ""]
    # The file system root is no boundary: a working directory or HOME of "/" allows nothing.
    return [real for real in map(os.path.realpath, filter(None, candidates)) if real != os.sep]


def _secret_store(real: str) -> str | None:
    """The secret store ``real`` lies in, as the user would name it, or None."""
    from ecc.runtime import paths

    home = os.path.expanduser("~")
    named = {f"~/{store}": os.path.join(home, store) for store in SECRET_STORES}
    named["the ecc config directory"] = str(paths.config_dir())
    for label, location in named.items():
        if _inside(real, os.path.realpath(location)):
            return label
    return None


def check_body_file(path: str) -> None:
    """Refuse a ``--body-file`` that is not plainly the user's to share (see the module)."""
    from ecc.contract.errors import EccError

    real = os.path.realpath(path)
    shown = path if real == path else f"{path} (resolves to {real})"
    hint = "to share it anyway, pipe it in with --stdin."
    store = _secret_store(real)
    if store is not None:
        raise EccError(
            f"Refusing --body-file {shown}: it is in {store}, where secrets live; {hint}"
        )
    if not any(_inside(real, root) for root in _allowed_roots()):
        raise EccError(
            f"Refusing --body-file {shown}: it is outside this repository and your home "
            f"directory; {hint}"
        )
