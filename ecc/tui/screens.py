"""The dashboard's dialogs: new session, confirmation (and merge), filter prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from ecc.runtime.terminal import sanitize

DIALOG_CSS = """
ModalScreen {
    align: center middle;
}
.dialog {
    width: 76;
    height: auto;
    max-height: 90%;
    border: thick $accent;
    background: $surface;
    padding: 1 2;
}
.dialog.danger {
    border: thick $error;
}
.dialog Label.title {
    text-style: bold;
    margin-bottom: 1;
}
.dialog .buttons {
    height: auto;
    margin-top: 1;
    align-horizontal: right;
}
.dialog .buttons Button {
    margin-left: 2;
}
.dialog Input, .dialog Select {
    margin-bottom: 1;
}
"""


class ConfirmScreen(ModalScreen[bool]):
    """Ask before a destructive action: ``y``/Enter on the confirm button, ``n``/Esc cancels."""

    DEFAULT_CSS = DIALOG_CSS
    SCOPED_CSS = False  # the rules style the screen itself, not only its descendants
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,n", "cancel", "Cancel"),
        Binding("y", "confirm", "Confirm"),
    ]

    def __init__(
        self,
        title: str,
        body: Text | str,
        *,
        confirm_label: str = "Confirm",
        allowed: bool = True,
        danger: bool = True,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.body = body if isinstance(body, Text) else Text(sanitize(body))
        self.confirm_label = confirm_label
        self.allowed = allowed
        self.danger = danger

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog danger" if self.danger else "dialog"):
            yield Label(Text(self.title_text), classes="title")
            yield Static(self.body, id="confirm-body")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(
                    self.confirm_label,
                    id="confirm",
                    variant="error" if self.danger else "primary",
                    disabled=not self.allowed,
                )

    def on_mount(self) -> None:
        self.query_one("#confirm" if self.allowed else "#cancel", Button).focus()

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        if self.allowed:
            self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


class PromptScreen(ModalScreen[str | None]):
    """One line of text (the filter): Enter accepts, Esc cancels."""

    DEFAULT_CSS = DIALOG_CSS
    SCOPED_CSS = False  # the rules style the screen itself, not only its descendants
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.title_text), classes="title")
            yield Input(self.value, placeholder=self.placeholder, id="prompt")

    @on(Input.Submitted, "#prompt")
    def accept(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)


class NewSessionScreen(ModalScreen[dict[str, Any] | None]):
    """Harness, profile, task, directory and worktree of a new session."""

    DEFAULT_CSS = DIALOG_CSS
    SCOPED_CSS = False  # the rules style the screen itself, not only its descendants
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        harnesses: list[str],
        profiles: list[str],
        *,
        default_harness: str | None,
        default_profile: str | None,
        directory: Path,
        use_worktree: bool,
    ) -> None:
        super().__init__()
        self.harnesses = harnesses
        self.profiles = profiles
        self.default_harness = default_harness
        self.default_profile = default_profile
        self.directory = directory
        self.use_worktree = use_worktree

    def compose(self) -> ComposeResult:
        harness_value = (
            self.default_harness if self.default_harness in self.harnesses else Select.NULL
        )
        profile_value = (
            self.default_profile if self.default_profile in self.profiles else Select.NULL
        )
        with Vertical(classes="dialog"):
            yield Label("New session", classes="title")
            yield Select(
                [(Text(sanitize(name)), name) for name in self.harnesses],
                prompt="Harness (default: profile, config, or detected)",
                value=harness_value,
                id="harness",
            )
            yield Select(
                [(Text(sanitize(name)), name) for name in self.profiles],
                prompt="Profile (none)",
                value=profile_value,
                id="profile",
            )
            yield Input(placeholder="Task", id="task")
            yield Input(str(self.directory), placeholder="Project directory", id="directory")
            yield Checkbox("Run in a fresh git worktree", self.use_worktree, id="worktree")
            yield Static("", id="new-error")
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Create", id="create", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#task", Input).focus()

    def values(self) -> dict[str, Any]:
        harness = self.query_one("#harness", Select).value
        profile = self.query_one("#profile", Select).value
        return {
            "harness": harness if isinstance(harness, str) else None,
            "profile": profile if isinstance(profile, str) else None,
            "task": self.query_one("#task", Input).value.strip(),
            "cwd": Path(self.query_one("#directory", Input).value.strip() or ".").expanduser(),
            "use_worktree": self.query_one("#worktree", Checkbox).value,
        }

    @on(Button.Pressed, "#create")
    @on(Input.Submitted)
    def create(self) -> None:
        values = self.values()
        if not values["task"]:
            self.query_one("#new-error", Static).update(Text("The task must not be empty.", "red"))
            self.query_one("#task", Input).focus()
            return
        self.dismiss(values)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
