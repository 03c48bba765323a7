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


_LOOSE = re.compile(r"[;&|()<>]+|[^\s;&|()<>]+")


def words(text: str) -> list[str]:
    """:func:`split`'s words, or for unbalanced quotes the runs of non-space and operator
    characters: a scorer still reads a command it cannot fully unquote."""
    try:
        return split(text)
    except ValueError:
        return _LOOSE.findall(text)


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


def options(
    words: list[str], short_values: str = "", long_values: frozenset[str] = frozenset()
) -> tuple[list[tuple[str, str | None]], list[str]]:
    """An argv's options in order, each with its value, and its operands, for a program whose
    short options in ``short_values`` and long options in ``long_values`` take a value
    (``-o file``, ``-ofile``, ``-qO-``, ``--output file``, ``--output=file``). Long options
    keep their case; ``--`` ends the options."""
    found: list[tuple[str, str | None]] = []
    operands: list[str] = []
    index, end = 0, len(words)
    while index < end:
        word = words[index]
        index += 1
        if word == "--":
            operands.extend(words[index:])
            break
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if not equals and name in long_values and index < end:
                value, index = words[index], index + 1
            found.append((name, value if equals or name in long_values else None))
        elif word.startswith("-") and len(word) > 1:
            for position in range(1, len(word)):
                letter = word[position]
                if letter in short_values:
                    value = word[position + 1 :]
                    if not value and index < end:
                        value, index = words[index], index + 1
                    found.append(("-" + letter, value))
                    break
                found.append(("-" + letter, None))
        else:
            operands.append(word)
    return found, operands
