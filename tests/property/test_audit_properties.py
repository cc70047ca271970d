"""Properties of the audit and the timeline over random legal matches (Hypothesis)."""

from __future__ import annotations

import zlib

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from buraco_log.audit import Integrity, audit_events, audit_log, diff_events
from buraco_log.events import AnyEvent, HandEnded, encode_many
from buraco_log.log import head_digest
from buraco_log.reducer import replay
from buraco_log.timeline import Timeline
from tests import brokenlogs as bl
from tests.play import random_match

SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PRESETS = st.sampled_from([("biriba", 4), ("thirteen", 2), ("burako", 2), ("mega", 2),
                           ("burraco", 4), ("bossa-nova", 3)])


def intact(events: list[AnyEvent]) -> Integrity:
    return Integrity("sealed", "binary", len(events), 1, head_digest(events))


@SETTINGS
@given(PRESETS, st.integers(0, 10_000), st.integers(1, 16), st.data())
def test_a_jump_from_any_snapshot_equals_the_full_replay(
        preset: tuple[str, int], seed: int, every: int, data: st.DataObject) -> None:
    events = random_match(preset[0], preset[1], seed, max_hands=1)
    tl = Timeline(events, snapshot_every=every)
    seq = data.draw(st.integers(0, len(events) - 1))
    assert tl.state_at(seq) == replay(events[: seq + 1])


@SETTINGS
@given(PRESETS, st.integers(0, 10_000))
def test_random_legal_play_audits_clean(preset: tuple[str, int], seed: int) -> None:
    events = random_match(preset[0], preset[1], seed, max_hands=1)
    v = audit_events(events, intact(events))
    assert v.ok, v.findings


@SETTINGS
@given(PRESETS, st.integers(0, 10_000), st.integers(-300, 300).filter(bool))
def test_any_wrong_recorded_score_is_found_with_its_exact_difference(
        preset: tuple[str, int], seed: int, delta: int) -> None:
    events = random_match(preset[0], preset[1], seed, max_hands=1)
    i, end = next((i, e) for i, e in enumerate(events) if isinstance(e, HandEnded))
    assert end.scores is not None
    events[i] = msgspec.structs.replace(end, scores=(end.scores[0] + delta, *end.scores[1:]))
    v = audit_events(events, intact(events))
    assert [f.rule for f in v.findings] == ["score.mismatch"]
    assert v.scoring.hands[0].sides[0].difference == delta


@SETTINGS
@given(PRESETS, st.integers(0, 10_000), st.data())
def test_a_cut_copy_is_a_prefix_of_the_whole(preset: tuple[str, int], seed: int,
                                             data: st.DataObject) -> None:
    events = random_match(preset[0], preset[1], seed, max_hands=1)
    n = data.draw(st.integers(0, len(events) - 1))
    assert diff_events(events, events[:n]) == (
        events[n].seq, (f"copy b ends after {n} events; the other goes on",), "b")
    assert diff_events(events, events) == (None, (), None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=3))
def test_a_forged_record_never_crashes_the_audit(tmp_path_factory: pytest.TempPathFactory,
                                                 flips: list[tuple[int, int]]) -> None:
    """Bytes changed inside an unsealed record whose checksums were fixed up: whatever they
    decode to, the audit returns a verdict (it never raises)."""
    path = tmp_path_factory.mktemp("forged") / "m.log"
    bl.write(path, EVENTS, sealed=False)
    data = bytearray(path.read_bytes())
    off, hsize, length = bl.segment_offsets(path)[0]
    for where, value in flips:
        data[off + hsize + where % length] = value
    payload = bytes(data[off + hsize : off + hsize + length])
    head = bytearray(data[off : off + hsize])
    head[-8:-4] = zlib.crc32(payload).to_bytes(4, "little")
    head[-4:] = zlib.crc32(bytes(head[:-4])).to_bytes(4, "little")
    data[off : off + hsize] = head
    path.write_bytes(bytes(data))
    v = audit_log(path)
    assert v.ok == (not v.findings)
    if v.integrity.status == "unsealed" and payload != PAYLOAD:
        assert v.events == len(EVENTS)


EVENTS = bl.match("thirteen", 2, 3, max_hands=1)
PAYLOAD = encode_many(EVENTS)
