"""Every refusal the engine can give is documented and seen refused, and two rulings held both
ways.

- The rule ids the reducer and the meld reader raise are exactly the ones docs/rules.md lists
  under "Every refusal, by rule id"; every id docs/rules.md names of a refusal's family is one
  the engine knows; the dealer's audit ids are in docs/deals.md.
- Each id the engine raises is asserted by some test as a refusal: a string the test code uses
  (not a docstring or comment), found by reading the tests' syntax trees.
- The pile's former top card thrown back at once (RULES.md §4 is silent, the seeds too; the
  documented ruling: legal under a free pile, refused under must-use-top), each preset.
- The second morto named by its phase in the refusal a referee reads: a going out recorded as
  a morto says the side took its morto and where, and what the move would be instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from buraco_log.cards import parse_cards
from buraco_log.ruleids import RULES
from tests.scenario import Scenario, refused

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "buraco_log"
DOC = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
DEALS = (ROOT / "docs" / "deals.md").read_text(encoding="utf-8")
RULE_ID = re.compile(r"""["']([a-z_]+\.[a-z_]+)["']""")
ENGINE = ("reducer.py", "melds.py", "moves.py", "scoring.py", "state.py", "combos.py",
          "wilds.py")


def ids_in(name: str) -> set[str]:
    return {m for m in RULE_ID.findall((SRC / name).read_text()) if m in RULES}


def engine_ids() -> set[str]:
    return set().union(*(ids_in(n) for n in ENGINE))


def documented_refusals() -> set[str]:
    section = DOC.split("## Every refusal, by rule id", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`([a-z_]+\.[a-z_]+)`", section)) - {"deal.*"}


def test_the_engine_raises_the_ids_it_should() -> None:
    ids = engine_ids()
    assert {"turn.not_your_turn", "meld.run_wraps", "pile.must_use_top", "match.over"} <= ids
    assert len(ids) > 50


def test_docs_list_exactly_the_refusals_the_engine_raises() -> None:
    listed, raised = documented_refusals(), engine_ids()
    assert sorted(raised - listed) == [], "raised but not in docs/rules.md's list"
    assert sorted(listed - raised) == [], "in docs/rules.md's list but never raised"


def test_every_refusal_id_docs_rules_names_anywhere_is_one_the_engine_knows() -> None:
    families = {i.split(".")[0] for i in engine_ids()}
    named = {m for m in re.findall(r"`([a-z_]+\.[a-z_]+)`", DOC) if m.split(".")[0] in families}
    dealer = ids_in("dealer.py") - engine_ids()  # the audit's deal.* findings
    assert sorted(named - engine_ids() - dealer) == []


def test_the_dealers_audit_ids_are_in_docs_deals() -> None:
    dealer = ids_in("dealer.py") - engine_ids()
    assert dealer, "the dealer's audit ids were not found"
    assert sorted(i for i in dealer if f"`{i}`" not in DEALS) == []


def _test_strings(path: Path) -> set[str]:
    """The strings a test file's code uses: no docstring, no comment."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            out.add(node.value)
    return out


# A line that asserts a refusal: the scenario helpers, the error's rule, a CLI line's [rule].
ASSERTING = re.compile(r"""(illegal|refused|refuses|_refused|names)\(|\.rule\b|rule=|"rule"|\[""")


def asserted_ids() -> set[str]:
    """Rule ids some test expects. First the lines that assert a refusal; then, for the ids
    not found so, the strings the test code uses (parsed, so no docstring or comment counts),
    alone or as ``[rule]``, parsing only files whose text names such an id (parsing them all
    takes seconds)."""
    ids = engine_ids()
    quoted = re.compile(r"""["'\[]([a-z_]+\.[a-z_]+)["'\]]""")
    texts = {path: path.read_text(encoding="utf-8")
             for path in sorted((ROOT / "tests").rglob("*.py"))
             if path.name != Path(__file__).name}
    found: set[str] = set()
    for text in texts.values():
        for m in quoted.finditer(text):
            if m.group(1) in ids and m.group(1) not in found:
                line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end())]
                if ASSERTING.search(line):
                    found.add(m.group(1))
    for path, text in sorted(texts.items(), key=lambda item: len(item[1])):
        if not (set(quoted.findall(text)) & ids) - found:
            continue
        for string in _test_strings(path):
            if string in ids:
                found.add(string)
            else:
                found |= {i for i in re.findall(r"\[([a-z_]+\.[a-z_]+)\]", string) if i in ids}
    return found


def test_every_id_the_engine_raises_is_seen_refused_by_some_test() -> None:
    missing = sorted(engine_ids() - asserted_ids())
    assert missing == [], f"no test expects these refusals: {missing}"


def test_the_test_scan_reads_code_not_docstrings(tmp_path: Path) -> None:
    f = tmp_path / "test_x.py"
    f.write_text('"""match.over"""\n# pile.empty\ndef t():\n    """hand.over"""\n'
                 '    assert rule == "turn.wrong_phase" and "[meld.run_wraps]" in out\n')
    assert _test_strings(f) == {"turn.wrong_phase", "[meld.run_wraps]"}


# ------------------------------------------------------------------ the former top thrown back
# docs/rules.md "The card just taken may be thrown back": RULES.md §4 and the seeds forbid no
# card as the discard after a free pile; under must-use-top the top is laid that turn first.

FREE = ("classic", "biriba", "bossa-nova", "burraco", "mega", "burako")
MUST_USE_TOP = ("thirteen", "thirteen-quick")


def _pile_of_one(name: str) -> Scenario:
    """Seat 1 faces a pile whose top is 9h (seat 0 threw it); seat 1 holds 9c 9d."""
    s = Scenario(name, hands={0: "9h 4c", 1: "9c 9d 5s"}, stock="Kd Ks",
                 upcard="3d" if name in ("thirteen", "thirteen-quick", "burraco", "mega")
                 else None)
    s.draw("Kd").discard("9h")
    return s


@pytest.mark.parametrize("name", FREE)
def test_the_former_top_of_a_free_pile_may_be_thrown_back_at_once(name: str) -> None:
    s = _pile_of_one(name)
    s.take_pile()
    assert s.state.pile == () and parse_cards("9h")[0] in s.hand(1)
    s.discard("9h")
    assert s.state.pile == parse_cards("9h") and parse_cards("9h")[0] not in s.hand(1)
    assert s.state.phase == "draw" and s.turn == 0


@pytest.mark.parametrize("name", MUST_USE_TOP)
def test_the_former_top_of_a_must_use_top_pile_may_not_be_thrown_back(name: str) -> None:
    s = _pile_of_one(name)
    s.take_pile()
    refused(s, "pile.must_use_top", (s.text("9h"),), "discard", "9h")
    s.meld("9h 9c 9d").discard("5s")  # the twin: laid first, the turn ends
    assert s.state.phase == "draw" and s.turn == 0


# ------------------------------------------------------------------ the second morto, in words

MORTO = ("biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega")
RUN = "3h 4h 5h 6h 7h 8h 9h Th Jh"
MORTO_CARDS = "3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc"


def _morto_taken_directly(name: str, players: int) -> Scenario:
    """Seat 0 lays 4s 4d 4c and a clean run (a canastra), empties its hand and takes the
    side's morto directly at seq 5; it holds the morto's 11 cards."""
    run = RUN + (" Qh Kh" if name.startswith("thirteen") else "")
    s = Scenario(name, players, hands={0: run + " 4s 4d"}, mortos={0: MORTO_CARDS},
                 stock="4c", upcard="3d" if name in UPCARD else None)
    s.draw("4c").meld("4s 4d 4c").meld(run).morto(True)
    assert s.rep.seq == 5 and s.state.morto_taken[0]
    return s


UPCARD = ("thirteen", "thirteen-quick", "burraco", "mega")
ALREADY = ("already took its morto (seq 5)", "going out")


@pytest.mark.parametrize("name", MORTO)
@pytest.mark.parametrize("direct", [True, False])
def test_a_second_morto_at_an_emptied_hand_names_the_first_and_the_going_out(
        name: str, direct: bool) -> None:
    s = _morto_taken_directly(name, 2)
    s.meld(MORTO_CARDS)  # the morto laid whole: the hand is empty again
    refused(s, "morto.not_available", ALREADY, "morto", direct)
    s.go_out()  # the twin: going out
    assert s.state.phase == "out"


@pytest.mark.parametrize("name", MORTO)
def test_a_second_morto_while_the_hand_holds_the_first_says_it_was_taken(name: str) -> None:
    """It said only "still holds 11 cards: taking the morto comes only once the hand is
    empty", as if the side's morto were still to come."""
    s = _morto_taken_directly(name, 2)
    refused(s, "turn.wrong_phase", ("still holds 11 cards", *ALREADY), "morto", True)
    assert "comes only once" not in str(s.last_error)
    s.discard("Kc")  # the twin: the turn goes on to its discard
    assert s.turn == 1


@pytest.mark.parametrize("name", MORTO)
def test_a_partners_morto_before_the_draw_says_the_side_took_it(name: str) -> None:
    s = _morto_taken_directly(name, 4)
    s.discard("Kc").pass_turn()
    assert s.turn == 2
    refused(s, "turn.must_draw_first", ("must draw", "side 0", *ALREADY), "morto", True)
    s.draw()  # the twin: the partner draws
    refused(s, "turn.wrong_phase", ("side 0", *ALREADY), "morto", False)


@pytest.mark.parametrize("name", MORTO)
def test_a_morto_not_yet_taken_keeps_the_phase_words(name: str) -> None:
    s = Scenario(name, upcard="3d" if name in UPCARD else None)
    s.draw()
    refused(s, "turn.wrong_phase", ("comes only once the hand is empty",), "morto", True)
    assert "already took" not in str(s.last_error)
