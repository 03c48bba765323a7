"""Shell patterns the reference's four components cannot see, for the ``heuristic`` scorer.

Each is a *flow* (what a pipe, a substitution or a file carries from one command to another) or
a one-liner whose risk is inside a quoted program, so words alone never showed them:

* **download and execute** (block): ``curl … | sh``, ``wget -qO- … | sudo bash``,
  ``sh -c "$(curl …)"``, ``bash <(curl …)``, ``eval "$(curl …)"``, ``curl -o f … && sh f``:
  code from the network runs before anyone has read it;
* **secrets to the network** (block): ``cat ~/.ssh/id_rsa | curl -d @- …``, ``printenv | nc …``,
  ``curl -d @~/.ssh/id_rsa``, ``curl -F f=@.env``, ``wget --post-file .env``,
  ``scp ~/.ssh/id_rsa host:``: a credential leaves the machine and cannot be taken back;
* **decode and execute** (require_confirmation): ``echo … | base64 -d | sh``, ``xxd -r``,
  ``openssl enc -d``, ``eval "$(… | base64 -d)"``, ``python -c "exec(b64decode(…))"``: what
  runs is hidden from whoever reviews the call, but it is local content a person can decode;
* **recursive permission or ownership changes** (``chmod -R``, ``chown -R``, ``chgrp -R``,
  ``setfacl -R``, ``chattr -R``) of ``/`` or ``/*`` (block: the system stops working) or of a
  home or top-level system directory (require_confirmation);
* **interpreter one-liners deleting trees** (``python -c`` with ``shutil.rmtree`` or removals in
  a loop, ``perl -e`` with ``rmtree``, ``node -e`` with a recursive ``fs.rm``, ``ruby -e`` with
  ``FileUtils.rm_rf``) are scored as the ``rm -rf`` they are: destructive, and a shared-state
  wipe when they name ``.``, ``/``, ``~`` or the working or home directory.

Look-alikes stay as they were: ``curl -o file url`` alone, ``base64 -d file > out``,
``chmod -R 755 ./build``, ``python -c "print(1)"``, ``cat .env.example``, a public key
(``id_rsa.pub``), ``ssh -i ~/.ssh/id_rsa host``, ``curl -d @payload.json …``, ``curl … | python3
-m json.tool``. Every check is a scan of words already split (:mod:`ecc_plugins.shellpipes`),
nested commands at most :data:`MAX_DEPTH` deep, so the time stays linear in the command.
"""

from __future__ import annotations

import os
import re

from ecc_plugins import riskcommands as commands
from ecc_plugins import shellpipes, shellwords
from ecc_plugins.shellpipes import Content, Stage

BLOCK, CONFIRM = 0.65, 0.40  # from a shell's 0.20: block (0.85) and require_confirmation (0.60)
DOWNLOAD_EXEC = (BLOCK, "runs code it downloads")
SECRET_TO_NETWORK = (BLOCK, "sends a secret or credential over the network")
DECODE_EXEC = (CONFIRM, "runs code it decodes, hidden from review")
PERMISSIONS_ROOT = (BLOCK, "changes permissions or ownership recursively across the system")
PERMISSIONS = (CONFIRM, "changes permissions or ownership recursively across a home or system dir")
MAX_DEPTH = 3

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"})
_INTERPRETERS = {  # family: (options taking a value, the options whose value is code)
    "python": ("cmWX", ("-c",)),
    "perl": ("eEIMm", ("-e", "-E")),
    "ruby": ("eIrC", ("-e",)),
    "node": ("epr", ("-e", "-p", "--eval", "--print")),
    "php": ("rdcf", ("-r",)),
    "lua": ("el", ("-e",)),
}
_NODE_LONG = frozenset({"--eval", "--print", "--require", "--import"})
_SENDERS = frozenset(
    {"nc", "ncat", "netcat", "socat", "telnet", "ssh", "mail", "mailx", "sendmail", "mutt"}
    | {"http", "https", "xh", "curl", "wget", "openssl"}
)
_COPIERS = {"scp": "cFiJloPS", "rsync": "eBfMT", "sftp": "bBcDFiJloPRsS"}
_REMOTE = re.compile(r"(?:[\w.-]{1,64}@)?[\w.-]{1,253}:|(?:rsync|scp|sftp)://")
_PERMISSION_PROGRAMS = {"chmod": "", "chown": "", "chgrp": "", "setfacl": "mMxX", "chattr": "v"}
_SYSTEM_DIRS = commands.names(
    "/etc /usr /bin /sbin /lib /lib32 /lib64 /var /boot /opt /home /root /srv /dev /proc /sys "
    "/run /snap /nix"
)
_HOME_WORDS = ("~", "$home", "${home}")
_RUNS_CODE = ("exec(", "eval(", "eval ", "Function(")
_DECODED = (
    "b64decode", "decodebytes", "unhexlify", "fromhex", "zlib.decompress", "codecs.decode",
    "decode_base64", "decode64", "atob(", "'base64'", '"base64"',
)  # fmt: skip
_FETCHED = ("urlopen", "requests.get", "urllib", "fetch(", "http.get", "https.get", "URI.open")


def scan(command: str, found: object) -> None:
    """Add what ``command`` does of the patterns above to ``found`` (the heuristic's findings:
    ``patterns`` gets ``(amount, reason)``; ``destructive`` and ``shared`` tree deletions)."""
    _Scan(found).command(command, 0)


class _Scan:
    def __init__(self, found: object) -> None:
        self.found = found
        self.downloaded: set[str] = set()  # files this command line downloads (curl -o f)

    def hit(self, pattern: tuple[float, str], detail: str) -> None:
        amount, reason = pattern
        self.found.patterns.append((amount, f"{reason} ({detail})"))  # type: ignore[attr-defined]

    def command(self, text: str, depth: int) -> dict[str, str]:
        """Check one command line; return what its output carries (kind: where from)."""
        if depth > MAX_DEPTH or not text.strip():
            return {}
        return self.content(shellpipes.parse(shellwords.words(text)), depth)

    def content(self, content: Content, depth: int) -> dict[str, str]:
        out: dict[str, str] = {}
        for pipeline in content:
            carried: dict[str, str] = {}
            for index, stage in enumerate(pipeline):
                made = self.stage(stage, carried if index else None, depth)
                carried = {} if stage.redirected else {**made, **carried}
            for kind, source in carried.items():
                out.setdefault(kind, source)
        return out

    def nested(self, content: Content | None, depth: int) -> dict[str, str]:
        return self.content(content, depth + 1) if content and depth < MAX_DEPTH else {}

    def in_words(self, words: list[str], depth: int) -> dict[str, str]:
        """What the command substitutions inside ``words`` print."""
        out: dict[str, str] = {}
        for word in words:
            for inner in shellpipes.substitutions(word):
                for kind, source in self.command(inner, depth + 1).items():
                    out.setdefault(kind, source)
        return out

    def executed(self, kinds: dict[str, str], runner: str) -> None:
        """``kinds`` reach a shell or interpreter as code."""
        if "download" in kinds:
            self.hit(DOWNLOAD_EXEC, f"{kinds['download']} … | {runner}")
        elif "decode" in kinds:
            self.hit(DECODE_EXEC, f"{kinds['decode']} … | {runner}")

    def stage(self, stage: Stage, piped: dict[str, str] | None, depth: int) -> dict[str, str]:
        """Check one stage (``piped``: what its stdin carries, None when nothing is piped in);
        return what its stdout carries."""
        made: dict[str, str] = {}
        for inner, at_program in stage.subs:
            kinds = self.nested(inner, depth)
            if at_program:
                self.executed(kinds, "$( … ) as a command")
            made.update(kinds)
        procs = [self.nested(proc, depth) for proc in stage.procs]
        if stage.group is not None:
            made.update(self.nested(stage.group, depth))
        words, env_dump = commands.strip_wrappers(stage.words)
        if env_dump:
            made.setdefault("secret", "env")
        if not words:
            return made
        if "$(" in words[0] or "`" in words[0]:
            self.executed(self.in_words(words[:1], depth), "$( … ) as a command")
        program = words[0].rsplit("/", 1)[-1].lower()
        args = words[1:]
        stdin = dict(piped or {})
        for name in stage.inputs:
            if commands.secret_file(name):
                stdin.setdefault("secret", name)
            if commands.normal(name) in self.downloaded:
                stdin.setdefault("download", f"{name} (downloaded)")
        if stage.herestrings:
            stdin.update(self.in_words(stage.herestrings, depth))
        if commands.normal(words[0]) in self.downloaded:
            self.hit(DOWNLOAD_EXEC, f"runs {words[0]}, downloaded first")
        family = commands.interpreter(program)
        if program in _SHELLS or family or program in {"source", ".", "eval"}:
            made.update(self.runner(program, family, args, stdin, procs, stage, depth))
            return made
        if program in _SENDERS or program == "xargs":
            self.sender(program, args, stdin, stage, depth)
        if program in _COPIERS:
            self.copier(program, args)
        if program in _PERMISSION_PROGRAMS:
            self.permissions(program, args)
        made.update(self.source(program, args, stage, depth))
        return made

    def runner(
        self,
        program: str,
        family: str,
        args: list[str],
        stdin: dict[str, str],
        procs: list[dict[str, str]],
        stage: Stage,
        depth: int,
    ) -> dict[str, str]:
        """A shell, an interpreter, ``source`` or ``eval``: what it runs as code; returns what
        a ``-c`` command it runs prints."""
        for kinds in procs:
            self.executed(kinds, f"{program} <( … )")
        if program == "eval":
            self.executed(self.command(" ".join(args), depth + 1), "eval")
            for inner, _ in stage.subs:
                self.executed(self.nested(inner, depth), "eval $( … )")
            return {}
        values, code_flags = _INTERPRETERS.get(family, ("oO", ()))
        found, operands = shellwords.options(args, values, _NODE_LONG)
        script = operands[0] if operands else None
        if program in {"source", "."}:
            if script == "/dev/stdin":
                self.executed(stdin, program)
            elif script is not None and commands.normal(script) in self.downloaded:
                self.hit(DOWNLOAD_EXEC, f"{program} {script}, downloaded first")
            return {}
        if program in _SHELLS and any(flag == "-c" for flag, _ in found):
            printed = self.command(script or "", depth + 1)
            self.executed(printed, f"{program} -c")
            return printed
        code = next(((f, v) for f, v in found if f in code_flags and v is not None), None)
        if code is not None:
            self.one_liner(family, program, code[1])
            self.executed(self.in_words([code[1]], depth), f"{program} {code[0]} $( … )")
            return {}
        if any(flag == "-m" for flag, _ in found):
            return {}
        if script is None or script in {"-", "/dev/stdin"} or any(f == "-s" for f, _ in found):
            self.executed(stdin, program)
        elif commands.normal(script) in self.downloaded:
            self.hit(DOWNLOAD_EXEC, f"{program} {script}, downloaded first")
        return {}

    def one_liner(self, family: str, program: str, code: str) -> None:
        """Code given on the command line: tree deletion, and code it downloads or decodes."""
        if any(word in code for word in _RUNS_CODE):
            if any(word in code for word in _DECODED):
                self.hit(DECODE_EXEC, f"{program} evaluates decoded code")
            if any(word in code for word in _FETCHED):
                self.hit(DOWNLOAD_EXEC, f"{program} evaluates code it fetches")
        what = commands.tree_deletion(family, code)
        if what is None:
            return
        found = self.found
        if found.destructive is None:  # type: ignore[attr-defined]
            found.destructive = f"{program} one-liner {what}"  # type: ignore[attr-defined]
        target = commands.root_target(code)
        if target is not None and found.shared is None:  # type: ignore[attr-defined]
            found.shared = f"{program} one-liner {what} of {target}"  # type: ignore[attr-defined]

    def sender(
        self, program: str, args: list[str], stdin: dict[str, str], stage: Stage, depth: int
    ) -> None:
        """A program that can send data somewhere: which secrets it sends."""
        if program == "xargs":  # stdin becomes the arguments of the command it runs
            command = [word for word in args if not word.startswith("-")]
            if command and command[0].rsplit("/", 1)[-1] in _SENDERS and "secret" in stdin:
                self.hit(SECRET_TO_NETWORK, f"{stdin['secret']} | xargs {command[0]}")
            return
        if program == "openssl" and (not args or args[0] != "s_client"):
            return
        reads_stdin = program not in {"curl", "wget"}
        if program == "curl":
            for flag, value in shellwords.options(args, commands.CURL_VALUES, commands.CURL_LONG)[
                0
            ]:
                if value is None:
                    continue
                uploads_stdin = flag in {"-T", "--upload-file"} and value in {"-", "."}
                if uploads_stdin or value.endswith(("@-", "<-")):
                    reads_stdin = True
                path = commands.uploaded(flag, value)
                if path and commands.secret_file(path):
                    self.hit(SECRET_TO_NETWORK, f"curl {flag} {value}")
                    return
        elif program == "wget":
            for flag, value in shellwords.options(args, commands.WGET_VALUES, commands.WGET_LONG)[
                0
            ]:
                if flag in {"--post-file", "--body-file"} and value:
                    if value in {"-", "/dev/stdin"}:
                        reads_stdin = True
                    elif commands.secret_file(value):
                        self.hit(SECRET_TO_NETWORK, f"wget {flag} {value}")
                        return
        if reads_stdin and "secret" in stdin:
            self.hit(SECRET_TO_NETWORK, f"{stdin['secret']} | {program}")
            return
        sent = self.in_words(args, depth)
        for inner, _ in stage.subs:
            sent.update(self.nested(inner, depth))
        if "secret" in sent:
            self.hit(SECRET_TO_NETWORK, f"{program} … $({sent['secret']})")

    def copier(self, program: str, args: list[str]) -> None:
        """``scp``/``rsync``/``sftp`` of a local secret to a remote host."""
        _, operands = shellwords.options(args, _COPIERS[program])
        remote = [op for op in operands if _REMOTE.match(op) and not op.startswith(("/", "."))]
        local = [op for op in operands if op not in remote]
        secret = next((op for op in local if commands.secret_file(op)), None)
        if remote and secret:
            self.hit(SECRET_TO_NETWORK, f"{program} {secret} {remote[-1]}")

    def permissions(self, program: str, args: list[str]) -> None:
        found, operands = shellwords.options(args, _PERMISSION_PROGRAMS[program])
        if not any(flag in {"-R", "--recursive"} for flag, _ in found):
            return
        home = os.path.expanduser("~").rstrip("/").lower()
        for operand in operands:
            lowered = operand.lower()
            target = lowered.rstrip("*").rstrip("/")
            if lowered.startswith("/") and not target:
                self.hit(PERMISSIONS_ROOT, f"{program} -R {operand}")
                return
            if target in _HOME_WORDS or target in _SYSTEM_DIRS or (home and target == home):
                self.hit(PERMISSIONS, f"{program} -R {operand}")
                return

    def source(self, program: str, args: list[str], stage: Stage, depth: int) -> dict[str, str]:
        """What a stage prints that matters downstream: downloads, decoded data, secrets."""
        made: dict[str, str] = {}
        if program in commands.DOWNLOADERS:
            if commands.downloads_to_stdout(program, args, self.downloaded):
                made["download"] = program
        elif commands.decodes(program, args):
            made["decode"] = f"{program} {'-r' if program == 'xxd' else '-d'}"
        if program in {"echo", "printf"}:
            made.update(self.in_words(args, depth))
        secret = commands.secret_output(program, args)
        if secret is None and program not in _SENDERS:
            _, _, operands = shellwords.flags(args)
            secret = next(
                (op for op in [*operands, *stage.inputs] if commands.secret_file(op)), None
            )
        if secret is not None:
            made.setdefault("secret", secret)
        return made
