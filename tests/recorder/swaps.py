"""Another directory put at a recorder's path exactly between its look and what it then does."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from buraco_log.recorder import Recorder


def replace_after_next_look(rec: Recorder, live: Path, moved: Path,
                            by: str) -> Callable[[], None]:
    """Arm ``rec`` (by calling what this returns) so that the next look at its directory from
    its method ``by`` answers "still here", and then the directory is renamed to ``moved`` and
    a new one made at ``live``."""
    look = rec._directory_gone
    armed = [False]

    def looked() -> str:
        said = look()
        if armed[0] and sys._getframe(1).f_code.co_name == by:
            armed[0] = False
            os.rename(live, moved)
            live.mkdir()
        return said

    rec._directory_gone = looked  # type: ignore[method-assign]

    def arm() -> None:
        armed[0] = True
    return arm
