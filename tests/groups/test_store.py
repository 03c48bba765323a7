"""The group tables' queries on both stores: prefixes, claims, the pick, membership lookups."""

from __future__ import annotations

import pytest

from ecc.store.base import Store
from ecc.store.groups import UnknownGroup


def _group(store: Store, group_id: str, members: int = 2) -> dict:
    rows = [{"task": f"t{i}", "status": "waiting", "step_name": f"s{i}"} for i in range(members)]
    group = store.insert_group(group_id, rows, kind="set", project_dir="/tmp")
    assert group is not None
    return group


def test_ids_prefixes_and_a_taken_id(store: Store) -> None:
    made = _group(store, "abcd1234")
    assert [m["position"] for m in made["members"]] == [1, 2]
    assert store.insert_group("abcd1234", [], kind="set", project_dir="/tmp") is None
    _group(store, "abce0000")
    assert store.find_group("abcd")["id"] == "abcd1234"
    with pytest.raises(UnknownGroup, match="names several groups"):
        store.find_group("abc")
    with pytest.raises(UnknownGroup, match="no group 'ffff'"):
        store.find_group("ffff")
    with pytest.raises(UnknownGroup):
        store.find_group("ab_%")  # LIKE's wildcards are plain characters here
    assert sorted(g["id"] for g in store.list_groups()) == ["abcd1234", "abce0000"]


def test_a_member_is_claimed_once_and_a_group_picked_once(store: Store) -> None:
    _group(store, "00001111")
    assert store.update_member("00001111", 1, expect="waiting", status="starting")
    assert not store.update_member("00001111", 1, expect="waiting", status="starting")
    assert store.groups_waiting() == ["00001111"]  # its second member still waits
    store.update_member("00001111", 2, status="skipped", note="why")
    assert store.groups_waiting() == []
    assert store.record_pick("00001111", "aaaaaaaaaaaa")
    assert not store.record_pick("00001111", "bbbbbbbbbbbb")
    assert store.find_group("0000")["picked_session_id"] == "aaaaaaaaaaaa"
    with pytest.raises(ValueError):
        store.update_member("00001111", 1, state="x")


def test_membership_of_many_sessions_and_the_check_lookup(store: Store) -> None:
    _group(store, "22223333", members=3)
    ids = [f"{n:012x}" for n in range(1200)]
    for position, session_id in zip((1, 2), (ids[3], ids[1100]), strict=True):
        store.update_member("22223333", position, session_id=session_id, status="started")
    assert store.group_ids_of(ids) == {ids[3]: "22223333", ids[1100]: "22223333"}
    assert store.group_ids_of([]) == {}
    assert store.member_check(ids[3]) is None  # the group has no check
    store._exec("UPDATE session_groups SET check_command = 'make test' WHERE id = '22223333'")
    found = store.member_check(ids[1100])
    assert found is not None and found["position"] == 2
    assert found["check_command"] == "make test" and found["check_timeout_secs"] == 600


def test_a_claim_whose_starter_died_is_failed_and_the_sequence_ends(store: Store) -> None:
    """A process killed between claiming a member and recording its session left it
    ``starting`` for ever: the group never finished and the steps after it never ran."""
    from ecc.runtime.config.model import get_config
    from ecc.sessions import groups

    rows = [{"task": f"t{i}", "status": "waiting", "step_name": ""} for i in range(3)]
    assert store.insert_group("5eq00001", rows, kind="sequence", project_dir="/tmp")
    assert store.insert_group("5eq00002", rows, kind="sequence", project_dir="/tmp")
    for gid in ("5eq00001", "5eq00002"):
        assert store.update_member(gid, 1, expect="waiting", status="starting")
    long_ago = "2026-01-01T00:00:00.000Z"
    store._exec(
        "UPDATE group_members SET updated_at = ? WHERE group_id = ? AND position = 1",
        (long_ago, "5eq00001"),
    )
    assert groups.advance(store, get_config()) == []
    stale = store.find_group("5eq00001")
    assert [(m["status"], m["note"]) for m in stale["members"]] == [
        ("failed", "the process starting it ended before its session was recorded"),
        ("skipped", "step 1 did not start"),
        ("skipped", "step 1 did not start"),
    ]
    assert groups.finished(stale, {})
    fresh = store.find_group("5eq00002")  # claimed a moment ago: its starter is at work
    assert [m["status"] for m in fresh["members"]] == ["starting", "waiting", "waiting"]
