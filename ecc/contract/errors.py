"""The one exception type the CLI turns into ``Error: <message>`` and exit 1."""

from __future__ import annotations


class EccError(Exception):
    """A refusal or failure that is the user's to fix; its message is shown as is.

    ``exit_code`` lets a subsystem keep a documented exit status (the memory CLI uses 2 for
    validation errors, as the reference does).
    """

    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code

    @property
    def message(self) -> str:
        return str(self)


class ConfigError(EccError):
    """The configuration could not be read or is invalid."""
