"""The heuristic reads a command in time linear in its length, with the same words as before.

``shlex`` builds each token one character at a time (``token += c`` on an attribute), which is
quadratic in a token's length: a 1.6 MB command took 48 s, past a harness's hook timeout. The
scorer's own splitter must give exactly the tokens ``shlex`` gave, so no score moves.
"""

from __future__ import annotations

import random
import re
import shlex
import time

from ecc.contract.types import ToolCall
from ecc_plugins import heuristic


def shlex_words(command: str) -> list[str]:
    """What the scorer read before: posix shlex with operators and no comments, or whitespace
    and operators when the quotes do not balance."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return re.findall(r"[;&|()<>]+|[^\s;&|()<>]+", command)


def test_the_splitter_gives_shlexs_words_on_random_commands() -> None:
    alphabet = ["a", "b", "-", "=", ".", "/", "~", "*", "#", "é", "\x0b"]
    alphabet += [" ", "\t", "\n", "'", '"', "\\", ";", "|", "&", "<", ">", "(", ")"]
    rng = random.Random(21)
    for _ in range(20_000):
        command = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert heuristic._tokens(command) == shlex_words(command), repr(command)


def test_the_splitter_on_commands_as_agents_write_them() -> None:
    for command in [
        "rm -rf . && git push --force origin main",
        "psql -c 'DROP TABLE users'",
        'bash -c "echo \\"hi\\" \\$HOME > /dev/null; rm -rf /"',
        "find . -name '*.log' -print0|xargs -0 rm -f",
        "cat <<'EOF' >> notes.md\nline \\\nnext\nEOF",
        "echo a\\ b 'c''d' \"e\"f ''",
        "(cd x && make) 2>&1 | tee log.txt &",
        "echo 'unbalanced && rm -rf /",
        "echo trailing\\",
    ]:
        assert heuristic._tokens(command) == shlex_words(command), command


def cpu_seconds(command: str, runs: int) -> float:
    call = ToolCall("Bash", {"command": command})
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        heuristic.score(call)
        best = min(best, time.process_time() - start)
    return best


def long_command(size: int) -> str:
    third = size // 3
    return f"echo \"{'A' * third}\" '{'B' * third}' {'C' * third}; rm -rf build"


def test_scoring_time_grows_linearly_with_the_command() -> None:
    """16x the input: 23-38x the CPU time measured for the linear splitter on a loaded 2-core
    machine (large strings cost a little more per byte), 100-130x with shlex."""

    def one_long_word(size: int) -> str:  # where shlex is quadratic: one long token
        return 'echo "' + "A" * size + '" && rm -rf build'

    cpu_seconds(one_long_word(1000), 3)  # warm the regular expressions
    small, large = [], []
    for _ in range(7):  # interleaved, and the best of each: a busy moment hits both or neither
        small.append(cpu_seconds(one_long_word(25_000), 1))
        large.append(cpu_seconds(one_long_word(400_000), 1))
    assert min(large) / max(min(small), 1e-4) < 60, (min(small), min(large))


def test_a_long_command_still_scores_what_it_does() -> None:
    assert heuristic.score(ToolCall("Bash", {"command": long_command(300_000)}))[-1].amount == 0.45
