"""What single commands do, for the risk patterns (:mod:`ecc_plugins.riskpatterns`).

Which programs download and where to (``curl`` without ``-o`` prints, ``wget`` only with
``-O -``), which decode (``base64 -d``, ``xxd -r``, ``openssl enc -d``, ``gpg -d``), which print
credentials (``printenv``, ``gh auth token``…), which files a ``curl`` option uploads, which paths
hold secrets (a private key, cloud credentials, a real ``.env``; never a ``.pub`` or an
``.env.example``), and what in an interpreter one-liner deletes a tree. Options are read with
their values (:func:`ecc_plugins.shellwords.options`), so ``-o file`` is a file, not an operand.
"""

from __future__ import annotations

import re

from ecc_plugins import shellwords


def names(text: str) -> frozenset[str]:
    """The set of the space-separated words of ``text`` (tables written compactly)."""
    return frozenset(text.split())


DOWNLOADERS = names("curl wget fetch http https xh")
CURL_VALUES = "odFHuXTAbceEKmrwxyYzCUPQt"  # curl's short options that take a value
CURL_LONG = names(
    "--output --data --data-binary --data-raw --data-ascii --data-urlencode --json --form "
    "--form-string --header --user --request --upload-file --user-agent --cookie --cookie-jar "
    "--referer --cert --key --cacert --config --max-time --range --write-out --proxy --url "
    "--connect-timeout --retry --output-dir --resolve"
)
CURL_UPLOADS = names("-d --data --data-binary --data-ascii --data-urlencode --json -F --form")
WGET_VALUES = "OoaPtTUeiBwlQADRXI"
WGET_LONG = names(
    "--output-document --output-file --directory-prefix --post-file --body-file --post-data "
    "--body-data --header --user-agent --tries --timeout --method"
)
_WRAPPERS = {  # program: its short options that take a value
    "sudo": "ugpCDhrtUT",
    "doas": "uC",
    "env": "uSC",
    "nice": "n",
    "timeout": "sk",
    "stdbuf": "ioe",
    "ionice": "cnp",
    "nohup": "",
    "time": "fo",
    "command": "",
    "exec": "a",
    "builtin": "",
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_LITERAL = re.compile(r"'([^'\n]{0,300})'|\"([^\"\n]{0,300})\"")  # bounded: linear
_ROOT_LITERALS = names("/ /* . ./ .. ../ * ~ ~/")
_ROOT_CALLS = (
    "getcwd()", "Path.cwd()", "Path.home()", "process.cwd()", "os.homedir()", "Dir.pwd",
    "Dir.home", "ENV['HOME']", 'ENV["HOME"]', "$ENV{HOME}", "environ['HOME']", 'environ["HOME"]',
)  # fmt: skip
_ENV_EXAMPLES = names("example sample template dist defaults schema tpl")
_SECRET_NAMES = names(".netrc _netrc .pgpass .git-credentials .npmrc .pypirc")
_KEY_FILES = names("id_rsa id_dsa id_ecdsa id_ed25519")
_SECRET_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".keystore", ".jks")


def strip_wrappers(words: list[str]) -> tuple[list[str], bool]:
    """The command after ``sudo``, ``env``, ``timeout 5`` and assignments; and whether ``env``
    (or ``sudo env``) runs nothing and so prints the environment."""
    index, env_alone = 0, False
    while index < len(words):
        word = words[index]
        name = word.rsplit("/", 1)[-1]
        if _ASSIGNMENT.match(word):
            index += 1
            continue
        if name not in _WRAPPERS:
            break
        values, index = _WRAPPERS[name], index + 1
        while index < len(words) and words[index].startswith("-") and words[index] != "-":
            flag, index = words[index], index + 1
            if flag == "--":
                break
            if len(flag) == 2 and flag[1] in values:
                index += 1
        if name == "timeout" and index < len(words):
            index += 1  # the duration
        env_alone = name == "env"
    rest = words[index:]
    return rest, env_alone and not rest


def interpreter(program: str) -> str:
    if program.startswith(("python", "pypy")):
        return "python"
    if program.startswith("perl"):
        return "perl"
    if program in {"node", "nodejs"}:
        return "node"
    if program.startswith(("ruby", "php", "lua")):
        return program[:4] if program.startswith("ruby") else program[:3]
    return ""


def normal(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def downloads_to_stdout(program: str, args: list[str], downloaded: set[str]) -> bool:
    """Whether the download goes to stdout; a file it writes instead joins ``downloaded``."""
    if program == "curl":
        found, operands = shellwords.options(args, CURL_VALUES, CURL_LONG)
        to_files: list[str] = [
            v for f, v in found if f in {"-o", "--output"} and v and v not in {"-", "/dev/stdout"}
        ]
        if any(f in {"-O", "--remote-name", "--remote-name-all"} for f, _ in found):
            to_files += [url_name(op) for op in operands]
    elif program == "wget":
        found, operands = shellwords.options(args, WGET_VALUES, WGET_LONG)
        named: list[str] = [v for f, v in found if f in {"-O", "--output-document"} and v]
        if any(v in {"-", "/dev/stdout"} for v in named):
            return True
        to_files = named or [url_name(op) for op in operands]
    else:
        found, _ = shellwords.options(args, "oa")
        to_files = [v for f, v in found if f in {"-o", "--output"} and v and v != "-"]
        if program == "fetch" and not any(f == "-o" for f, _ in found):
            return False  # fetch writes the file by default
        if any(f in {"-d", "--download"} for f, _ in found):
            return False
    downloaded.update(normal(name) for name in to_files if name)
    return not to_files


def url_name(url: str) -> str:
    return url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def decodes(program: str, args: list[str]) -> bool:
    if program in {"base64", "base32", "basenc"}:
        found, _ = shellwords.options(args, "w")
        return any(flag in {"-d", "-D", "--decode"} for flag, _ in found)
    if program == "xxd":
        return any(flag == "-r" for flag, _ in shellwords.options(args, "cglos")[0])
    if program == "openssl":
        sub = args[0] if args else ""
        cipher = sub.startswith(("aes", "des", "bf", "camellia", "chacha", "cast", "rc"))
        return "-d" in args and (sub in {"enc", "base64"} or cipher)
    if program in {"gpg", "gpg2"}:
        return "-d" in args or "--decrypt" in args
    return False


def secret_output(program: str, args: list[str]) -> str | None:
    """A command that prints credentials or the environment."""
    if program == "printenv" or (program in {"set", "export"} and (not args or args == ["-p"])):
        return program
    if program in {"gpg", "gpg2"} and any(a.startswith("--export-secret") for a in args):
        return f"{program} --export-secret-keys"
    if program == "gh" and args[:2] == ["auth", "token"]:
        return "gh auth token"
    if program == "gcloud" and "print-access-token" in args:
        return "gcloud auth print-access-token"
    if program == "aws" and args[:1] == ["configure"] and args[1:2] in (["get"], ["export"]):
        return "aws configure get"
    return None


def uploaded(flag: str, value: str) -> str | None:
    """The file a curl option sends: ``-d @f``, ``--data-urlencode n@f``, ``-F n=@f;type=…``,
    ``-F n=<f``, ``-T f``."""
    if flag in {"-T", "--upload-file"}:
        return value
    if flag not in CURL_UPLOADS:
        return None
    if flag in {"-F", "--form"}:
        _, _, rest = value.partition("=")
        if rest[:1] in {"@", "<"}:
            return rest[1:].split(";", 1)[0]
        return None
    if value.startswith("@"):
        return value[1:]
    if flag == "--data-urlencode" and "@" in value:
        return value.split("@", 1)[1]
    return None


def secret_file(path: str) -> bool:
    """A private key, cloud or registry credentials, a real ``.env``, the password shadow or a
    process environment; never a public key or an example file."""
    lowered = path.strip("'\"").lower()
    parts = [part for part in re.split(r"[/\\]", lowered) if part and part != "."]
    if not parts:
        return False
    base, parents = parts[-1], parts[:-1]
    if base.endswith(".pub"):
        return False
    if ".ssh" in parents:
        return base.startswith(("id_", "identity", "*")) or base.endswith(_SECRET_SUFFIXES)
    if base in _KEY_FILES:
        return True
    if base in {".ssh", ".gnupg", ".aws"} or ".gnupg" in parents:
        return True
    if parents[-1:] == [".aws"]:
        return base == "credentials"
    if parents[-1:] in ([".docker"], [".kube"]):
        return base in {"config.json", "config"}
    if base in _SECRET_NAMES or base.endswith(_SECRET_SUFFIXES):
        return True
    if parents[-1:] == ["etc"] and base in {"shadow", "gshadow", "master.passwd"}:
        return True
    if base == "environ" and "proc" in parents:
        return True
    if base == ".env" or base.endswith(".env"):
        return True
    return base.startswith(".env.") and base[5:] not in _ENV_EXAMPLES


def tree_deletion(family: str, code: str) -> str | None:
    """What in an interpreter one-liner deletes a directory tree, or None."""
    if family == "python":
        if "rmtree" in code:
            return "shutil.rmtree"
        removes = ("os.remove", "os.unlink", ".unlink(", "os.rmdir", ".rmdir(")
        walks = ("os.walk", "glob", "listdir", "scandir", "iterdir", "for ")
        if any(r in code for r in removes) and any(w in code for w in walks):
            return "removals in a loop"
    elif family == "perl":
        if "rmtree" in code or "remove_tree" in code:
            return "File::Path rmtree"
        if "unlink" in code and any(w in code for w in ("glob", "<", "find", "for", "map")):
            return "unlink in a loop"
    elif family == "node":
        if "rimraf" in code:
            return "rimraf"
        if "recursive" in code and any(r in code for r in ("rmSync", "rmdirSync", "rm(", "rmdir(")):
            return "recursive fs.rm"
    elif family == "ruby":
        for name in ("rm_rf", "rm_r", "remove_dir", "remove_entry", "rmtree"):
            if name in code:
                return f"FileUtils.{name}"
    return None


def root_target(code: str) -> str | None:
    """The ``.``, ``/``, ``~`` (or the working or home directory) an interpreter one-liner
    names, or None."""
    literals = {a or b for a, b in _LITERAL.findall(code)}
    target = next((lit for lit in sorted(literals) if lit.strip() in _ROOT_LITERALS), None)
    return target or next((call for call in _ROOT_CALLS if call in code), None)
