"""Probe 41c, the original Portuguese texts (``seeds/``) taken at their word: each test quotes a
concrete statement of a seed and plays it through the reducer, accepted and refused, in every
preset the statement reaches (RULES.md §2, §5, §7, §8).
"""

from __future__ import annotations

import pytest

from buraco_log.errors import IllegalMoveError
from buraco_log.reducer import Replayer
from buraco_log.rules import PRESETS
from tests.play import start
from tests.scenario import Scenario, refused

ALL = ("classic", "biriba", "bossa-nova", "thirteen", "thirteen-quick", "burraco", "mega",
       "burako")

# The seeds' own examples of melds (000 and 003 share most of them).
SEED_MELDS = (
    "3c 4c 5c 6c",  # 000, 003: "3, 4, 5, e 6 de paus"
    "Th Jh Qh",  # 000, 003: "10, valete e dama de copas"
    "Qd 2d Ad",  # 000 "dama, dois e ás"; 003 "Dama-dois-Ás de Ouros": the 2 stands for the K
    "7h 7s 2c",  # 000, 003: "sete, sete e dois"
    "Qh Qs Qd",  # 002: "Dama de Copas – Dama de Espadas – Dama de Ouros"
)


@pytest.mark.parametrize("cards", SEED_MELDS)
@pytest.mark.parametrize("name", ALL)
def test_the_seeds_example_melds_are_legal_everywhere(name: str, cards: str) -> None:
    s = Scenario(name, hands={0: cards}, stock="9s")
    s.draw("9s").meld(cards)
    assert len(s.state.melds[0]) == 1 and len(s.hand(0)) == s.rules.hand_size + 1 - len(
        cards.split())


@pytest.mark.parametrize("name", ALL)
def test_the_seeds_forbidden_melds_are_refused_everywhere(name: str) -> None:
    """002 "Rei – Ás – 2 – 3 não é permitido"; 003 trincas "exceto do valor 2"; 001/002 "no
    máximo um curinga" per meld."""
    s = Scenario(name, hands={0: "Kh Ah 2h 3h 2s 2d 7c 7d"}, stock="2c")
    s.draw("2c")
    refused(s, "meld.run_wraps", (), "meld", "Kh Ah 2h 3h")
    refused(s, "meld.set_of_twos", (), "meld", "2s 2d 2c")
    refused(s, "meld.too_many_wilds", (), "meld", "7c 7d 2s 2d")
    s.meld("Ah 2h 3h")  # the same cards with no wrap: A-2-3, the 2 natural
    assert s.state.melds[0][0].kind == "run"


@pytest.mark.parametrize(("name", "allowed"), [(n, r.player_counts) for n, r in PRESETS.items()])
def test_each_preset_seats_the_counts_its_seed_names(name: str, allowed: tuple[int, ...]) -> None:
    """000 "de duas a seis pessoas" (4 and 6 in partnerships; the morto game "quatro pessoas,
    no máximo", "no jogo em três, os mortos também serão três"); 001-004 "2 ou 4"."""
    seed_counts = {"classic": (2, 3, 4, 6), "biriba": (2, 3, 4), "bossa-nova": (2, 3, 4)}
    assert set(allowed) == set(seed_counts.get(name, (2, 4)))
    for n in range(1, 8):
        rep = Replayer()
        if n in allowed:
            rep.step(start(name, n))
            assert rep.state().phase == "between"
            continue
        with pytest.raises(IllegalMoveError) as info:
            rep.step(start(name, n))
        assert info.value.rule == "match.rules"


def _mega4(hands: dict[int, str]) -> Scenario:
    return Scenario("mega", 4, hands=hands, stock="9s 9d 9c 5c")


def test_mega_one_set_of_a_rank_per_side_partner_included() -> None:
    """003 "Não pode baixar dois jogos de trincas do mesmo valor": the side, not the player."""
    s = _mega4({0: "Kh Ks Kd", 1: "Kc Kd Ks", 2: "Kc Kh 2s 4h 5h 6h"})
    s.draw("9s").meld("Kh Ks Kd").discard("9s")
    s.draw("9d").meld("Kc Kd Ks").discard("9d")  # seat 1 is the other side: its own kings
    s.draw("9c")
    refused(s, "meld.second_set_of_rank", (), "meld", "Kc Kh 2s")  # a wild set is a set too
    s.layoff(0, "Kc Kh")  # the kings go onto the side's one set instead
    s.meld("4h 5h 6h")  # a run is no set
    assert len(s.state.melds[0][0].cards) == 5


@pytest.mark.parametrize("name", [n for n in ALL if n != "mega"])
def test_other_presets_allow_a_second_set_of_a_rank(name: str) -> None:
    s = Scenario(name, hands={0: "Kh Ks Kd Kc Kh Ks"}, stock="9s")
    s.draw("9s").meld("Kh Ks Kd").meld("Kc Kh Ks")
    assert len(s.state.melds[0]) == 2


@pytest.mark.parametrize("name", ("mega", "burraco", "burako"))
def test_the_partnership_morto_goes_to_the_first_partner_only(name: str) -> None:
    """003 "Se for jogo de dupla, só recebe o primeiro da dupla a bater"; 004 "cada casal pode
    pegar somente um morto": the partner who empties the hand next goes out instead."""
    s = Scenario(name, 4, hands={0: "3h 4h 5h 6h 7h 8h 9h Ks Kd Kc Th",
                                 2: "Jh Js Jd Qh Qs Qd 5s 6s 7s 8s 9s"}, stock="Kh 8d Ts 5d")
    s.draw("Kh").meld("3h 4h 5h 6h 7h 8h 9h").meld("Ks Kd Kc Kh")
    s.discard("Th").morto(direct=False)
    assert len(s.hand(0)) == s.rules.morto_size and s.turn == 1
    s.pass_turn()
    s.draw("Ts").meld("Jh Js Jd").meld("Qh Qs Qd").meld("5s 6s 7s 8s 9s Ts")
    assert s.hand(2) == ()
    refused(s, "morto.not_available", (), "morto", False)
    refused(s, "morto.not_available", (), "morto", True)
    s.go_out()
    assert s.state.phase == "out" and s.state.went_out == 2


@pytest.mark.parametrize("name", ALL)
def test_a_set_holds_the_eight_copies_of_its_rank_and_one_wild(name: str) -> None:
    """000 "no total, são oito as cartas de um mesmo valor": a set grows to its 8 naturals plus
    the one wild a meld may hold, and no further. Under `mega` (runs only) it is no canastra."""
    s = Scenario(name, hands={0: "Kh Ks Kd Kc Kh Ks Kd 2s 2h 5c"}, stock="Kc")
    s.draw("Kc").meld("Kh Ks Kd").layoff(0, "Kc Kh Ks Kd Kc")
    refused(s, "meld.too_many_wilds", (), "layoff", 0, "2s 2h")
    s.layoff(0, "2s")
    meld = s.state.melds[0][0]
    assert len(meld.cards) == 9 and meld.kind == "set"
    assert meld.canastra == (None if name == "mega" else "dirty")
    refused(s, "meld.too_many_wilds", ("at most one",), "layoff", 0, "2h")


_SETS_11 = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 5h"
_SETS_13 = "3h 3s 3d 4h 4s 4d 5h 5s 5d 5c 6h 6s 6d"


@pytest.mark.parametrize("name", [n for n in ALL if n != "classic"])
def test_the_morto_needs_no_canastra_but_going_out_does(name: str) -> None:
    """001 "Na primeira vez que a sua mão ficar vazia [...] você o pega e continua"; 002 "Isto
    acontece automaticamente"; 003 "O jogador que bater com as onze cartas iniciais, pegará as
    onze cartas de seu morto": no canastra asked for the morto, except 000's bossa nova ("é
    obrigatória a formação de uma canastra para qualquer jogador poder pegar o morto"). Going
    out then needs one everywhere but biriba (000: "se ele mesmo tornar a descer todas as suas
    cartas, o jogo estará terminado"; 001 "ter pelo menos uma canastra na mesa"; 003 "precisa-se
    de pelo menos uma canastra limpa ou suja"; 004 "precisa ter pelo menos uma canastra")."""
    t13 = name.startswith("thirteen")
    s = Scenario(name, hands={0: _SETS_13 if t13 else _SETS_11}, stock="Jd 7c Kd",
                 mortos={0: "8h 8s 8d 9h 9s 9d Th Ts Td Kh Ks"})
    s.draw("Jd").meld("3h 3s 3d").meld("4h 4s 4d").meld("5h 5s 5d")
    # The last lay leaves only the Jd, to be thrown: the morto would be taken by that discard.
    move = "layoff"
    args: tuple[object, ...] = (2, "5c 5h")
    if t13:
        s.layoff(2, "5c")
        move, args = "meld", ("6h 6s 6d",)
    if name == "bossa-nova":
        refused(s, "morto.needs_canastra", ("canastra",), move, *args)
        return
    getattr(s, move)(*args)
    s.discard("Jd").morto(direct=False)
    assert len(s.hand(0)) == 11 and not any(m.canastra for m in s.state.melds[0])
    s.pass_turn()
    s.draw("Kd").meld("8h 8s 8d").meld("9h 9s 9d").meld("Th Ts Td")
    if name == "biriba":
        s.meld("Kh Ks Kd").go_out()
        assert s.state.phase == "out"
        return
    refused(s, "go_out.needs_canastra", ("canastra",), "meld", "Kh Ks Kd")
