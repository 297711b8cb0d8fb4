"""Every across outcome x every down outcome, at 1x, 2x and 3x, for New York, Pennsylvania and New Jersey.

Outcomes of a hand: lose (below a pair of 6s), push (a pair of 6s through 10s) and each winning category (a pair
of jacks or better, two pair, ..., royal flush). For each pair (across, down) a deal is found by searching the
outside cards with phevaluator (a test oracle only) around a few fixed seat-card + middle-card triples; 101 of the
121 pairs can be dealt, and the other 20 cannot (see IMPOSSIBLE). Expected results are computed here from the
regulation text written out below, never from our code:

* NY 5324.39(f)(1) ante, (f)(2) across/down, (f)(3) five-card bonus; NY (e)(9)(ii) the middle bet: paid at the
  odds of the highest-ranking hand if either wins, a push if neither wins and one pushes, lost only if both lose.
* PA 674a.11(h)(1)-(5) as PA writes it: below a pair of 6s loses; a pair of 6s or better is returned or paid per
  674a.12; the middle bet loses if neither hand has a pair of 6s or better, and otherwise is settled by 674a.12(b)
  "based on the higher ranking" hand. 674a.12 is not in our texts: its figures are the reading stated in
  ``config/jurisdictions/pa.yaml`` (New York's, written out below as ``READING_BET`` etc.).
* NJ: no procedure text in our texts; the reading of ``nj.yaml`` (New York's rules and figures) is checked.
* Folds: NY 5324.39(e)(3),(5),(7), PA 674a.11(b),(d),(f): a fold forfeits every earlier wager; the five-card bonus
  stays in action and settles on the community cards (PA (h)(5)).
"""

from __future__ import annotations

import functools
import itertools

import pytest
from phevaluator import evaluate_cards

from controller.game.paytable import load_jurisdiction
from controller.game.settlement import Community, settle_round, settle_seat

RANKS = "23456789TJQKA"
SUITS = "cdhs"
DECK = tuple(r + s for r in RANKS for s in SUITS)  # index = rank * 4 + suit: phevaluator's card ids

#: Outcome classes of one five-card hand, lowest first (NY 5324.39(b)(2) with the pay bands of (f)).
CLASSES = ("lose", "push", "pair_jacks_or_better", "two_pair", "three_of_a_kind", "straight", "flush",
           "full_house", "four_of_a_kind", "straight_flush", "royal_flush")

# NY 5324.39(f)(1): "no less than odds of 1:1 for qualifying hands of a pair of jacks or better. A pair of 6s
# through a pair of 10s shall result in a push, and all other outcomes shall be a loss." (-1 = loss, 0 = push)
NY_ANTE = {"lose": -1, "push": 0, **{c: 1 for c in CLASSES[2:]}}
# NY 5324.39(f)(2): push; 1 to 1; 2; 3; 5; 8; 12; 40; 100; 500.
NY_BET = dict(zip(CLASSES, (-1, 0, 1, 2, 3, 5, 8, 12, 40, 100, 500)))
# NY 5324.39(f)(3): pair of 6s or better 1 to 1; two pair 3; trips 4; straight 6; flush 10; full house 15;
# quads 40; straight flush 100; royal flush 250. Here "push" (a pair of 6s-10s) wins 1 to 1.
NY_BONUS = dict(zip(CLASSES, (-1, 1, 1, 3, 4, 6, 10, 15, 40, 100, 250)))
# 674a.12 / 13:69F-25.11 are not in our texts: the readings stated in pa.yaml and nj.yaml are New York's figures.
READING_ANTE, READING_BET, READING_BONUS = NY_ANTE, NY_BET, NY_BONUS

BANDS = [(1, "royal_flush"), (10, "straight_flush"), (166, "four_of_a_kind"), (322, "full_house"),
         (1599, "flush"), (1609, "straight"), (2467, "three_of_a_kind"), (3325, "two_pair")]


def oracle_class(ids) -> str:
    """Outcome class of five card ids from phevaluator's rank bands; a pair split by its rank."""
    rank = evaluate_cards(*ids)
    for limit, name in BANDS:
        if rank <= limit:
            return name
    if rank <= 6185:  # one pair
        ranks = [i // 4 for i in ids]
        (pair,) = [r for r in set(ranks) if ranks.count(r) == 2]
        if pair >= RANKS.index("J"):
            return "pair_jacks_or_better"
        return "push" if pair >= RANKS.index("6") else "lose"
    return "lose"


# --------------------------------------------------------------------------- the rules as each text writes them


def ny_expected(across: str, down: str, board: str, wagers: dict) -> dict:
    """NY 5324.39(e)(9)(i),(ii), (f)(1)-(3): (outcome, net) per placed wager."""
    def result(amount, n):
        return {"amount": amount, "outcome": "lose" if n < 0 else "push" if n == 0 else "win",
                "net": n * amount}

    out = {}
    if "middle" in wagers:
        out["ante_across"] = result(wagers["ante_across"], NY_ANTE[across])
        out["ante_down"] = result(wagers["ante_down"], NY_ANTE[down])
        out["across"] = result(wagers["across"], NY_BET[across])
        out["down"] = result(wagers["down"], NY_BET[down])
        wins = [c for c in (across, down) if NY_BET[c] > 0]
        if wins:  # "paid at the odds of the highest-ranking hand"
            middle = NY_BET[max(wins, key=CLASSES.index)]
        elif "push" in (across, down):  # push/lose, lose/push, push/push
            middle = 0
        else:  # "loses only if both the across and down bets lose"
            middle = -1
        out["middle"] = result(wagers["middle"], middle)
    else:  # folded: NY (e)(3),(5),(7) forfeit
        out.update({name: result(wagers[name], -1) for name in ("ante_across", "ante_down", "across", "down")
                    if name in wagers})
    if "five_card_bonus" in wagers:
        out["five_card_bonus"] = result(wagers["five_card_bonus"], NY_BONUS[board])
    return out


def pa_expected(across: str, down: str, board: str, wagers: dict) -> dict:
    """PA 674a.11(b),(d),(f),(h)(1)-(5) as PA writes them, with the reading's figures for 674a.12."""
    def result(amount, n):
        return {"amount": amount, "outcome": "lose" if n < 0 else "push" if n == 0 else "win",
                "net": n * amount}

    def six_or_better(c):
        return c != "lose"

    out = {}
    if "middle" in wagers:
        for hand, ante, bet in ((across, "ante_across", "across"), (down, "ante_down", "down")):
            if six_or_better(hand):  # (h)(1)(ii),(2)(ii): returned or paid per 674a.12(a),(b)
                out[ante] = result(wagers[ante], READING_ANTE[hand])
                out[bet] = result(wagers[bet], READING_BET[hand])
            else:  # (h)(1)(i),(2)(i): collected
                out[ante] = result(wagers[ante], -1)
                out[bet] = result(wagers[bet], -1)
        if not (six_or_better(across) or six_or_better(down)):  # (h)(3)
            out["middle"] = result(wagers["middle"], -1)
        else:  # (h)(4): per 674a.12(b), based on the higher-ranking hand
            out["middle"] = result(wagers["middle"], READING_BET[max(across, down, key=CLASSES.index)])
    else:  # (b),(d),(f): collected
        out.update({name: result(wagers[name], -1) for name in ("ante_across", "ante_down", "across", "down")
                    if name in wagers})
    if "five_card_bonus" in wagers:  # (h)(5)
        out["five_card_bonus"] = result(wagers["five_card_bonus"], READING_BONUS[board])
    return out


EXPECTED = {"ny": ny_expected, "pa": pa_expected, "nj": ny_expected}

# --------------------------------------------------------------------------- deals for every pair of outcomes

#: Seat cards + middle card tried in turn; the outside cards of each line are searched around them.
TRIPLES = ("Qs Ts Ks", "9c 9h Qd", "Ac Ad 2c", "Qs 3c 3d", "7s 7h 7c", "9h Th Jh")

# Pairs no deal can give (the across and down hands share three cards: the seat's two and the middle card).
_RUNS = ("straight", "flush", "straight_flush", "royal_flush")  # need those three cards of distinct ranks
IMPOSSIBLE = {
    # a full house or four of a kind with five cards needs two of the shared three of one rank
    *((a, b) for a in _RUNS for b in ("full_house", "four_of_a_kind")),
    *((b, a) for a in _RUNS for b in ("full_house", "four_of_a_kind")),
    ("four_of_a_kind", "four_of_a_kind"),  # five cards of one rank, or two ranks both among the shared three
    ("royal_flush", "royal_flush"),  # both need the same two outside cards
    ("royal_flush", "straight_flush"), ("straight_flush", "royal_flush"),  # K-Q-J-T-9 needs the royal's outside card
}


@functools.lru_cache(maxsize=1)
def deals() -> dict[tuple[str, str], tuple[list[str], list[str], list[str], str]]:
    """(across class, down class) -> (seat cards, across outside cards, down outside cards, middle card)."""
    found = {}
    for triple in TRIPLES:
        ids = tuple(DECK.index(c) for c in triple.split())
        rest = [i for i in range(52) if i not in ids]
        by_class: dict[str, list[tuple[int, int]]] = {}
        for pair in itertools.combinations(rest, 2):
            by_class.setdefault(oracle_class(ids + pair), []).append(pair)
        for a, d in itertools.product(by_class, repeat=2):
            if (a, d) in found:
                continue
            for outside_a in by_class[a]:
                outside_d = next((p for p in by_class[d] if not set(p) & set(outside_a)), None)
                if outside_d:
                    found[a, d] = ([DECK[i] for i in ids[:2]], [DECK[i] for i in outside_a],
                                   [DECK[i] for i in outside_d], DECK[ids[2]])
                    break
    return found


def test_every_possible_pair_of_outcomes_is_dealt():
    """All 121 pairs of outcomes are either dealt or shown impossible above: 101 + 20."""
    found = set(deals())
    assert len(IMPOSSIBLE) == 20
    assert found | IMPOSSIBLE == set(itertools.product(CLASSES, repeat=2))
    assert not found & IMPOSSIBLE


PAIRS = [p for p in itertools.product(CLASSES, repeat=2) if p not in IMPOSSIBLE]
MULTIPLES = list(itertools.product((1, 2, 3), repeat=3))
ANTE = 500
BONUS = 300


@functools.lru_cache(maxsize=3)
def jurisdiction(code):
    return load_jurisdiction(code)


def board_class(p, a, d, m) -> str:
    return oracle_class([DECK.index(c) for c in (*a, *d, m)])


@pytest.mark.parametrize("code", ["ny", "pa", "nj"])
@pytest.mark.parametrize("across,down", PAIRS, ids=[f"{a}-{d}" for a, d in PAIRS])
def test_across_x_down_at_every_multiple(code, across, down):
    """NY (e)(9), (f); PA (h): the antes, across, down and middle bets (1x, 2x, 3x each, all 27 choices) and a
    five-card bonus, for this pair of outcomes; the round's JSON path (`crisscross settle`) at 3x-1x-2x too."""
    p, a, d, m = deals()[across, down]
    board = board_class(p, a, d, m)
    community = Community(tuple(a), tuple(d), m)
    for ma, md, mm in MULTIPLES:
        wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": ma * ANTE, "down": md * ANTE,
                  "middle": mm * ANTE, "five_card_bonus": BONUS}
        settled = settle_seat(1, tuple(p), community, wagers, jurisdiction(code)).to_json()
        expected = EXPECTED[code](across, down, board, wagers)
        assert settled["wagers"] == expected, (ma, md, mm)
        assert settled["net"] == sum(w["net"] for w in expected.values())
    wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": 3 * ANTE, "down": ANTE, "middle": 2 * ANTE}
    data = {"jurisdiction": code, "community": {"across": a, "down": d, "middle": m},
            "seats": [{"seat": 4, "cards": p, "wagers": wagers}]}
    (seat,) = settle_round(data)["seats"]
    assert seat["wagers"] == EXPECTED[code](across, down, board, wagers)


FOLD_PAIRS = [(c, "lose") for c in CLASSES] + [("lose", c) for c in CLASSES[1:]]


@pytest.mark.parametrize("code", ["ny", "pa", "nj"])
@pytest.mark.parametrize("fold_at", ["across", "down", "middle"])
@pytest.mark.parametrize("bonus", [False, True], ids=["no_bonus", "bonus"])
def test_folds_at_each_decision_forfeit_all_but_the_bonus(code, fold_at, bonus):
    """NY 5324.39(e)(3),(5),(7), PA 674a.11(b),(d),(f): no bet at a decision forfeits the antes and every earlier
    bet, whatever the hands would have been; the five-card bonus, if placed, settles on the board (PA (h)(5))."""
    for across, down in FOLD_PAIRS:
        p, a, d, m = deals()[across, down]
        board = board_class(p, a, d, m)
        for ma, md in itertools.product((1, 2, 3), repeat=2):
            wagers = {"ante_across": ANTE, "ante_down": ANTE}
            if fold_at in ("down", "middle"):
                wagers["across"] = ma * ANTE
            if fold_at == "middle":
                wagers["down"] = md * ANTE
            if bonus:
                wagers["five_card_bonus"] = BONUS
            settled = settle_seat(2, tuple(p), Community(tuple(a), tuple(d), m), wagers, jurisdiction(code)).to_json()
            expected = EXPECTED[code](across, down, board, wagers)
            assert all(w["outcome"] == "lose" for n, w in expected.items() if n != "five_card_bonus")
            assert settled["wagers"] == expected, (across, down, ma, md)


# --------------------------------------------------------------------------- whole rounds, dealt at random


@pytest.mark.parametrize("code", ["ny", "pa", "nj"])
def test_random_rounds_settle_as_the_rules_and_as_each_seat_alone(code):
    """800 rounds dealt from a shuffled deck (seeded), one to six seats given in any order, antes of several
    sizes, each decision bet 1x-3x or a fold, a bonus on about half the seats: ``settle_round`` settles every
    wager as the rules written out above (the hands classed by phevaluator), in the order of PA 674a.11(h), lists
    the seats highest first (NY 5324.39(e)(9)), and gives for each seat what ``settle_seat`` gives it alone."""
    import random

    rng = random.Random(2024)
    loaded: dict = {}  # the jurisdiction read once for the 800 rounds, as crisscross settle --lines reads it
    for _ in range(800):
        deck = list(DECK)
        rng.shuffle(deck)
        a, d, m = deck[0:2], deck[2:4], deck[4]
        numbers = rng.sample(range(1, 7), rng.randint(1, 6))
        seats = []
        for i, seat in enumerate(numbers):
            ante = rng.choice((100, 500, 1000))
            wagers = {"ante_across": ante, "ante_down": ante}
            for decision in ("across", "down", "middle"):
                if rng.random() < 0.15:
                    break
                wagers[decision] = rng.randint(1, 3) * ante
            if rng.random() < 0.5:
                wagers["five_card_bonus"] = rng.choice((100, 300))
            seats.append({"seat": seat, "cards": deck[5 + 2 * i: 7 + 2 * i], "wagers": wagers})
        data = {"jurisdiction": code, "community": {"across": a, "down": d, "middle": m}, "seats": seats}
        settled = settle_round(data, jurisdictions=loaded)["seats"]
        assert [s["seat"] for s in settled] == sorted(numbers, reverse=True)
        board = board_class(None, a, d, m)
        by_seat = {s["seat"]: s for s in seats}
        for out in settled:
            p, wagers = by_seat[out["seat"]]["cards"], by_seat[out["seat"]]["wagers"]
            across = oracle_class([DECK.index(c) for c in (*p, *a, m)])
            down = oracle_class([DECK.index(c) for c in (*p, *d, m)])
            expected = EXPECTED[code](across, down, board, wagers)
            assert out["wagers"] == expected
            order = ("ante_across", "across", "ante_down", "down", "middle", "five_card_bonus")  # PA (h)(1)-(5)
            assert list(out["wagers"]) == [name for name in order if name in wagers]
            assert out["net"] == sum(w["net"] for w in expected.values())
            alone = settle_seat(out["seat"], tuple(p), Community(tuple(a), tuple(d), m), wagers, jurisdiction(code))
            assert out == alone.to_json()
