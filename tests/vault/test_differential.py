"""A differential check against the spec (issue 23, acceptance): a seeded generator writes a few
hundred memories with the reference's format rules (its own serializer here, not ecc's), with
text from Unicode 14.0 to 17.0, CRLF files and values at the limits; ecc must read, score, order
and excerpt them as ``shared/spec/memory.md`` (sections 1.4, 4.3-4.5) says. The expected scores
are computed here from the spec's formula, with a tokenizer and lower-casing of the test's own.
"""

from __future__ import annotations

import json
import random
import unicodedata
from pathlib import Path

import pytest

KINDS = ("context", "decision", "fact", "handoff", "lesson", "note", "preference", "runbook")
SCOPES = ("project", "team")
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # fmt: skip

# Words from each Unicode version: 14.0 (Vithkuqi, Tangsa), 15.0 (Kawi), 16.0 (Garay with its
# capitals, Kirat Rai and Ol Onal digits, rams horn), 17.0 (Beria Erfe capitals, Sidetic).
WORDS = [
    "auth", "Migration", "rollout", "cache", "Straße", "ΟΔΟΣ", "日本語", "naïve", "x1_y-2",
    "\U00010570\U00010597v", "\U00016a70\U00016a71",
    "\U00011f04\U00011f05\U00011f06", "\U00011f50\U00011f51",
    "\U00010d50\U00010d71\U00010d52", "\U00010d70\U00010d71", "\U00016d70\U00016d71",
    "\U0001e5f1\U0001e5f2", "Rams\ua7cbhorn", "\u0264horn", "\u1c89\u0430",
    "\U00016ea0\U00016ebc", "\U00016ebb\U00016ebc", "\U00010940\U00010941",
]  # fmt: skip
# Letters and digits of versions after Python 3.11's Unicode 14.0 (from the Unicode charts).
NEW_WORD_CHARS = set(
    "\U00011f04\U00011f05\U00011f06\U00011f50\U00011f51\U00010d50\U00010d52\U00010d70\U00010d71\U00010d72"
    "\U00016d70\U00016d71\U0001e5f1\U0001e5f2\ua7cb\u1c89\u1c8a\U00016ea0\U00016ebb\U00016ebc"
    "\U00010940\U00010941"
)
NEW_LOWER = {"\ua7cb": "\u0264", "\u1c89": "\u1c8a", "\U00010d50": "\U00010d70",
             "\U00010d52": "\U00010d72", "\U00016ea0": "\U00016ebb"}  # fmt: skip
FILLER = ["😀", "—", "a", "the", "of", "1.5", "é", "\t", "\n", "\r\n", "  "]


def lower(text: str) -> str:
    return "".join(NEW_LOWER.get(char, char) for char in text).lower()


def tokens(text: str) -> list[str]:
    out, word = [], ""
    for char in lower(text):
        if char in "_-" or char in NEW_WORD_CHARS or unicodedata.category(char)[0] in "LN":
            word += char
        elif word:
            out.append(word)
            word = ""
    return [*out, word] if word else out


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def score(memory: dict, query: str) -> int:
    q = lower(query)
    title, body = lower(memory["title"]), lower(memory["body"])
    meta = " ".join([memory["kind"], memory["scope"], memory["sourceHarness"],
                     *memory["targetHarnesses"]]).lower()  # fmt: skip
    total = 20 if q in title else 5 if q in body else 0
    for token in dict.fromkeys(tokens(query)):
        count, at = 0, body.find(token)
        while at >= 0 and count < 8:
            count, at = count + 1, body.find(token, at + len(token))
        total += (8 if token in title else 0) + (6 if token in memory["tags"] else 0)
        total += (3 if token in meta else 0) + min(count, 5)
    return total


def excerpt(body: str, query: str) -> str:
    """Section 4.5, slicing UTF-16 units; a pair the slice would cut loses the cut half (ecc
    never splits a surrogate pair: a deliberate difference listed in docs/memory.md)."""
    words, run = [], ""
    for char in body:
        if char in JS_SPACE:
            if run:
                words.append(run)
            run = ""
        else:
            run += char
    text = " ".join([*words, run] if run else words)
    if utf16(text) <= 240:
        return text
    lowered = lower(text)
    found = [lowered.find(token) for token in tokens(query)]
    found = [at for at in found if at >= 0]
    start = max(0, (utf16(lowered[: min(found)]) if found else 0) - 60)
    units = text.encode("utf-16-le", "surrogatepass")
    piece = units[start * 2 : (start + 240) * 2].decode("utf-16-le", "ignore")
    total = len(units) // 2
    return ("…" if start > 0 else "") + piece + ("…" if start + 240 < total else "")


def generate(rng: random.Random, number: int) -> dict:
    def text(count: int, filler: list[str]) -> str:
        parts = [rng.choice(WORDS) if rng.random() < 0.6 else rng.choice(filler)
                 for _ in range(count)]  # fmt: skip
        return " ".join(parts).strip(JS_SPACE) or "word"

    title = text(rng.randint(1, 6), FILLER[:7])  # no TAB, LF or CR in a title
    if number % 50 == 7:  # exactly 200 UTF-16 units, astral characters counting two
        title = ("😀" * 60 + "T" * 80)[:140]
    body = text(rng.choice([3, 20, 80, 300]), FILLER)
    if number % 100 == 3:  # close to the 65,536-byte limit
        body = (body + " ") * (60000 // (len(body.encode()) + 1)) + "end"
    tags = sorted(
        rng.sample(["auth", "cache", "x1_y-2", "db", "ops", "rollout"], rng.randint(0, 3))
    )
    if number % 100 == 11:
        tags = [f"t{i}" for i in range(32)]
    targets = rng.choice([["all"], ["claude"], ["codex", "claude"]])
    if number % 100 == 13:
        targets = [f"h{i}" for i in range(32)]
    day, second = rng.randint(1, 28), rng.choice([0, 0, 1, 2])  # ties on purpose
    stamp = f"2026-07-{day:02d}T10:00:{second:02d}.000Z"
    links = [f"mem_20260701_{i:020x}" for i in range(64)] if number % 100 == 17 else []
    return {
        "schema": "ecc.memory.v1",
        "id": f"mem_2026{rng.randint(1, 12):02d}01_{rng.getrandbits(80):020x}",
        "title": title,
        "kind": rng.choice(KINDS),
        "scope": rng.choice(SCOPES),
        "trust": "unreviewed",
        "status": rng.choice(["active"] * 8 + ["rejected", "superseded"]),
        "sourceHarness": rng.choice(["codex", "claude", "gemini"]),
        "targetHarnesses": targets,
        "tags": tags,
        "links": links,
        "createdAt": stamp,
        "updatedAt": stamp,
        "body": body,
    }


FIELDS = [("schema", "schema"), ("id", "id"), ("title", "title"), ("kind", "kind"),
          ("scope", "scope"), ("trust", "trust"), ("status", "status"),
          ("source_harness", "sourceHarness"), ("target_harnesses", "targetHarnesses"),
          ("tags", "tags"), ("links", "links"), ("created_at", "createdAt"),
          ("updated_at", "updatedAt")]  # fmt: skip


def reference_text(memory: dict) -> str:
    """Section 1.4: ``key: JSON.stringify(value)`` lines, the body, one final LF."""
    lines = [f"{key}: {json.dumps(memory[obj], ensure_ascii=False, separators=(',', ':'))}"
             for key, obj in FIELDS]  # fmt: skip
    return "---\n" + "\n".join(lines) + "\n---\n\n" + memory["body"] + "\n"


def id_order(memory_id: str) -> str:  # section 4.2: ICU order of the ID alphabet
    return memory_id.translate({ord("_"): "\x01", ord("-"): "\x02"})


@pytest.fixture(scope="module")
def generated() -> list[dict]:
    rng = random.Random(23)
    return [generate(rng, number) for number in range(300)]


def test_ecc_reads_scores_and_excerpts_them_as_the_spec_says(service, repo, generated) -> None:
    vault = repo / ".ecc/memory"
    memories = []
    for number, memory in enumerate(generated):
        text = reference_text(memory)
        if number % 5 == 0:  # an all-CRLF copy parses to the same memory, body lines included
            text = text.replace("\n", "\r\n")
            memory = {**memory, "body": memory["body"].replace("\n", "\r\n")}
        path = vault / memory["scope"] / f"{memory['kind']}s" / f"{memory['id']}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        memories.append(memory)
    too_long = {**generated[0], "id": "mem_20260101_toolongtitle000000", "title": "😀" * 100 + "T"}
    too_long_path = vault / too_long["scope"] / f"{too_long['kind']}s" / f"{too_long['id']}.md"
    too_long_path.write_text(reference_text(too_long), encoding="utf-8")

    doctor = service.doctor()
    assert doctor["memoryCount"] == len(memories)
    assert doctor["invalidFileCount"] == 1  # only the 201-unit title
    rng = random.Random(17)
    active = [memory for memory in memories if memory["status"] == "active"]
    queries = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(30)]
    queries += [rng.choice(WORDS).upper() for _ in range(5)] + ["ɤhorn", "\U00010d70"]
    for query in queries:
        expected = sorted(
            ((score(memory, query), memory) for memory in active),
            key=lambda pair: id_order(pair[1]["id"]),
        )
        expected.sort(key=lambda pair: pair[1]["updatedAt"], reverse=True)
        expected.sort(key=lambda pair: pair[0], reverse=True)
        want = [(m["id"], s, excerpt(m["body"], query)) for s, m in expected if s > 0][:100]
        got = service.search(query, limit=100)["results"]
        assert [(r["memory"]["id"], r["score"], r["excerpt"]) for r in got] == want, query
    for memory in memories[:40]:
        read = service.read(memory["id"])["memory"]
        assert read == {**memory, "title": memory["title"]}
    assert Path(too_long_path).exists()
