"""Shell words in linear time, and an argv's flags, for the risk heuristic.

:func:`split` returns exactly the tokens of ``shlex.shlex(text, posix=True,
punctuation_chars=True)`` with ``whitespace_split = True`` and no comment characters, which is
what the heuristic was specified with: quotes and backslashes as POSIX ``shlex`` reads them,
runs of ``();<>|&`` as one operator token. ``shlex`` builds every token one character at a time
on an attribute (``self.token += c``), which CPython cannot extend in place, so one long word
costs time quadratic in its length (a 1.6 MB command took 48 s). Here one regular expression
finds the words (each alternative takes one way forward, so it never backtracks more than
linearly), and only a word with quotes or backslashes is unquoted, once, by a scan.
"""

from __future__ import annotations

import re

_SPACE = " \t\r\n"  # shlex's whitespace: nothing else separates words
_OPERATOR = "();<>|&"
# Skip whitespace, then one operator run, one word (plain runs, quoted strings and escapes up to
# the next unquoted space or operator) or a character no word can hold: an unclosed quote or a
# trailing backslash. ``\Z`` ends the scan after trailing whitespace in one match.
_TOKEN = re.compile(
    r"""[ \t\r\n]*(?:
        ([();<>|&]+)
      | ((?:[^ \t\r\n();<>|&'"\\]+|'[^']*'|"(?:[^"\\]|\\[\s\S])*"|\\[\s\S])+)
      | ([\s\S])
      | \Z)""",
    re.VERBOSE,
)
_PLAIN = re.compile(r"[^ \t\r\n();<>|&'\"\\]+")
_PLAIN_IN_DOUBLE = re.compile(r'[^"\\]+')


def split(text: str) -> list[str]:
    """The words and operator runs of ``text``; ValueError on an unclosed quote or a trailing
    backslash, as ``shlex`` raises."""
    tokens: list[str] = []
    for operator, word, stray in _TOKEN.findall(text):
        if operator:
            tokens.append(operator)
        elif word:
            if "'" in word or '"' in word or "\\" in word:
                _word(word, 0, tokens)  # balanced (the pattern matched it): only unquote
            else:
                tokens.append(word)
        elif stray:
            raise ValueError("No closing quotation" if stray in "'\"" else "No escaped character")
    return tokens


def _match(pattern: re.Pattern[str], text: str, index: int) -> int:
    found = pattern.match(text, index)  # the caller saw a first character the pattern takes
    return found.end() if found is not None else index + 1


def _word(text: str, index: int, tokens: list[str]) -> int:
    """Append the word starting at ``index`` (it may be ``''`` when quoted); return its end."""
    parts: list[str] = []
    end = len(text)
    while index < end:
        char = text[index]
        if char == "'":  # single quotes: everything up to the next one, literally
            close = text.find("'", index + 1)
            if close < 0:
                raise ValueError("No closing quotation")
            parts.append(text[index + 1 : close])
            index = close + 1
        elif char == '"':
            index = _double_quoted(text, index + 1, parts)
        elif char == "\\":  # outside quotes a backslash takes the next character as it is
            if index + 1 >= end:
                raise ValueError("No escaped character")
            parts.append(text[index + 1])
            index += 2
        elif char in _SPACE or char in _OPERATOR:
            break
        else:
            stop = _match(_PLAIN, text, index)
            parts.append(text[index:stop])
            index = stop
    tokens.append("".join(parts))
    return index


def _double_quoted(text: str, index: int, parts: list[str]) -> int:
    """Read up to the closing ``"``; a backslash escapes only ``"`` and ``\\`` (shlex's rule,
    which keeps the backslash before anything else)."""
    end = len(text)
    while True:
        plain = _PLAIN_IN_DOUBLE.match(text, index)
        if plain is not None:
            parts.append(plain.group())
            index = plain.end()
        if index >= end:
            raise ValueError("No closing quotation")
        if text[index] == '"':
            return index + 1
        if index + 1 >= end:
            raise ValueError("No escaped character")
        escaped = text[index + 1]
        parts.append(escaped if escaped in '"\\' else "\\" + escaped)
        index += 2


def flags(words: list[str]) -> tuple[set[str], set[str], list[str]]:
    """Split argv words into short-flag letters (``-rf``: r, f), long flags (lower-cased, without
    ``=value``) and operands (every word after ``--`` too)."""
    letters: set[str] = set()
    longs: set[str] = set()
    operands: list[str] = []
    end = False
    for word in words:
        if end or not word.startswith("-") or word == "-":
            operands.append(word)
        elif word == "--":
            end = True
        elif word.startswith("--"):
            longs.add(word.split("=", 1)[0].lower())
        else:
            letters.update(word[1:])
    return letters, longs, operands
