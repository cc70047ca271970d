"""Probe 45 of the library's face, as a user's script meets it (`import buraco_log`).

- Every ```python block of the README and docs/ is type-checked with ``mypy --strict`` as a
  user's file importing the package (test_docs.py runs them; nothing checked their types).
- ``import buraco_log`` had a module ``__getattr__`` that mypy reads as "any name is Any": a
  misspelt ``from buraco_log import FORMAT_VERSON`` passed ``mypy --strict``.
- A documented call given a bad input raises the documented class, with a message naming the
  file or seq, and prints nothing. ``log.Writer(None)`` and ``read_jsonl(None)`` took the path
  as the text ``"None"`` (a log named ``None`` was created or read in the working directory),
  and a bytes path as ``"b'x.blog'"``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from buraco_log import audit, log
from buraco_log.cards import deck, parse_card
from buraco_log.dealer import FairDealer, deal_seeded
from buraco_log.errors import (
    ArchiveError,
    CardParseError,
    DealError,
    LogFormatError,
    PositionError,
    RulesError,
)
from buraco_log.expert import views
from buraco_log.jsonl import read_jsonl
from buraco_log.log import read_events
from buraco_log.moves import legal_moves
from buraco_log.recorder import Recorder
from buraco_log.reducer import replay, state_at
from buraco_log.review import review_events
from buraco_log.rules import preset
from buraco_log.signing.keys import SigningError, load_signer
from buraco_log.simulate import simulate_match
from buraco_log.state import view
from buraco_log.timeline import Timeline
from tests.docs.blocks import PAGES, blocks, is_fragment

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "examples" / "golden" / "biriba.jsonl"
MATCH = ROOT / "examples" / "sim" / "classic-2p-000000.blog"

# A user's own file, beside the doc blocks: what mypy must refuse and what it must know.
USER = """\
import buraco_log
from buraco_log import FORMAT_VERSON
reveal_type(buraco_log.FORMAT_VERSION)
buraco_log.audit_log("match.blog")
"""


def _python_blocks() -> list[tuple[str, str]]:
    """(file stem, text) of every ```python block of the pages that is not a fragment."""
    found = []
    for page in PAGES:  # README.md and every page of docs/
        for block in blocks(page):
            if block.lang == "python" and not is_fragment(block):
                found.append((f"{page.stem.replace('-', '_')}_{block.line}", block.text))
    return found


def _mypy(tmp: Path, sources: list[tuple[str, str]]) -> str:
    """One ``mypy --strict`` run over ``sources`` (file stem, text), as a user's files.

    The package is found on MYPYPATH through a link, as a type checker finds an installed one:
    the editable install's import hook is invisible to mypy."""
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "site").mkdir(parents=True)
    (tmp / "site" / "buraco_log").symlink_to(ROOT / "buraco_log")
    files = []
    for stem, text in sources:
        (tmp / f"{stem}.py").write_text(text)
        files.append(f"{stem}.py")
    (tmp / "mypy.ini").write_text("[mypy]\n")  # the user's project: no setting of ours
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini",
         "--cache-dir", str(tmp / "cache"), *files],
        cwd=tmp, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "MYPYPATH": str(tmp / "site")})
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """mypy over every block: the archive's blocks bring in duckdb and more (a minute, cold)."""
    return _mypy(tmp_path_factory.mktemp("mypy"), _python_blocks())


def test_the_pages_still_hold_python_blocks() -> None:
    stems = [stem for stem, _ in _python_blocks()]
    assert len(stems) >= 10, stems
    assert any(stem.startswith("library_") for stem in stems)


@pytest.mark.slow
@pytest.mark.parametrize("stem", [stem for stem, _ in _python_blocks()])
def test_every_python_block_passes_mypy_strict(mypy_output: str, stem: str) -> None:
    mine = [line for line in mypy_output.splitlines() if line.startswith(f"{stem}.py:")]
    assert mine == [], "\n".join(mine)


def test_a_misspelt_name_of_the_package_is_an_error_to_mypy(tmp_path: Path) -> None:
    out = _mypy(tmp_path, [("user_file", USER)])
    mine = "\n".join(line for line in out.splitlines() if line.startswith("user_file"))
    assert 'has no attribute "FORMAT_VERSON"' in mine, out[-2000:]
    assert 'has no attribute "audit_log"' in mine, out[-2000:]
    assert 'Revealed type is "builtins.int"' in mine or 'Revealed type is "int"' in mine, mine


def test_what_all_names_is_there_and_import_buraco_log_stays_bare() -> None:
    """Not even `typing` (2.4 of its 2.7 ms): the package alone, its names when asked for."""
    code = ("import sys\n"
            "before = set(sys.modules)\n"
            "import buraco_log\n"
            "bare = sorted(set(sys.modules) - before)\n"
            "names = {n: type(getattr(buraco_log, n)).__name__ for n in buraco_log.__all__}\n"
            "edge = {'duckdb', 'pyarrow', 'typer', 'rich'} & set(sys.modules)\n"
            "print(bare, names, sorted(edge), set(buraco_log.__all__) <= set(dir(buraco_log)))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True, cwd=ROOT).stdout.strip()
    assert out == "['buraco_log'] {'FORMAT_VERSION': 'int', '__version__': 'str'} [] True", out


# -- the errors of the documented calls ------------------------------------------------------

Call = Callable[[Path], Any]


def _events() -> list[Any]:
    return read_jsonl(str(GOLDEN))


def _record(event: Any) -> None:
    with Recorder("logs") as rec:
        rec.append("t1", event)


def _archive() -> Any:
    from buraco_log import archive  # the edge: duckdb and pyarrow only for this case

    return archive


def _write(tmp: Path, path: Any) -> None:
    with log.Writer(path) as w:
        for event in simulate_match(preset("classic"), 2, seed="api")[:2]:
            w.append(event)


# (name, call given the working directory, the class raised, words its message must hold)
CASES: list[tuple[str, Call, type[BaseException], str]] = [
    ("read_events of a missing file", lambda d: read_events("nope.blog"),
     LogFormatError, "nope.blog"),
    ("read_events of a directory", lambda d: read_events("adir"), LogFormatError, "adir"),
    ("read_events of a torn log", lambda d: read_events("torn.blog"), LogFormatError,
     "torn.blog, byte"),
    ("read_jsonl of a missing file", lambda d: read_jsonl("nope.jsonl"), LogFormatError,
     "nope.jsonl"),
    ("read_jsonl of a file that is no log", lambda d: read_jsonl("bad.jsonl"), LogFormatError,
     "bad.jsonl, byte 0: not a JSON Lines log"),
    ("read_jsonl of None", lambda d: read_jsonl(None), TypeError, "NoneType"),  # type: ignore[arg-type]
    ("read_jsonl of a number", lambda d: read_jsonl(3), TypeError, "int"),  # type: ignore[arg-type]
    ("log.Writer of None", lambda d: _write(d, None), TypeError, "NoneType"),
    ("log.Writer of a directory", lambda d: _write(d, "adir"), LogFormatError, "adir"),
    ("log.verify of a missing file", lambda d: log.verify("nope.blog"), LogFormatError,
     "nope.blog"),
    ("log.write_log of None", lambda d: log.write_log(None, []), TypeError, "NoneType"),  # type: ignore[arg-type]
    ("state_at a negative seq", lambda d: state_at(_events(), -1), PositionError, "seq -1"),
    ("state_at a seq past the end", lambda d: state_at(_events(), 99), PositionError, "seq 99"),
    ("state_at a seq as text", lambda d: state_at(_events(), "3"), PositionError, "'3'"),  # type: ignore[arg-type]
    ("a Timeline's state at seq -2", lambda d: Timeline(_events()).state_at(-2), PositionError,
     "seq -2"),
    ("state.view of a seat the match lacks", lambda d: view(replay(_events()), seat=9),
     ValueError, "seat 9"),
    ("an unknown preset", lambda d: preset("nope"), RulesError, "'nope'"),
    ("a deal at a negative seq", lambda d: deal_seeded(preset("classic"), 2, 0, 0, "x", seq=-1),
     DealError, "-1"),
    ("a deal for a seat count the preset lacks",
     lambda d: deal_seeded(preset("burraco"), 3, 0, 0, "x", seq=1), RulesError, "not 3"),
    ("one string as the player seeds", lambda d: FairDealer(player_seeds="ab"),  # type: ignore[arg-type]
     DealError, "'ab'"),
    ("a card that is no card", lambda d: parse_card("zz"), CardParseError, "'zz'"),
    ("a deck of five jokers", lambda d: deck(5), RulesError, "5"),
    ("explain of a missing log", lambda d: audit.explain("nope.blog", 3), LogFormatError,
     "nope.blog"),
    ("explain of a negative seq", lambda d: audit.explain("match.blog", -1), PositionError,
     "seq -1"),
    ("diff of a directory", lambda d: audit.diff_logs("adir", "match.blog"), LogFormatError,
     "adir"),
    ("audit_many of one path", lambda d: audit.audit_many("match.blog"), TypeError,  # type: ignore[arg-type]
     "match.blog"),
    ("review_events of a seat the match lacks",
     lambda d: review_events(read_events("match.blog"), 9), ValueError, "seat 9"),
    ("a Recorder in a file", lambda d: Recorder("match.blog"), NotADirectoryError, "match.blog"),
    ("a Recorder given no event", lambda d: _record(None), TypeError, "NoneType"),
    ("load_signer of a missing key", lambda d: load_signer("nokey.key"), SigningError,
     "nokey.key"),
    ("archive.query of a missing archive", lambda d: _archive().query("noarch", "SELECT 1"),
     ArchiveError, "noarch"),
]

# The rules engine, the simulator, the dealer and the expert: a wrong type reached an attribute
# deep inside and came out as a bare AttributeError.
WRONG_TYPES = [
    ("replay of events that are no events", lambda d: replay(["a"]), TypeError, "str"),  # type: ignore[list-item]
    ("legal_moves of no state", lambda d: legal_moves(None), TypeError, "NoneType"),  # type: ignore[arg-type]
    ("simulate_match of no rules", lambda d: simulate_match(None, 2, seed="x"), TypeError,  # type: ignore[arg-type]
     "NoneType"),
    ("deal_seeded of no rules", lambda d: deal_seeded(None, 2, 0, 0, "x", seq=1), TypeError,  # type: ignore[arg-type]
     "NoneType"),
    # a seat the match lacks has no decisions: no error, where review_events names it
    ("expert.views of a seat the match lacks", lambda d: list(views(read_events("match.blog"), 9)),
     ValueError, "seat 9"),
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(MATCH, tmp_path / "match.blog")
    (tmp_path / "torn.blog").write_bytes(MATCH.read_bytes()[:300])
    (tmp_path / "bad.jsonl").write_text("garbage\n")
    (tmp_path / "adir").mkdir()
    (tmp_path / "logs").mkdir()  # the recorder's
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(workdir: Path, capfd: pytest.CaptureFixture[str], call: Call,
           raised: type[BaseException], words: str) -> None:
    before = sorted(p.name for p in workdir.iterdir())
    with pytest.raises(BaseException) as caught:
        call(workdir)
    assert type(caught.value) not in (KeyError, IndexError, AttributeError, SystemExit), \
        repr(caught.value)
    assert isinstance(caught.value, raised), repr(caught.value)
    assert words in str(caught.value), str(caught.value)
    assert capfd.readouterr() == ("", "")
    # nothing made in the working directory: no log named "None" or "b'x.blog'"
    assert sorted(p.name for p in workdir.iterdir()) == before


@pytest.mark.parametrize(("name", "call", "raised", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_bad_input_raises_the_documented_error_naming_it(
        workdir: Path, capfd: pytest.CaptureFixture[str], name: str, call: Call,
        raised: type[BaseException], words: str) -> None:
    _check(workdir, capfd, call, raised, words)


@pytest.mark.parametrize(("name", "call", "raised", "words"), WRONG_TYPES,
                         ids=[c[0] for c in WRONG_TYPES])
def test_a_wrong_type_is_no_bare_attribute_error(
        workdir: Path, capfd: pytest.CaptureFixture[str], name: str, call: Call,
        raised: type[BaseException], words: str) -> None:
    _check(workdir, capfd, call, raised, words)


def test_a_bytes_path_names_the_file_it_is(workdir: Path) -> None:
    """A bytes path is the file those bytes name, not one named ``b'...'``."""
    _write(workdir, b"new.blog")
    assert (workdir / "new.blog").is_file()
    assert not (workdir / "b'new.blog'").exists()
    shutil.copy(GOLDEN, workdir / "g.jsonl")
    assert len(read_jsonl(b"g.jsonl")) == len(_events())  # type: ignore[arg-type]


def test_the_head_log_format_shows_is_the_head_of_its_events(tmp_path: Path) -> None:
    """The head depends on the events alone: the page's comment must be that of its match."""
    import re

    page = (ROOT / "docs" / "log-format.md").read_text()
    shown = re.search(r"LogInfo\(events=(\d+), sealed=True, head='([0-9a-f]+)\.\.\.'", page)
    assert shown, "log-format.md no longer shows verify's LogInfo"
    events = simulate_match(preset("classic"), 2, seed="docs")  # as the page's block
    info = log.write_log(tmp_path / "new.blog", events)
    assert (info.events, info.head[:len(shown[2])]) == (int(shown[1]), shown[2])
