"""Secret shapes (§3; 8.1 #33-35) and the safe filesystem primitives (§2.7-2.9; 8.1 #42-50)."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecc.contract.errors import EccError
from ecc.vault import safefs
from ecc.vault import secrets as secrets_module
from ecc.vault.secrets import find_potential_secrets, find_secrets_in_memory

GHP = "ghp_" + "A1" * 18


def test_private_key_header_detected() -> None:
    """8.1 #34."""
    assert find_potential_secrets("-----BEGIN PRIVATE KEY-----\nabc") == ["private key"]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("sk-" + "a" * 24, "provider API key"),
        ("SK-" + "a" * 24, "provider API key"),
        ("rk_live_" + "a" * 16, "Stripe key"),
        ("npm_" + "a" * 20, "npm token"),
        ("hf_" + "a" * 20, "Hugging Face token"),
        (GHP, "GitHub token"),
        ("github_pat_" + "a" * 16, "GitHub token"),
        ("AIza" + "a" * 16, "Google API key"),
        ("xoxb-" + "1" * 10, "Slack token"),
        ("AKIA" + "A" * 16, "AWS access key"),
    ],
)
def test_ten_shapes(text: str, label: str) -> None:
    assert find_potential_secrets(f"x {text} y") == [label]


def test_token_at_line_start_is_caught_unlike_the_reference() -> None:
    """§9.1: scanning raw values catches a token after a newline or a tab."""
    memory = {"body": f"first line\n{GHP}\n", "title": "t", "tags": ["x"]}
    assert find_secrets_in_memory(memory) == ["GitHub token"]
    assert find_secrets_in_memory({"body": f"a\t{'npm_' + 'b' * 20}"}) == ["npm token"]


def test_labels_deduplicated_in_table_order() -> None:
    text = f"{'AKIA' + 'B' * 16} {GHP} github_pat_{'c' * 20} sk-{'d' * 20}"
    assert find_potential_secrets(text) == ["provider API key", "GitHub token", "AWS access key"]
    assert find_potential_secrets(None) == []


def test_file_identity_rules() -> None:
    """8.1 #42-44, #49: device 0 is unknown; inodes compared at full precision."""
    same = SimpleNamespace
    assert safefs.same_file_identity(same(st_dev=0, st_ino=7), same(st_dev=1644385068, st_ino=7))
    assert safefs.same_file_identity(same(st_dev=0, st_ino=9), same(st_dev=3054669153, st_ino=9))
    assert not safefs.same_file_identity(
        same(st_dev=16777232, st_ino=42), same(st_dev=16777233, st_ino=42)
    )
    assert not safefs.same_file_identity(same(st_dev=5, st_ino=42), same(st_dev=5, st_ino=43))
    big = 2**60
    assert not safefs.same_file_identity(
        same(st_dev=5, st_ino=big + 1), same(st_dev=5, st_ino=big + 2)
    )


def test_safe_reader(tmp_path: Path) -> None:
    """8.1 #45 reads a regular file; #46 refuses a symlink path; #47 refuses bad UTF-8."""
    target = tmp_path / "body.txt"
    target.write_text("hello ✓")
    assert safefs.read_regular_text_file(target, 100, "--body-file") == "hello ✓"
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(EccError, match="non-symlink"):
        safefs.read_regular_text_file(link, 100, "--body-file")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(EccError, match="valid UTF-8"):
        safefs.read_regular_text_file(bad, 100, "--body-file")
    with pytest.raises(EccError, match=r"too large \(101 bytes\)"):
        (tmp_path / "big").write_bytes(b"a" * 101)
        safefs.read_regular_text_file(tmp_path / "big", 100, "--body-file")
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfhi")
    assert safefs.read_regular_text_file(bom, 100, "--body-file") == "hi"


def test_safe_reader_opens_before_any_lstat(tmp_path: Path, monkeypatch) -> None:
    """8.1 #48: without a trusted root the open is the first filesystem operation."""
    target = tmp_path / "f.txt"
    target.write_text("x")
    calls: list[str] = []
    real_open, real_stat = os.open, os.stat
    monkeypatch.setattr(os, "open", lambda *a, **k: (calls.append("open"), real_open(*a, **k))[1])
    monkeypatch.setattr(os, "stat", lambda *a, **k: (calls.append("stat"), real_stat(*a, **k))[1])
    monkeypatch.setattr(
        os,
        "lstat",
        lambda *a, **k: (calls.append("lstat"), real_stat(*a, follow_symlinks=False))[1],
    )
    safefs.read_regular_text_file(str(target), 10, "--body-file")
    assert calls[0] == "open"


def test_fifo_and_directory_refused_without_blocking(tmp_path: Path) -> None:
    """8.1 #50: a FIFO fails fast with the regular-file message."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(EccError, match="regular, non-symlink file"):
        safefs.read_regular_text_file(fifo, 10, "--body-file")
    assert time.monotonic() - started < 2
    with pytest.raises(EccError, match="regular, non-symlink file"):
        safefs.read_regular_text_file(tmp_path, 10, "--body-file")


def test_create_only_never_overwrites_or_follows(tmp_path: Path) -> None:
    """8.1 #23 at the primitive level: an existing (dangling) symlink blocks the write."""
    tmp_path = tmp_path / "dir"
    tmp_path.mkdir()
    fd = safefs.open_dir(tmp_path)
    try:
        safefs.create_only(fd, "a.md", b"one", exists_message="exists", label_path="a")
        with pytest.raises(safefs.AlreadyExistsError, match="exists"):
            safefs.create_only(fd, "a.md", b"two", exists_message="exists", label_path="a")
        (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere")
        with pytest.raises(safefs.AlreadyExistsError):
            safefs.create_only(fd, "dangling.md", b"x", exists_message="exists", label_path="d")
    finally:
        os.close(fd)
    assert (tmp_path / "a.md").read_bytes() == b"one"
    assert not (tmp_path / "nowhere").exists()
    assert oct((tmp_path / "a.md").stat().st_mode & 0o777) == oct(0o600 & ~_umask())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "dangling.md"]  # no temp left


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_bounded_stdin_retries() -> None:
    """8.2 #69: two EAGAIN then data -> 4 reads, 2 waits; #70: persistent EAGAIN fails."""
    script = [OSError(errno.EAGAIN, "again"), OSError(errno.EAGAIN, "again"), b"data", b""]
    reads: list[int] = []
    sleeps: list[float] = []

    def read(fd: int, n: int) -> bytes:
        reads.append(n)
        item = script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    assert safefs.read_bounded_stdin(100, read=read, sleep=sleeps.append) == "data"
    assert (len(reads), len(sleeps)) == (4, 2)

    reads.clear()
    sleeps.clear()

    def always(fd: int, n: int) -> bytes:
        reads.append(n)
        raise OSError(errno.EAGAIN, "again")

    with pytest.raises(
        EccError, match=r"standard input remained unavailable|Standard input remained unavailable"
    ):
        safefs.read_bounded_stdin(
            100, read=always, sleep=sleeps.append, retry_delay_ms=1, max_wait_ms=3
        )
    assert (len(reads), len(sleeps)) == (4, 3)


_FRAGMENTS = [
    "sk-", "SK-", "\u212a", "İ", "ghp_", "npm_", "hf_", "AKIA", "xoxb-", "AIza", "github_pat_",
    "sk_live_", "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "A1b2C3d4E5f6G7h8", "0123456789",
    "_", "-", " ", "\n", "\t", ".", "é", "x",
]  # fmt: skip


@given(
    st.lists(st.lists(st.sampled_from(_FRAGMENTS), max_size=8).map("".join), min_size=1, max_size=5)
)
def test_joined_scan_equals_field_by_field(fields: list[str]) -> None:
    """Scanning the fields joined by newlines finds exactly what scanning each one finds."""
    memory = {"title": fields[0], "tags": fields[1:], "body": "".join(reversed(fields))}
    texts = [fields[0], *fields[1:], memory["body"]]
    texts.append(json.dumps(memory, ensure_ascii=False, separators=(",", ":")))
    assert find_secrets_in_memory(memory) == secrets_module._scan(texts, prefilter=False)


@given(st.lists(st.sampled_from([*_FRAGMENTS, "Sk-", "gHo_", "XOXP-", "asIA", "Ke"]), max_size=12))
def test_the_marker_prefilter_changes_no_result(parts: list[str]) -> None:
    """Skipping texts that hold no pattern's literal part finds exactly what a full scan finds."""
    text = "".join(parts)
    assert secrets_module._scan([text]) == secrets_module._scan([text], prefilter=False)


def test_safe_reader_reads_a_small_file_at_once_and_a_grown_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read short of the request at the size fstat gave is the file's end (no read to say
    so); a file larger than fstat said (grown since) is still read to its end."""
    reads: list[int] = []
    real_read = os.read

    def counting(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        reads.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counting)
    chunk = safefs.READ_CHUNK
    for size in (0, 1, 700, chunk - 1, chunk, chunk + 1, 2 * chunk + 5):
        path = tmp_path / f"f{size}.md"
        text = "".join(chr(97 + n % 26) for n in range(size))
        path.write_text(text)
        reads.clear()
        assert safefs.read_regular_text_file(path, 4 * chunk, "doc") == text
        assert sum(reads) == size
        if 0 < size < chunk:
            assert reads == [size]  # one read: no empty read after it
    grown = tmp_path / "grown.md"
    text = "x" * (2 * chunk + 5)
    grown.write_text(text)
    real_fstat = os.fstat

    def stale(fd: int) -> os.stat_result:
        fields = list(real_fstat(fd))
        fields[6] = chunk  # st_size as before the file grew
        return os.stat_result(fields)

    monkeypatch.setattr(os, "fstat", stale)
    assert safefs.read_regular_text_file(grown, 4 * chunk, "doc") == text


def _swapping_open(monkeypatch: pytest.MonkeyPatch, path: Path, other: Path) -> None:
    """``os.open`` that puts ``other`` in ``path``'s place right after opening it."""
    real_open = os.open

    def opening(*args, **kwargs):
        fd = real_open(*args, **kwargs)
        os.replace(other, path)
        return fd

    monkeypatch.setattr(os, "open", opening)


def test_a_path_must_still_name_the_file_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path's directories can change between the open and the read: the path is looked up
    again, and a file swapped in meanwhile is refused."""
    (tmp_path / "dir").mkdir()
    path = tmp_path / "dir/doc.md"
    path.write_text("opened")
    (tmp_path / "other.md").write_text("swapped in")
    _swapping_open(monkeypatch, path, tmp_path / "other.md")
    with pytest.raises(EccError, match="must remain a regular, non-symlink file"):
        safefs.read_regular_text_file(path, 100, "memory document")


def test_a_name_in_a_held_directory_is_read_as_it_was_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative to a held directory descriptor a single name's open is the whole lookup (no
    directory on the way, no symlink followed): the file opened is read, not looked up again."""
    (tmp_path / "doc.md").write_text("opened")
    (tmp_path / "other.md").write_text("swapped in")
    directory = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        (tmp_path / "link.md").symlink_to(tmp_path / "doc.md")
        with pytest.raises(EccError, match="regular, non-symlink file"):
            safefs.read_regular_text_file("link.md", 100, "memory document", dir_fd=directory)
        _swapping_open(monkeypatch, tmp_path / "doc.md", tmp_path / "other.md")
        text = safefs.read_regular_text_file("doc.md", 100, "memory document", dir_fd=directory)
    finally:
        os.close(directory)
    assert text == "opened"
    assert (tmp_path / "doc.md").read_text() == "swapped in"
