"""Editing a JSON or JSONC file's text in place: comments, layout and line endings kept.

Gemini CLI's ``settings.json`` may hold ``//`` and ``/* */`` comments; rewriting any settings
file with ``json.dumps`` would drop them and reformat the rest. :func:`parse` reads JSON with
comments (and trailing commas) into nodes that know where they sit in the text; :func:`rewrite`
turns the old value into the new one by inserting and removing members and items only where the
two differ, indented like their neighbours. Removing what an insertion added gives back the
original bytes. The caller checks that the result parses to what it wanted.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    """The text is not JSON (with comments) this module can edit safely."""


@dataclass
class Node:
    start: int
    end: int
    value: Any = None
    members: list[tuple[str, int, Node]] = field(default_factory=list)  # key, key start, value
    items: list[Node] = field(default_factory=list)
    kind: str = "scalar"  # scalar | object | array


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.comments: list[tuple[int, int]] = []

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                end = len(text) if end < 0 else end
                self.comments.append((self.pos, end))
                self.pos = end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise JsoncError(f"unterminated comment at offset {self.pos}")
                self.comments.append((self.pos, end + 2))
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        text, start = self.text, self.pos
        if start >= len(text):
            raise JsoncError("unexpected end of text")
        char = text[start]
        if char == "{":
            return self._container(start, "}", "object")
        if char == "[":
            return self._container(start, "]", "array")
        if char == '"':
            string = self._string()
            return Node(start, self.pos, string)
        for word, literal in _LITERALS.items():
            if text.startswith(word, start):
                self.pos += len(word)
                return Node(start, self.pos, literal)
        match = _NUMBER.match(text, start)
        if not match:
            raise JsoncError(f"unexpected {char!r} at offset {start}")
        self.pos = match.end()
        return Node(start, self.pos, json.loads(match.group()))

    def _string(self) -> str:
        match = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.S).match(self.text, self.pos)
        if not match:
            raise JsoncError(f"bad string at offset {self.pos}")
        self.pos = match.end()
        return json.loads(match.group())

    def _container(self, start: int, close: str, kind: str) -> Node:
        node = Node(start, start, kind=kind)
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.pos):
                break
            if kind == "object":
                key_start = self.pos
                if not self.text.startswith('"', key_start):
                    raise JsoncError(f"expected a key at offset {key_start}")
                key = self._string()
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise JsoncError(f"expected ':' at offset {self.pos}")
                self.pos += 1
                node.members.append((key, key_start, self.value()))
            else:
                node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
            elif not self.text.startswith(close, self.pos):
                raise JsoncError(f"expected ',' or {close!r} at offset {self.pos}")
        self.pos += 1
        node.end = self.pos
        if kind == "object":
            keys = [key for key, _, _ in node.members]
            if len(set(keys)) != len(keys):
                raise JsoncError("an object has a key twice")
            node.value = {key: child.value for key, _, child in node.members}
        else:
            node.value = [child.value for child in node.items]
        return node


def parse(text: str) -> tuple[Node, list[tuple[int, int]]]:
    """The document's root node and the spans of its comments."""
    parser = _Parser(text)
    root = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise JsoncError(f"unexpected text at offset {parser.pos}")
    return root, parser.comments


def same(a: Any, b: Any) -> bool:
    """Equal as JSON (``True`` is not ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class _Editor:
    """Collects non-overlapping ``(start, end, replacement)`` edits turning one value into
    another."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.eol = "\r\n" if "\r\n" in text else "\n"
        self.unit = _indent_unit(text)
        self.edits: list[tuple[int, int, str]] = []

    def line_indent(self, offset: int) -> str | None:
        """The whitespace before ``offset`` on its line, or None when other text precedes it."""
        before = self.text[self.text.rfind("\n", 0, offset) + 1 : offset]
        return None if before.strip() else before

    def indent_of_line(self, offset: int) -> str:
        line = self.text[self.text.rfind("\n", 0, offset) + 1 :]
        return line[: len(line) - len(line.lstrip(" \t"))]

    def render(self, value: Any, indent: str | None, spaced: bool = True) -> str:
        if indent is None:
            separators = (", ", ": ") if spaced else (",", ":")
            return json.dumps(value, ensure_ascii=False, separators=separators)
        return json.dumps(value, indent=self.unit, ensure_ascii=False).replace(
            "\n", self.eol + indent
        )

    def diff(self, node: Node, new: Any) -> None:
        if same(node.value, new):
            return
        if node.kind == "object" and isinstance(new, dict):
            self._object(node, new)
        elif node.kind == "array" and isinstance(new, list):
            self._array(node, new)
        else:
            indent = self.indent_of_line(node.start) if "\n" in self.text else None
            self.edits.append((node.start, node.end, self.render(new, indent)))

    def _object(self, node: Node, new: dict[str, Any]) -> None:
        spans = [(start, child.end) for _, start, child in node.members]
        gone = [i for i, (key, _, _) in enumerate(node.members) if key not in new]
        for key, _, child in node.members:
            if key in new:
                self.diff(child, new[key])
        old = {key for key, _, _ in node.members}
        added: list[tuple[str | None, Any]] = [(k, v) for k, v in new.items() if k not in old]
        spaced = True
        if node.members:
            key, start, child = node.members[-1]
            spaced = ": " in self.text[start : child.start]
        self._remove(node, spans, gone)
        self._append(node, spans, gone, added, spaced)

    def _array(self, node: Node, new: list[Any]) -> None:
        old_keys = [json.dumps(item.value, sort_keys=True) for item in node.items]
        new_keys = [json.dumps(item, sort_keys=True) for item in new]
        spans = [(item.start, item.end) for item in node.items]
        gone: list[int] = []
        appended: list[tuple[str | None, Any]] = []
        matcher = difflib.SequenceMatcher(a=old_keys, b=new_keys, autojunk=False)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            pairs = min(a2 - a1, b2 - b1) if tag == "replace" else 0
            for k in range(pairs):
                self.diff(node.items[a1 + k], new[b1 + k])
            gone += range(a1 + pairs, a2)
            extra = new[b1 + pairs : b2]
            if extra and a2 != len(node.items):
                raise JsoncError("an item would be inserted inside a list")
            appended += [(None, value) for value in extra]
        spaced = len(spans) < 2 or self.text[spans[-2][1] : spans[-1][0]].startswith(", ")
        self._remove(node, spans, gone)
        self._append(node, spans, gone, appended, spaced)

    def _remove(self, node: Node, spans: list[tuple[int, int]], gone: list[int]) -> None:
        if not gone:
            return
        if len(gone) == len(spans):  # everything: back to the empty container
            end = spans[-1][1]
            tail = self.eol + self.indent_of_line(node.start)
            if self.text.startswith(tail, end) and end + len(tail) == node.end - 1:
                end += len(tail)
            self.edits.append((node.start + 1, end, ""))
            return
        runs: list[list[int]] = []
        for i in gone:
            if runs and runs[-1][-1] == i - 1:
                runs[-1].append(i)
            else:
                runs.append([i])
        for run in runs:
            first, last = run[0], run[-1]
            if first > 0:  # from the end of the member before: its comma goes too
                self.edits.append((spans[first - 1][1], spans[last][1], ""))
            else:
                self.edits.append((spans[0][0], spans[last + 1][0], ""))

    def _append(
        self,
        node: Node,
        spans: list[tuple[int, int]],
        gone: list[int],
        added: list[tuple[str | None, Any]],
        spaced: bool,
    ) -> None:
        if not added:
            return
        kept = [span for i, span in enumerate(spans) if i not in gone]
        colon = ": " if spaced else ":"

        def part(key: str | None, value: Any, indent: str | None) -> str:
            head = "" if key is None else json.dumps(key, ensure_ascii=False) + colon
            return head + self.render(value, indent, spaced)

        if kept:
            last_start, last_end = kept[-1]
            indent = self.line_indent(last_start)
            if indent is None:  # all on one line
                separator = ", " if spaced else ","
                text = "".join(separator + part(k, v, None) for k, v in added)
            else:
                text = "".join("," + self.eol + indent + part(k, v, indent) for k, v in added)
            self.edits.append((last_end, last_end, text))
            return
        close = self.indent_of_line(node.start)
        if "\n" not in self.text:  # a one-line file stays one line
            text = (", " if spaced else ",").join(part(k, v, None) for k, v in added)
        else:
            indent = close + self.unit
            body = ("," + self.eol + indent).join(part(k, v, indent) for k, v in added)
            # an empty container's closing bracket goes on a line of its own; in one holding
            # only comments, they stay after the new members (so removing those restores it)
            hollow = self.text[node.start + 1 : node.end - 1] == ""
            text = self.eol + indent + body + (self.eol + close if hollow else "")
        self.edits.append((node.start + 1, node.start + 1, text))


def _indent_unit(text: str) -> str:
    """One level of indentation as the file writes it (two spaces when it shows none)."""
    indents = re.findall(r"\n([ \t]+)\S", text)
    if not indents:
        return "  "
    if indents[0].startswith("\t"):
        return "\t"
    return " " * min(len(indent) for indent in indents)


def rewrite(text: str, root: Node, comments: list[tuple[int, int]], new: Any) -> str:
    """``text`` edited so it holds ``new`` instead of ``root.value``; a comment the edit would
    remove is refused (:class:`JsoncError`), never silently dropped."""
    editor = _Editor(text)
    editor.diff(root, new)
    result = text
    for start, end, replacement in sorted(editor.edits, reverse=True):
        if any(start < c_end and c_start < end for c_start, c_end in comments):
            raise JsoncError("the edit would remove a comment")
        result = result[:start] + replacement + result[end:]
    return result
