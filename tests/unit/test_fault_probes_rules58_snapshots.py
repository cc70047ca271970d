"""``Replayer(snapshot_every=N)``: each snapshot reads back as the whole table at its seq,
the results of every hand ended before it included, though the snapshots keep those results
once for all (``state.Snapshots``; each used to hold its own copy, memory quadratic in the
hands: tests/log/test_fault_probes_scale57.py measures it)."""

from __future__ import annotations

from buraco_log.reducer import Replayer
from buraco_log.state import Snapshots
from tests.log import longmatch


def test_every_snapshot_is_the_table_at_its_seq_results_and_all() -> None:
    events = list(longmatch.events(400, hand_size=50))  # a hand ended every 10 events
    snap = Replayer(snapshot_every=7)
    snap.run(events)
    table = Replayer()
    seen = 0
    for event in events:
        table.step(event)
        if event.seq % 7 == 0:
            assert snap.snapshots[event.seq] == table.state(), event.seq
            seen += 1
    assert seen == len(snap.snapshots) and len(table.state().results) >= 30
    assert sorted(snap.snapshots) == [e.seq for e in events if e.seq % 7 == 0]
    # step() keeps them the same way as run()
    stepped = Replayer(snapshot_every=7)
    for event in events:
        stepped.step(event)
    assert stepped.snapshots == snap.snapshots


def test_the_snapshots_share_one_copy_of_the_results() -> None:
    events = list(longmatch.events(400, hand_size=50))
    snap = Replayer(snapshot_every=4)
    snap.run(events)
    assert isinstance(snap.snapshots, Snapshots)
    kept = [bare for bare, _ in snap.snapshots._bare.values()]
    assert all(bare.results == () for bare in kept)  # none holds a copy of its own
    assert len(snap.snapshots._results) == len(snap.state().results)
