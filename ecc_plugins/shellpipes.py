"""A command line as pipelines of stages, for the risk patterns that need to know what feeds what.

The heuristic's simple commands are enough for ``rm -rf``; ``curl … | sh`` is risky only because
of the pipe, ``bash <(curl …)`` because of the process substitution and ``sh -c "$(curl …)"``
because of the command substitution. :func:`parse` turns shell words (:mod:`ecc_plugins.
shellwords`) into a list of pipelines, each a list of :class:`Stage`, with every ``$(…)``,
``<(…)`` and ``( … )`` kept as a nested list of the same shape. One pass over the words, no
recursion (nesting is a stack, capped), so a long or deeply nested command costs linear time.
"""

from __future__ import annotations

import re

OPERATOR_CHARS = frozenset(";&|()<>")
MAX_NESTING = 32
# every operator a run of operator characters can hold, longest first: fixed strings only
_OPERATOR = re.compile(r"\|\||\|&|&&|&>>|&>|;;|<\(|>\(|<<<|<<|<>|<&|>>|>&|>\||[|&;()<>]")
_NEW_PIPELINE = frozenset({";", ";;", "&", "&&", "||"})
_INPUT = frozenset({"<", "<>", "<&"})
_OUTPUT = frozenset({">", ">>", ">|", "&>", "&>>"})


class Stage:
    """One command of a pipeline: its words, what its substitutions and redirections hold."""

    __slots__ = ("group", "herestrings", "inputs", "procs", "redirected", "subs", "words")

    def __init__(self) -> None:
        self.words: list[str] = []
        self.subs: list[tuple[Content, bool]] = []  # $( … ) unquoted, and whether it is the program
        self.procs: list[Content] = []  # <( … ) and >( … ): files whose content a command makes
        self.inputs: list[str] = []  # files after <
        self.herestrings: list[str] = []  # words after <<<
        self.redirected = False  # stdout goes to a file (or stderr), not down the pipe
        self.group: Content | None = None  # ( … ) run in a subshell


Content = list[list[Stage]]  # pipelines, each of stages


def parse(tokens: list[str]) -> Content:
    """The pipelines of ``tokens`` (shell words and operator runs, as shellwords gives them)."""
    root: Content = [[Stage()]]
    stack: list[Content] = [root]
    ignored = 0  # parentheses past MAX_NESTING: read as plain separators
    pending = ""  # a redirection waiting for its target
    after_word = False  # the previous token was a word (so "$" + "(" is a substitution)
    for token in tokens:
        content = stack[-1]
        if token and token[0] in OPERATOR_CHARS and OPERATOR_CHARS.issuperset(token):
            for op in _OPERATOR.findall(token):
                content = stack[-1]
                stage = content[-1][-1]
                if op in {"|", "|&"}:
                    content[-1].append(Stage())
                elif op in _NEW_PIPELINE:
                    content.append([Stage()])
                elif op in {"(", "<(", ">("}:
                    if len(stack) >= MAX_NESTING:
                        ignored += 1
                        continue
                    inner: Content = [[Stage()]]
                    if op != "(":
                        stage.procs.append(inner)
                    elif after_word and stage.words and stage.words[-1].endswith("$"):
                        dollar = stage.words.pop()[:-1]
                        if dollar:
                            stage.words.append(dollar)
                        stage.subs.append((inner, not stage.words))
                    elif stage.group is None and not stage.words:
                        stage.group = inner
                    else:  # `f()` and other forms: keep the words apart from the rest
                        stage.subs.append((inner, False))
                    stack.append(inner)
                elif op == ")":
                    if ignored:
                        ignored -= 1
                    elif len(stack) > 1:
                        stack.pop()
                else:
                    pending = _redirection(op, stage, after_word)
                after_word = False
            continue
        stage = content[-1][-1]
        if pending:
            _redirect(pending, token, stage)
            pending = ""
        else:
            stage.words.append(token)
        after_word = True
    return root


def _redirection(op: str, stage: Stage, after_word: bool) -> str:
    """What the word after ``op`` is: ``in``, ``here``, ``heredoc``, ``out``, ``other`` (a
    descriptor other than stdout) or ``dup`` (``>&N``)."""
    descriptor = ""
    numbered = after_word and stage.words and stage.words[-1].isdigit()
    if numbered and op in {">", ">>", ">|", ">&", "<", "<&"} and len(stage.words[-1]) == 1:
        descriptor = stage.words.pop()  # 2>/dev/null: the 2 is no argument
    if op in _INPUT:
        return "in" if descriptor in {"", "0"} else "other"
    if op == "<<<":
        return "here"
    if op == "<<":
        return "heredoc"
    if op == ">&":
        return "dup" if descriptor in {"", "1"} else "other"
    if op in _OUTPUT:
        return "out" if descriptor in {"", "1"} or op.startswith("&") else "other"
    return "other"


def _redirect(kind: str, target: str, stage: Stage) -> None:
    if kind == "in":
        stage.inputs.append(target)
    elif kind == "here":
        stage.herestrings.append(target)
    elif kind == "out" or (kind == "dup" and target != "1"):
        stage.redirected = True


def substitutions(word: str) -> list[str]:
    """The commands of every ``$( … )`` and `` `…` `` inside one word (a quoted one keeps them
    whole), outermost first; a scan of the word, parentheses counted."""
    if "$(" not in word and "`" not in word:
        return []
    found: list[str] = []
    index, end = 0, len(word)
    while index < end:
        if word.startswith("$(", index):
            depth, start = 1, index + 2
            index = start
            while index < end and depth:
                if word[index] == "(":
                    depth += 1
                elif word[index] == ")":
                    depth -= 1
                index += 1
            found.append(word[start : index - 1 if depth == 0 else index])
        elif word[index] == "`":
            close = word.find("`", index + 1)
            if close < 0:
                found.append(word[index + 1 :])
                break
            found.append(word[index + 1 : close])
            index = close + 1
        else:
            index += 1
    return found
