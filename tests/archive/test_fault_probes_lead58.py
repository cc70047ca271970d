"""Lead probes of round 58: the query's kernel confinement starts no process of its own."""

from __future__ import annotations

import subprocess

import pytest

from buraco_log.archive import confine


def test_finding_the_c_library_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ctypes.util.find_library`` runs ``ldconfig -p`` in a child: a Ctrl-C meanwhile left it
    unreaped in the command's process group after `query` had ended (a CI run's signal probe
    saw "a process of the group outlived the command"). The library is the one the process
    holds already."""
    def no_process(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process started: {args!r}")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    assert confine.abi() >= 0
