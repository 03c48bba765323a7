"""Tokens and case as the reference's Unicode 17.0 has them, whatever Python runs (issue 23, 4).

Python 3.11 has Unicode 14.0; the characters below were assigned later, so before the fix ecc
split words at them and kept their capitals, and ``search ɤhorn`` found nothing where the
reference scores "Rams Ɤhorn" 29.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from ecc.vault import unicode17
from ecc.vault.search import tokenize

# (character, Unicode version, what it is)
NEWER = [
    ("\U00011f04", "15.0", "KAWI LETTER A"),
    ("\U00011f50", "15.0", "KAWI DIGIT ZERO"),
    ("\ua7cb", "16.0", "LATIN CAPITAL LETTER RAMS HORN (lower: U+0264)"),
    ("\u1c89", "16.0", "CYRILLIC CAPITAL LETTER TJE (lower: U+1C8A)"),
    ("\U00010d50", "16.0", "GARAY CAPITAL LETTER A (lower: U+10D70)"),
    ("\U00016d70", "16.0", "KIRAT RAI DIGIT ZERO"),
    ("\U0001e5f1", "16.0", "OL ONAL DIGIT ONE"),
    ("\U00016ea0", "17.0", "BERIA ERFE CAPITAL LETTER ARKAB (lower: U+16EBB)"),
    ("\U00010940", "17.0", "SIDETIC LETTER N01"),
]
LOWER = {"\ua7cb": "\u0264", "\u1c89": "\u1c8a", "\U00010d50": "\U00010d70",
         "\U00016ea0": "\U00016ebb"}  # fmt: skip


@pytest.mark.parametrize(("char", "version", "name"), NEWER, ids=[n for _, _, n in NEWER])
def test_newer_characters_are_word_characters(char: str, version: str, name: str) -> None:
    lowered = LOWER.get(char, char)
    assert tokenize(f"ab{char}cd, x") == [f"ab{lowered}cd", "x"]
    assert unicode17.lower(char) == lowered


def _lower_17(text: str) -> str:
    """Unicode 17.0 lower case of the test texts, from the Unicode charts (not ecc's tables)."""

    def one(char: str) -> str:
        code = ord(char)
        if 0x10D50 <= code <= 0x10D65:  # Garay capitals
            return chr(code + 0x20)
        if 0x16EA0 <= code <= 0x16EB8:  # Beria Erfe capitals
            return chr(code + 0x1B)
        return LOWER.get(char, char.lower())

    return "".join(map(one, text))


def _score(title: str, body: str, tags: list[str], meta: str, query: str) -> int:
    """The spec's formula (section 4.4) on already lower-cased fields and tokens."""
    q = query
    tokens = list(dict.fromkeys(re.findall(r"\S+", q)))  # the queries below are plain words
    score = 20 if q in title else 5 if q in body else 0
    for token in tokens:
        count, at = 0, body.find(token)
        while at >= 0 and count < 8:
            count, at = count + 1, body.find(token, at + len(token))
        score += (8 if token in title else 0) + (6 if token in tags else 0)
        score += (3 if token in meta else 0) + min(count, 5)
    return score


CASES = [  # (title, body, query (already lower-case), lower-cased title and body)
    ("Rams \ua7cbhorn", "The \u0264horn note.", "\u0264horn"),
    ("Garay \U00010d50\U00010d51", "about \U00010d70\U00010d71 twice \U00010d50\U00010d71",
     "\U00010d70\U00010d71"),
    ("Kawi \U00011f04\U00011f05", "kawi \U00011f04\U00011f05 text", "\U00011f04\U00011f05"),
    ("digits", "count \U00016d70\U00016d71 and \U0001e5f1\U0001e5f2", "\U0001e5f1\U0001e5f2"),
    ("Tje \u1c89\u0430", "\u1c8a\u0430 \u1c8a\u0430 \u1c89\u0430", "\u1c8a\u0430"),
    ("Beria \U00016ea0\U00016ea1", "\U00016ebb\U00016ebc", "\U00016ebb\U00016ebc"),
]  # fmt: skip


@pytest.mark.parametrize(("title", "body", "query"), CASES)
def test_scores_follow_the_formula(service, title: str, body: str, query: str) -> None:
    saved = service.save({"title": title, "body": body, "sourceHarness": "codex"})
    result = service.search(query)
    lowered_title, lowered_body = _lower_17(title), _lower_17(body)
    expected = _score(lowered_title, lowered_body, [], "note project codex all", query)
    assert expected > 0
    assert [(r["memory"]["id"], r["score"]) for r in result["results"]] == [
        (saved["memory"]["id"], expected)
    ]


def test_rams_horn_scores_29_as_the_reference(service) -> None:
    service.save({"title": "Rams \ua7cbhorn", "body": "The \u0264horn note.", "sourceHarness": "x"})
    assert [r["score"] for r in service.search("\u0264horn")["results"]] == [29]


def _node_unicode() -> str | None:
    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "-p", "process.versions.unicode"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


NODE_DUMP = r"""
const re = /^[\p{L}\p{N}_-]$/u, word = [], lower = {};
for (let cp = 0; cp <= 0x10ffff; cp++) {
  if (cp >= 0xd800 && cp <= 0xdfff) continue;
  const ch = String.fromCodePoint(cp);
  if (re.test(ch)) word.push(cp);
  const lo = ch.toLowerCase();
  if (lo !== ch) lower[cp] = lo;
}
process.stdout.write(JSON.stringify({word, lower}));
"""


@pytest.mark.skipif(
    _node_unicode() != "17.0", reason="needs node with Unicode 17.0 (the reference)"
)
def test_tables_agree_with_node_on_every_code_point() -> None:
    """The reference's own engine answers for each code point: word class and lower case."""
    out = subprocess.run(["node", "-e", NODE_DUMP], capture_output=True, text=True, check=True)
    node = json.loads(out.stdout)
    word = set(node["word"])
    lower = {int(code): text for code, text in node["lower"].items()}
    run = unicode17.WORD_RUN.compiled
    mismatched = [
        code
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and (bool(run.fullmatch(chr(code))) != (code in word)
             or unicode17.lower(chr(code)) != lower.get(code, chr(code)))
    ]  # fmt: skip
    assert mismatched == []
