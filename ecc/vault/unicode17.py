"""Tokenising and lower-casing with the reference's Unicode version (17.0), whatever Python runs.

The reference (Node 20, ICU 78) tokenises with ``/[\\p{L}\\p{N}_-]+/gu`` and lower-cases with
``toLowerCase``, both on Unicode 17.0 data. Python 3.11 has Unicode 14.0, so letters and numbers
added since (Kawi, Garay, Kirat Rai digits, ``Ɤ``...) would split words and keep their case.
The difference is small and one-sided: every character that Unicode 14 counts as a letter or a
number still is one, and Python's ``str.lower`` agrees with Node on every character it knows;
only characters assigned in 15.0-17.0 are missing. They are listed here, from Node's own answers
for every code point (``tests/vault/test_unicode_version.py`` checks the tables against the
``node`` on the machine when there is one, and against characters of each version always).

A package with newer data would not do better: ``unicodedata2`` has no case mappings, and both it
and ``regex`` now ship Unicode 18, a version ahead of the reference's.

Python versions with Unicode 15-17 already know part of these characters; listing them again
changes nothing. (A future Python on Unicode 18 or later would count that version's new letters
as word characters; the tests say so when they run on one.)
"""

from __future__ import annotations

from ecc.vault.format import LazyPattern

REFERENCE_UNICODE_VERSION = "17.0.0"

# Letters and numbers (\p{L}, \p{N}) of Unicode 17.0 that Unicode 14.0 (Python 3.11) lacks.
WORD_RANGES_ADDED = (
    (0x088F, 0x088F),
    (0x0C5C, 0x0C5C),
    (0x0CDC, 0x0CDC),
    (0x1C89, 0x1C8A),
    (0xA7CB, 0xA7CF),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7DA, 0xA7DC),
    (0xA7F1, 0xA7F1),
    (0x105C0, 0x105F3),
    (0x10940, 0x10959),
    (0x10D40, 0x10D65),
    (0x10D6F, 0x10D85),
    (0x10EC2, 0x10EC7),
    (0x1123F, 0x11240),
    (0x11380, 0x11389),
    (0x1138B, 0x1138B),
    (0x1138E, 0x1138E),
    (0x11390, 0x113B5),
    (0x113B7, 0x113B7),
    (0x113D1, 0x113D1),
    (0x113D3, 0x113D3),
    (0x116D0, 0x116E3),
    (0x11BC0, 0x11BE0),
    (0x11BF0, 0x11BF9),
    (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9),
    (0x11F02, 0x11F02),
    (0x11F04, 0x11F10),
    (0x11F12, 0x11F33),
    (0x11F50, 0x11F59),
    (0x1342F, 0x1342F),
    (0x13441, 0x13446),
    (0x13460, 0x143FA),
    (0x16100, 0x1611D),
    (0x16130, 0x16139),
    (0x16D40, 0x16D6C),
    (0x16D70, 0x16D79),
    (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3),
    (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF),
    (0x18CFF, 0x18CFF),
    (0x18D09, 0x18D1E),
    (0x18D80, 0x18DF2),
    (0x1B132, 0x1B132),
    (0x1B155, 0x1B155),
    (0x1CCF0, 0x1CCF9),
    (0x1D2C0, 0x1D2D3),
    (0x1DF25, 0x1DF2A),
    (0x1E030, 0x1E06D),
    (0x1E4D0, 0x1E4EB),
    (0x1E4F0, 0x1E4F9),
    (0x1E5D0, 0x1E5ED),
    (0x1E5F0, 0x1E5FA),
    (0x1E6C0, 0x1E6DE),
    (0x1E6E0, 0x1E6E2),
    (0x1E6E4, 0x1E6E5),
    (0x1E6E7, 0x1E6ED),
    (0x1E6F0, 0x1E6F4),
    (0x1E6FE, 0x1E6FF),
    (0x2B739, 0x2B73F),
    (0x2CEA2, 0x2CEAD),
    (0x2EBF0, 0x2EE5D),
    (0x31350, 0x33479),
)
# Their lower-case forms (all one character; Final_Sigma-style context plays no part).
LOWER_ADDED = {
    0x1C89: 0x1C8A,
    0xA7CB: 0x0264,
    0xA7CC: 0xA7CD,
    0xA7CE: 0xA7CF,
    0xA7D2: 0xA7D3,
    0xA7D4: 0xA7D5,
    0xA7DA: 0xA7DB,
    0xA7DC: 0x019B,
    0x10D50: 0x10D70,
    0x10D51: 0x10D71,
    0x10D52: 0x10D72,
    0x10D53: 0x10D73,
    0x10D54: 0x10D74,
    0x10D55: 0x10D75,
    0x10D56: 0x10D76,
    0x10D57: 0x10D77,
    0x10D58: 0x10D78,
    0x10D59: 0x10D79,
    0x10D5A: 0x10D7A,
    0x10D5B: 0x10D7B,
    0x10D5C: 0x10D7C,
    0x10D5D: 0x10D7D,
    0x10D5E: 0x10D7E,
    0x10D5F: 0x10D7F,
    0x10D60: 0x10D80,
    0x10D61: 0x10D81,
    0x10D62: 0x10D82,
    0x10D63: 0x10D83,
    0x10D64: 0x10D84,
    0x10D65: 0x10D85,
    0x16EA0: 0x16EBB,
    0x16EA1: 0x16EBC,
    0x16EA2: 0x16EBD,
    0x16EA3: 0x16EBE,
    0x16EA4: 0x16EBF,
    0x16EA5: 0x16EC0,
    0x16EA6: 0x16EC1,
    0x16EA7: 0x16EC2,
    0x16EA8: 0x16EC3,
    0x16EA9: 0x16EC4,
    0x16EAA: 0x16EC5,
    0x16EAB: 0x16EC6,
    0x16EAC: 0x16EC7,
    0x16EAD: 0x16EC8,
    0x16EAE: 0x16EC9,
    0x16EAF: 0x16ECA,
    0x16EB0: 0x16ECB,
    0x16EB1: 0x16ECC,
    0x16EB2: 0x16ECD,
    0x16EB3: 0x16ECE,
    0x16EB4: 0x16ECF,
    0x16EB5: 0x16ED0,
    0x16EB6: 0x16ED1,
    0x16EB7: 0x16ED2,
    0x16EB8: 0x16ED3,
}


def _class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(
        chr(start) if start == end else f"{chr(start)}-{chr(end)}" for start, end in ranges
    )


# A token: a maximal run of letters, numbers, "_" and "-" (Python's \w is exactly \p{L}, \p{N}
# and "_" of its own Unicode version; tests/vault/test_ranking.py checks every code point).
# Compiled on first use. Astral ranges cost the regex engine a comparison each for every
# character outside \w, so text without astral characters (most non-ASCII text) uses a class
# without them, and ASCII text the cheapest class (see words); each gives the same runs there.
WORD_RUN = LazyPattern(f"[\\w\\-{_class(WORD_RANGES_ADDED)}]+")
_BMP_RUN = LazyPattern(
    f"[\\w\\-{_class(tuple(pair for pair in WORD_RANGES_ADDED if pair[1] <= 0xFFFF))}]+"
)
_ASCII_RUN = LazyPattern(r"[0-9a-z_-]+")
_ASTRAL = LazyPattern("[\U00010000-\U0010ffff]")


def _spans(codes: list[int], gap: int = 32) -> tuple[tuple[int, int], ...]:
    """Sorted codes as a few ranges (nearby ones merged): a cheap superset to search for."""
    spans: list[list[int]] = []
    for code in sorted(codes):
        if spans and code - spans[-1][1] <= gap:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return tuple((start, end) for start, end in spans)


# Where a capital of LOWER_ADDED may be (four ranges; translate then maps exactly the capitals)
_UPPER_ADDED = LazyPattern(f"[{_class(_spans(list(LOWER_ADDED)))}]")
_LOWER_TABLE = {upper: chr(lower) for upper, lower in LOWER_ADDED.items()}


def lower(text: str) -> str:
    """``text.toLowerCase()`` as the reference computes it (Unicode 17.0)."""
    lowered = text.lower()
    if lowered.isascii() or _UPPER_ADDED.search(lowered) is None:
        return lowered
    return lowered.translate(_LOWER_TABLE)


def words(lowered: str) -> list[str]:
    """The maximal runs of letters, numbers, ``_`` and ``-`` of lower-cased text, in order."""
    if lowered.isascii():  # the same runs, from a pattern that is cheap to compile
        return _ASCII_RUN.findall(lowered)
    if _ASTRAL.search(lowered) is None:
        return _BMP_RUN.findall(lowered)
    return WORD_RUN.findall(lowered)


def tokenize(text: str) -> list[str]:
    """The reference's tokens of ``text``: lower-cased maximal runs of letters, numbers, ``_``
    and ``-`` (with repeats, in order)."""
    return words(lower(text))
