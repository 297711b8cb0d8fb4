"""Settlement rules for controller/game/settlement.py, written from the regulations (not from the code).

* NY 5324.39(e)(9)(i): across hand = the seat's two cards + the horizontal line; down hand = the two
  cards + the vertical line. Settlement from the dealer's right (highest seat first), NY (e)(9), PA (g).
* NY 5324.39(e)(9)(ii), PA 674a.11(h)(3),(4): the middle bet.
* NY 5324.39(f)(1),(2),(3): the ante, across/down and five-card bonus pay tables (the ny jurisdiction
  pays exactly the minimums).
* PA 674a.11(b),(d),(f),(h)(5): folds forfeit the earlier wagers; the five-card bonus stays in action and
  settles on the community cards.

Every hand below is constructed by hand; its category is double-checked against phevaluator (oracle only)
so that a mistake in a construction shows up as a failing guard, not as a wrong expectation.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from phevaluator import evaluate_cards

from controller.game.settlement import SettlementInputError, settle_round
from tests.examples import examples

ANTE = 100


# --------------------------------------------------------------------------- oracle helpers (tests only)


def oracle_category(cards) -> str:
    """Category from phevaluator's rank bands (lower number = stronger)."""
    rank = evaluate_cards(*cards)
    for limit, name in [
        (1, "royal_flush"),
        (10, "straight_flush"),
        (166, "four_of_a_kind"),
        (322, "full_house"),
        (1599, "flush"),
        (1609, "straight"),
        (2467, "three_of_a_kind"),
        (3325, "two_pair"),
        (6185, "pair"),
    ]:
        if rank <= limit:
            return name
    return "high_card"


def oracle_pair_rank(cards):
    (rank,) = [r for r, n in Counter(c[0] for c in cards).items() if n == 2]
    return rank


def parse_layout(layout: str):
    """'P1 P2 | A1 A2 | D1 D2 | M' -> (seat cards, across line, down line, middle)."""
    p, a, d, m = (part.split() for part in layout.split("|"))
    return p, a, d, m[0]


def round_data(seats, across, down, middle, jurisdiction="ny"):
    return {
        "jurisdiction": jurisdiction,
        "community": {"across": list(across), "down": list(down), "middle": middle},
        "seats": seats,
    }


def settle_layout(layout: str, wagers: dict, seat: int = 1) -> dict:
    p, a, d, m = parse_layout(layout)
    out = settle_round(round_data([{"seat": seat, "cards": p, "wagers": wagers}], a, d, m))
    assert out["jurisdiction"] == "ny"
    assert [s["seat"] for s in out["seats"]] == [seat]
    return out["seats"][0]


def full_wagers(ante=ANTE, across=None, down=None, middle=None, bonus=None):
    w = {"ante_across": ante, "ante_down": ante}
    w["across"] = ante if across is None else across
    w["down"] = ante if down is None else down
    w["middle"] = ante if middle is None else middle
    if bonus is not None:
        w["five_card_bonus"] = bonus
    return w


def assert_wager(result: dict, name: str, amount: int, outcome: str, net: int):
    got = result["wagers"][name]
    assert got == {"amount": amount, "outcome": outcome, "net": net}, (name, got)


def assert_seat_net_is_sum(result: dict):
    assert result["net"] == sum(w["net"] for w in result["wagers"].values())


def mirror(layout: str) -> str:
    """Swap the across line and the down line: the down hand becomes what the across hand was."""
    p, a, d, m = (part.strip() for part in layout.split("|"))
    return f"{p} | {d} | {a} | {m}"


# --------------------------------------------------------------------------- across/down and ante tables

# (id, layout "P | A | D | M", across category, pair rank, ante (outcome, N), bet (outcome, N))
# N is "N to 1" for a win, 0 for a push, -1 for a loss.  Source: NY 5324.39(f)(1),(2).
BET_ROWS = [
    ("royal_flush_500", "Ah Kh | Qh Jh | 2c 3d | Th", "royal_flush", None, ("win", 1), ("win", 500)),
    ("straight_flush_100", "9s 8s | 7s 6s | 2c Jd | 5s", "straight_flush", None, ("win", 1), ("win", 100)),
    ("steel_wheel_100", "Ad 2d | 3d 4d | 9c Kh | 5d", "straight_flush", None, ("win", 1), ("win", 100)),
    ("four_of_a_kind_40", "9c 2d | 9h 9s | 3h Kc | 9d", "four_of_a_kind", None, ("win", 1), ("win", 40)),
    ("full_house_12", "Kc 4d | Kh Ks | 2d 7h | 4c", "full_house", None, ("win", 1), ("win", 12)),
    ("flush_8", "2h 7h | 9h Jh | 3c 4d | Kh", "flush", None, ("win", 1), ("win", 8)),
    ("straight_5", "5c 6d | 7h 8s | 2h Kd | 9c", "straight", None, ("win", 1), ("win", 5)),
    ("wheel_straight_5", "Ac 2d | 3h 4s | 9h Kd | 5c", "straight", None, ("win", 1), ("win", 5)),
    ("broadway_straight_5", "Ac Kd | Qh Js | 2h 3d | Tc", "straight", None, ("win", 1), ("win", 5)),
    ("three_of_a_kind_3", "7c 2d | 7h 7s | 3h 9d | Kc", "three_of_a_kind", None, ("win", 1), ("win", 3)),
    ("two_pair_2", "8c 3d | 8h 3s | 2h 9d | Kc", "two_pair", None, ("win", 1), ("win", 2)),
    ("pair_aces_1", "Ac 3d | Ah 5s | 2h 9d | Kc", "pair", "A", ("win", 1), ("win", 1)),
    ("pair_queens_1", "Qc 3d | Qh 5s | 2h 9d | Kc", "pair", "Q", ("win", 1), ("win", 1)),
    ("pair_jacks_1", "Jc 3d | Jh 5s | 2h 9d | Kc", "pair", "J", ("win", 1), ("win", 1)),
    ("pair_tens_push", "Tc 3d | Th 5s | 2h 9d | Kc", "pair", "T", ("push", 0), ("push", 0)),
    ("pair_nines_push", "9c 3d | 9h 5s | 2h 7d | Kc", "pair", "9", ("push", 0), ("push", 0)),
    ("pair_sixes_push", "6c 3d | 6h 5s | 2h 9d | Kc", "pair", "6", ("push", 0), ("push", 0)),
    ("pair_fives_lose", "5c 3d | 5h 8s | 2h 9d | Kc", "pair", "5", ("lose", -1), ("lose", -1)),
    ("pair_twos_lose", "2c 3d | 2h 8s | 4h 9d | Kc", "pair", "2", ("lose", -1), ("lose", -1)),
    ("high_card_lose", "2c 7d | 9h Jc | 4s 3h | Ks", "high_card", None, ("lose", -1), ("lose", -1)),
    ("wrap_QKA23_lose", "Qc Kd | 2h 3s | 7h 9d | Ac", "high_card", None, ("lose", -1), ("lose", -1)),
    ("wrap_KA234_lose", "Kc Ad | 2h 3s | 7h 9d | 4c", "high_card", None, ("lose", -1), ("lose", -1)),
    ("wrap_JQKA2_lose", "Jc Qd | Kh As | 7h 9d | 2c", "high_card", None, ("lose", -1), ("lose", -1)),
]


@pytest.mark.parametrize("layout,category,pair_rank", [r[1:4] for r in BET_ROWS], ids=[r[0] for r in BET_ROWS])
def test_guard_constructed_across_hands(layout, category, pair_rank):
    """Guard for the constructions below (oracle: phevaluator), NY 5324.39(b)(2)."""
    p, a, d, m = parse_layout(layout)
    hand = p + a + [m]
    assert len(set(p + a + d + [m])) == 7
    assert oracle_category(hand) == category
    if pair_rank:
        assert oracle_pair_rank(hand) == pair_rank


@pytest.mark.parametrize("row", BET_ROWS, ids=[r[0] for r in BET_ROWS])
def test_across_hand_pays_ny_table_ny_5324_39_f_1_f_2(row):
    """NY 5324.39(f)(1) ante and (f)(2) across bet, row by row, on the across hand
    (NY (e)(9)(i): the two cards + the horizontal line); 3x across bet."""
    _, layout, category, _, (ante_outcome, ante_n), (bet_outcome, bet_n) = row
    p, a, d, m = parse_layout(layout)
    result = settle_layout(layout, full_wagers(across=3 * ANTE))
    assert result["across_hand"]["category"] == category
    assert sorted(result["across_hand"]["cards"]) == sorted(p + a + [m])
    assert_wager(result, "ante_across", ANTE, ante_outcome, ante_n * ANTE)
    assert_wager(result, "across", 3 * ANTE, bet_outcome, bet_n * 3 * ANTE)
    assert_seat_net_is_sum(result)


@pytest.mark.parametrize("row", BET_ROWS, ids=[r[0] for r in BET_ROWS])
def test_down_hand_pays_ny_table_ny_5324_39_f_1_f_2(row):
    """NY 5324.39(f)(1) ante and (f)(2) down bet, row by row, on the down hand
    (NY (e)(9)(i): the two cards + the vertical line); 2x down bet."""
    _, layout, category, _, (ante_outcome, ante_n), (bet_outcome, bet_n) = row
    layout = mirror(layout)
    p, a, d, m = parse_layout(layout)
    result = settle_layout(layout, full_wagers(down=2 * ANTE))
    assert result["down_hand"]["category"] == category
    assert sorted(result["down_hand"]["cards"]) == sorted(p + d + [m])
    assert_wager(result, "ante_down", ANTE, ante_outcome, ante_n * ANTE)
    assert_wager(result, "down", 2 * ANTE, bet_outcome, bet_n * 2 * ANTE)
    assert_seat_net_is_sum(result)


def test_push_band_edges_for_ante_and_bets_ny_5324_39_f_1():
    """NY 5324.39(f)(1),(2): pair of 5s loses, 6s push, 10s push, jacks win 1 to 1 (ante and across)."""
    cases = {"5": ("lose", -ANTE), "6": ("push", 0), "T": ("push", 0), "J": ("win", ANTE)}
    for rank, (outcome, net) in cases.items():
        layout = f"{rank}c 3d | {rank}h 8s | 2h 4d | Kc"
        result = settle_layout(layout, full_wagers())
        assert result["across_hand"]["category"] == "pair", rank
        assert_wager(result, "ante_across", ANTE, outcome, net)
        assert_wager(result, "across", ANTE, outcome, net)


# --------------------------------------------------------------------------- five-card bonus table

# (id, board "A1 A2 | D1 D2 | M", category, outcome, N) - NY 5324.39(f)(3), PA 674a.11(h)(5)
BONUS_ROWS = [
    ("royal_flush_250", "Ah Kh | Qh Jh | Th", "royal_flush", "win", 250),
    ("straight_flush_100", "9s 8s | 7s 6s | 5s", "straight_flush", "win", 100),
    ("steel_wheel_100", "Ac 2c | 3c 4c | 5c", "straight_flush", "win", 100),
    ("four_of_a_kind_40", "9c 9d | 9h 9s | 2c", "four_of_a_kind", "win", 40),
    ("full_house_15", "Kc Kd | Kh 4s | 4c", "full_house", "win", 15),
    ("flush_10", "2d 7d | 9d Jd | Kd", "flush", "win", 10),
    ("straight_6", "5c 6d | 7h 8s | 9c", "straight", "win", 6),
    ("wheel_straight_6", "Ac 2d | 3h 4s | 5c", "straight", "win", 6),
    ("three_of_a_kind_4", "7c 7d | 7h 2s | Kc", "three_of_a_kind", "win", 4),
    ("two_pair_3", "8c 8d | 3h 3s | Kc", "two_pair", "win", 3),
    ("pair_aces_1", "Ac Ad | 2h 9s | Kc", "pair", "win", 1),
    ("pair_jacks_1", "Jc Jd | 2h 9s | Kc", "pair", "win", 1),
    ("pair_tens_1", "Tc Td | 2h 9s | Kc", "pair", "win", 1),
    ("pair_sixes_1", "6c 6d | 2h 9s | Kc", "pair", "win", 1),
    ("pair_fives_lose", "5c 5d | 2h 9s | Kc", "pair", "lose", -1),
    ("pair_twos_lose", "2c 2d | 5h 9s | Kc", "pair", "lose", -1),
    ("high_card_lose", "7d 2c | 9s 3h | Kc", "high_card", "lose", -1),
    ("wrap_QKA23_lose", "Qc Kd | Ah 2s | 3c", "high_card", "lose", -1),
]

SEAT_CARD_POOL = ["2s", "3s", "4d", "8h", "Qd", "Jd", "6h", "Td", "4c", "8d"]


def bonus_layout(board: str) -> str:
    a, d, m = (part.split() for part in board.split("|"))
    used = set(a + d + m)
    p = [c for c in SEAT_CARD_POOL if c not in used][:2]
    return f"{' '.join(p)} | {' '.join(a)} | {' '.join(d)} | {m[0]}"


@pytest.mark.parametrize("board,category", [r[1:3] for r in BONUS_ROWS], ids=[r[0] for r in BONUS_ROWS])
def test_guard_constructed_boards(board, category):
    """Guard for the board constructions (oracle: phevaluator)."""
    a, d, m = (part.split() for part in board.split("|"))
    assert oracle_category(a + d + m) == category


@pytest.mark.parametrize("row", BONUS_ROWS, ids=[r[0] for r in BONUS_ROWS])
def test_five_card_bonus_pays_ny_table_ny_5324_39_f_3(row):
    """NY 5324.39(f)(3), PA 674a.11(h)(5): the bonus settles on the five community cards alone:
    pair of 6s or better 1 to 1 (so 6s-10s WIN here), two pair 3, trips 4, straight 6, flush 10,
    full house 15, quads 40, straight flush 100, royal 250; below a pair of 6s loses."""
    _, board, category, outcome, n = row
    layout = bonus_layout(board)
    p, a, d, m = parse_layout(layout)
    bonus = 2 * ANTE
    result = settle_layout(layout, full_wagers(bonus=bonus))
    assert result["five_card_bonus_hand"]["category"] == category
    assert sorted(result["five_card_bonus_hand"]["cards"]) == sorted(a + d + [m])
    assert_wager(result, "five_card_bonus", bonus, outcome, n * bonus)
    assert_seat_net_is_sum(result)


def test_bonus_band_edge_sixes_win_fives_lose_ny_5324_39_f_3():
    """NY 5324.39(f)(3): 'Pair of 6s or better 1 to 1' - unlike the ante, 6s-10s win and 5s lose."""
    for rank, (outcome, net) in {"5": ("lose", -ANTE), "6": ("win", ANTE), "T": ("win", ANTE)}.items():
        board = f"{rank}c {rank}d | 2h 9s | Kc"
        result = settle_layout(bonus_layout(board), full_wagers(bonus=ANTE))
        assert_wager(result, "five_card_bonus", ANTE, outcome, net)


def test_bonus_is_independent_of_the_seat_cards_pa_674a_11_h_5():
    """PA 674a.11(h)(5): the bonus hand is the five community cards; the seat's own cards (here a royal
    flush on the across line) do not improve it."""
    result = settle_layout("Ah Kh | Qh Jh | 2c 3d | Th", full_wagers(bonus=ANTE))
    assert result["across_hand"]["category"] == "royal_flush"
    assert result["five_card_bonus_hand"]["category"] == "high_card"  # Qh Jh 2c 3d Th
    assert_wager(result, "five_card_bonus", ANTE, "lose", -ANTE)


# --------------------------------------------------------------------------- middle bet

# (id, layout, across outcome, down outcome, middle outcome, middle N) - NY 5324.39(e)(9)(ii)
MIDDLE_ROWS = [
    ("push_lose", "6c 3d | 6h 5s | 2h 9d | Kc", "push", "lose", "push", 0),
    ("lose_push", "6c 3d | 2h 9d | 6h 5s | Kc", "lose", "push", "push", 0),
    ("push_push", "Tc 6d | Th 2s | 6h 3s | Kc", "push", "push", "push", 0),
    ("lose_lose", "2c 7d | 9h Jc | 4s 3h | Ks", "lose", "lose", "lose", -1),
    ("win_lose_flush", "2h 7h | 9h Jh | 3c 4d | Kh", "win", "lose", "win", 8),
    ("lose_win_flush", "2h 7h | 3c 4d | 9h Jh | Kh", "lose", "win", "win", 8),
    ("win_push_trips", "7c 2d | 7h 7s | 6h 6s | Kc", "win", "push", "win", 3),
    ("push_win_trips", "7c 2d | 6h 6s | 7h 7s | Kc", "push", "win", "win", 3),
    ("win_win_down_higher", "8c 8d | 3h 3s | 8h 2s | Kc", "win", "win", "win", 3),  # two pair / trips
    ("win_win_across_higher", "9c Td | Jh Qs | Kh 2s | Kc", "win", "win", "win", 5),  # straight / pair K
    ("win_win_royal_and_pair", "Ah Kh | Qh Jh | Ac 2d | Th", "win", "win", "win", 500),
    ("win_win_same_category", "Jc Ad | Jh 5s | Ah 3s | Kc", "win", "win", "win", 1),  # JJ / AA
    ("lose_win_jacks", "Jc 3d | 2h 9d | Jh 5s | Kc", "lose", "win", "win", 1),
]

ACROSS_DOWN_ODDS = {
    "two_pair": 2,
    "three_of_a_kind": 3,
    "straight": 5,
    "flush": 8,
    "full_house": 12,
    "four_of_a_kind": 40,
    "straight_flush": 100,
    "royal_flush": 500,
}


def oracle_bet(cards):
    """NY 5324.39(f)(2) applied to an oracle-evaluated hand -> (outcome, N)."""
    category = oracle_category(cards)
    if category == "pair":
        rank = oracle_pair_rank(cards)
        if rank in "JQKA":
            return "win", 1
        if rank in "6789T":
            return "push", 0
        return "lose", -1
    if category == "high_card":
        return "lose", -1
    return "win", ACROSS_DOWN_ODDS[category]


@pytest.mark.parametrize("row", MIDDLE_ROWS, ids=[r[0] for r in MIDDLE_ROWS])
def test_guard_middle_constructions(row):
    """Guard: the constructed across/down hands have the intended outcomes (phevaluator oracle)."""
    _, layout, across_outcome, down_outcome, _, n = row
    p, a, d, m = parse_layout(layout)
    assert len(set(p + a + d + [m])) == 7
    across, down = oracle_bet(p + a + [m]), oracle_bet(p + d + [m])
    assert (across[0], down[0]) == (across_outcome, down_outcome)
    if n > 0:
        assert n == max(across[1], down[1])


@pytest.mark.parametrize("row", MIDDLE_ROWS, ids=[r[0] for r in MIDDLE_ROWS])
def test_middle_bet_ny_5324_39_e_9_ii(row):
    """NY 5324.39(e)(9)(ii), PA 674a.11(h)(3),(4): the middle bet wins if either the across or the down
    bet wins, at the odds of the higher-ranking hand; push/lose, lose/push and push/push push; it loses
    only when both lose."""
    _, layout, across_outcome, down_outcome, middle_outcome, n = row
    middle = 3 * ANTE
    result = settle_layout(layout, full_wagers(middle=middle))
    assert result["wagers"]["across"]["outcome"] == across_outcome
    assert result["wagers"]["down"]["outcome"] == down_outcome
    assert_wager(result, "middle", middle, middle_outcome, n * middle)
    assert_seat_net_is_sum(result)


# --------------------------------------------------------------------------- folds

ROYAL_ACROSS = "Ah Kh | Qh Jh | 2c 3d | Th"  # across royal flush; board Qh Jh 2c 3d Th = high card
ROYAL_ACROSS_PAIR_BOARD = "Ah Kh | Qh Jh | Qd 2c | Th"  # board Qh Jh Qd 2c Th = pair of queens
ROYAL_ACROSS_FLUSH_BOARD = "Ah Kh | Qh Jh | 2h 3h | Th"  # board Qh Jh 2h 3h Th = flush (10 to 1)


def test_fold_at_across_forfeits_both_antes_pa_674a_11_b():
    """NY 5324.39(e)(3), PA 674a.11(b): no across bet -> both antes lose, even with a royal flush."""
    result = settle_layout(ROYAL_ACROSS, {"ante_across": ANTE, "ante_down": ANTE})
    assert set(result["wagers"]) == {"ante_across", "ante_down"}
    assert_wager(result, "ante_across", ANTE, "lose", -ANTE)
    assert_wager(result, "ante_down", ANTE, "lose", -ANTE)
    assert result["net"] == -2 * ANTE


def test_fold_at_across_bonus_still_settles_on_board_pa_674a_11_b_h_5():
    """PA 674a.11(b),(h)(5): after an across fold the five-card bonus stays in action (pair of queens on
    the board wins 1 to 1)."""
    result = settle_layout(ROYAL_ACROSS_PAIR_BOARD, {"ante_across": ANTE, "ante_down": ANTE, "five_card_bonus": 300})
    assert set(result["wagers"]) == {"ante_across", "ante_down", "five_card_bonus"}
    assert_wager(result, "ante_across", ANTE, "lose", -ANTE)
    assert_wager(result, "ante_down", ANTE, "lose", -ANTE)
    assert result["five_card_bonus_hand"]["category"] == "pair"
    assert_wager(result, "five_card_bonus", 300, "win", 300)
    assert result["net"] == -2 * ANTE + 300


def test_fold_at_down_forfeits_antes_and_across_pa_674a_11_d():
    """NY 5324.39(e)(5), PA 674a.11(d): no down bet -> antes and across bet lose (royal across or not)."""
    result = settle_layout(ROYAL_ACROSS, {"ante_across": ANTE, "ante_down": ANTE, "across": 2 * ANTE})
    assert set(result["wagers"]) == {"ante_across", "ante_down", "across"}
    assert_wager(result, "ante_across", ANTE, "lose", -ANTE)
    assert_wager(result, "ante_down", ANTE, "lose", -ANTE)
    assert_wager(result, "across", 2 * ANTE, "lose", -2 * ANTE)
    assert result["net"] == -4 * ANTE


def test_fold_at_down_bonus_still_settles_on_board_pa_674a_11_d_h_5():
    """PA 674a.11(d),(h)(5): after a down fold the bonus settles on the board (flush: 10 to 1)."""
    wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": ANTE, "five_card_bonus": 50}
    result = settle_layout(ROYAL_ACROSS_FLUSH_BOARD, wagers)
    assert set(result["wagers"]) == set(wagers)
    assert result["five_card_bonus_hand"]["category"] == "flush"
    assert_wager(result, "five_card_bonus", 50, "win", 500)
    assert_wager(result, "across", ANTE, "lose", -ANTE)
    assert result["net"] == -3 * ANTE + 500


def test_fold_at_middle_forfeits_antes_across_and_down_pa_674a_11_f():
    """NY 5324.39(e)(7), PA 674a.11(f): no middle bet -> antes, across and down lose."""
    wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": 3 * ANTE, "down": 2 * ANTE}
    result = settle_layout(ROYAL_ACROSS, wagers)
    assert set(result["wagers"]) == set(wagers)
    assert_wager(result, "ante_across", ANTE, "lose", -ANTE)
    assert_wager(result, "ante_down", ANTE, "lose", -ANTE)
    assert_wager(result, "across", 3 * ANTE, "lose", -3 * ANTE)
    assert_wager(result, "down", 2 * ANTE, "lose", -2 * ANTE)
    assert result["net"] == -7 * ANTE


def test_fold_at_middle_bonus_still_settles_and_can_lose_pa_674a_11_f_h_5():
    """PA 674a.11(f),(h)(5): after a middle fold the bonus settles on the board (high card loses)."""
    wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": ANTE, "down": ANTE, "five_card_bonus": ANTE}
    result = settle_layout(ROYAL_ACROSS, wagers)
    assert result["five_card_bonus_hand"]["category"] == "high_card"
    assert_wager(result, "five_card_bonus", ANTE, "lose", -ANTE)
    assert result["net"] == -5 * ANTE


def test_fold_at_middle_bonus_wins_pa_674a_11_f_h_5():
    """PA 674a.11(f),(h)(5): a middle fold with a pair-of-queens board: bonus wins 1 to 1."""
    wagers = {"ante_across": ANTE, "ante_down": ANTE, "across": ANTE, "down": ANTE, "five_card_bonus": ANTE}
    result = settle_layout(ROYAL_ACROSS_PAIR_BOARD, wagers)
    assert_wager(result, "five_card_bonus", ANTE, "win", ANTE)
    assert result["net"] == -4 * ANTE + ANTE


# --------------------------------------------------------------------------- amounts and arithmetic


@pytest.mark.parametrize("mult", [1, 2, 3])
def test_bets_of_one_two_three_times_the_ante_ny_5324_39_c_4(mult):
    """NY 5324.39(c)(4),(e)(3),(5),(7): each bet is one to three times the ante; the payout scales with the
    bet. Across flush 8 to 1, down pair of kings 1 to 1, middle at the flush's 8 to 1."""
    layout = "2h 7h | 9h Jh | Kd 3c | Kh"
    bet = mult * 500
    result = settle_layout(layout, full_wagers(ante=500, across=bet, down=bet, middle=bet))
    assert_wager(result, "ante_across", 500, "win", 500)
    assert_wager(result, "ante_down", 500, "win", 500)
    assert_wager(result, "across", bet, "win", 8 * bet)
    assert_wager(result, "down", bet, "win", bet)
    assert_wager(result, "middle", bet, "win", 8 * bet)
    assert result["net"] == 1000 + 17 * bet


def test_a_bet_is_accepted_exactly_when_it_is_an_allowed_multiple_of_the_ante_ny_5324_39_c_4():
    """NY 5324.39(c)(4): a bet is one of the allowed multiples of the ante; every ante 1-36 and bet 1-120 against
    three sets of multiples, the refusal naming the allowed amounts."""
    from controller.game.table import WagerError, check_bet

    for multiples in ((1, 2, 3), (1,), (2, 3)):
        for ante in range(1, 37):
            allowed = [m * ante for m in multiples]
            for amount in range(1, 121):
                if amount in allowed:
                    check_bet(4, "down", amount, ante, multiples)
                    continue
                with pytest.raises(WagerError) as refused:
                    check_bet(4, "down", amount, ante, multiples)
                assert str(refused.value).endswith(f"the ante {ante} (allowed: {allowed})")


def test_issue_example_net_arithmetic_ny_5324_39_e_9_f():
    """The issue's example, worked by hand: across Jh Jd 7d 2c Kc and down Jh Jd 9s 3h Kc are pairs of
    jacks (NY (f)(1),(2): 1 to 1); middle 1 to 1 (NY (e)(9)(ii)); board 7d 2c 9s 3h Kc is high card
    (NY (f)(3): loses). Net = 500 + 500 + 1500 + 500 + 1500 - 500 = 4000."""
    data = {
        "jurisdiction": "ny",
        "community": {"across": ["7d", "2c"], "down": ["9s", "3h"], "middle": "Kc"},
        "seats": [
            {
                "seat": 1,
                "cards": ["Jh", "Jd"],
                "wagers": {"ante_across": 500, "ante_down": 500, "across": 1500, "down": 500, "middle": 1500,
                           "five_card_bonus": 500},
            }
        ],
    }
    out = settle_round(data)
    assert out["jurisdiction"] == "ny"
    (seat,) = out["seats"]
    assert seat["seat"] == 1
    assert seat["across_hand"]["category"] == "pair"
    assert sorted(seat["across_hand"]["cards"]) == sorted(["Jh", "Jd", "7d", "2c", "Kc"])
    assert seat["down_hand"]["category"] == "pair"
    assert sorted(seat["down_hand"]["cards"]) == sorted(["Jh", "Jd", "9s", "3h", "Kc"])
    assert seat["five_card_bonus_hand"]["category"] == "high_card"
    assert sorted(seat["five_card_bonus_hand"]["cards"]) == sorted(["7d", "2c", "9s", "3h", "Kc"])
    assert seat["wagers"] == {
        "ante_across": {"amount": 500, "outcome": "win", "net": 500},
        "ante_down": {"amount": 500, "outcome": "win", "net": 500},
        "across": {"amount": 1500, "outcome": "win", "net": 1500},
        "down": {"amount": 500, "outcome": "win", "net": 500},
        "middle": {"amount": 1500, "outcome": "win", "net": 1500},
        "five_card_bonus": {"amount": 500, "outcome": "lose", "net": -500},
    }
    assert seat["net"] == 4000


def test_mixed_push_and_loss_arithmetic():
    """Across pair of 6s (push, NY (f)(1),(2)), down high card (lose), middle push (NY (e)(9)(ii)),
    board 6h 5s 2h 9d Kc high card (bonus loses). Net = 0 + 0 - 500 - 1500 + 0 - 500 = -2500."""
    result = settle_layout("6c 3d | 6h 5s | 2h 9d | Kc", full_wagers(ante=500, across=1000, down=1500, middle=500, bonus=500))
    assert result["wagers"] == {
        "ante_across": {"amount": 500, "outcome": "push", "net": 0},
        "across": {"amount": 1000, "outcome": "push", "net": 0},
        "ante_down": {"amount": 500, "outcome": "lose", "net": -500},
        "down": {"amount": 1500, "outcome": "lose", "net": -1500},
        "middle": {"amount": 500, "outcome": "push", "net": 0},
        "five_card_bonus": {"amount": 500, "outcome": "lose", "net": -500},
    }
    assert result["net"] == -2500


def test_output_lists_only_placed_wagers():
    """Contract: `wagers` maps each placed wager name; a seat without a bonus has no bonus entry."""
    result = settle_layout("Jc 3d | Jh 5s | 2h 9d | Kc", full_wagers())
    assert set(result["wagers"]) == {"ante_across", "ante_down", "across", "down", "middle"}


# --------------------------------------------------------------------------- several seats, order

MULTI_SEATS = [
    # seat, cards, wagers ; community across 7d 2c, down 9s 3h, middle Kc
    (2, ["Jh", "Jd"], {"ante_across": 500, "ante_down": 500, "across": 1500, "down": 500, "middle": 1500}),
    (5, ["Ks", "4c"], {"ante_across": 100, "ante_down": 100, "across": 100}),
    (1, ["8h", "8d"], {"ante_across": 200, "ante_down": 200, "across": 200, "down": 200, "middle": 600,
                       "five_card_bonus": 100}),
    (6, ["Ah", "Qd"], {"ante_across": 300, "ante_down": 300, "five_card_bonus": 300}),
]


def multi_round():
    seats = [{"seat": s, "cards": c, "wagers": w} for s, c, w in MULTI_SEATS]
    return round_data(seats, ["7d", "2c"], ["9s", "3h"], "Kc")


def test_settlement_order_from_dealers_right_ny_5324_39_e_9_pa_674a_11_g():
    """NY 5324.39(e)(9), PA 674a.11(g): settlement starts with the player farthest to the dealer's right
    and goes counterclockwise: highest seat number first, whatever the input order."""
    out = settle_round(multi_round())
    assert [s["seat"] for s in out["seats"]] == [6, 5, 2, 1]


def test_each_seat_settles_independently_in_a_full_round():
    """NY 5324.39(e)(9)(i),(ii),(f): four seats on one board (7d 2c / 9s 3h / Kc), worked by hand.
    seat 2: JJ both ways: +500 +500 +1500 +500 +1500 = 4500.
    seat 5: folded at down (across 100): -100 -100 -100 = -300 (pair of kings not settled, PA (d)).
    seat 1: 88 both ways -> pushes; middle push; board high card -> bonus -100: net -100.
    seat 6: folded at across: -300 -300; bonus on high-card board -300: -900."""
    by_seat = {s["seat"]: s for s in settle_round(multi_round())["seats"]}
    assert {k: v["net"] for k, v in by_seat.items()} == {2: 4500, 5: -300, 1: -100, 6: -900}
    assert by_seat[1]["wagers"]["middle"] == {"amount": 600, "outcome": "push", "net": 0}
    assert by_seat[1]["wagers"]["across"] == {"amount": 200, "outcome": "push", "net": 0}
    assert by_seat[5]["wagers"]["across"] == {"amount": 100, "outcome": "lose", "net": -100}
    for s in by_seat.values():
        assert_seat_net_is_sum(s)
        assert s["five_card_bonus_hand"]["category"] == "high_card"


# --------------------------------------------------------------------------- invalid input


def base_seat(seat=1, cards=("Jh", "Jd"), **wagers):
    w = {"ante_across": 500, "ante_down": 500, "across": 500, "down": 500, "middle": 500}
    w.update(wagers)
    w = {k: v for k, v in w.items() if v is not None}
    return {"seat": seat, "cards": list(cards), "wagers": w}


def base_round(*seats, across=("7d", "2c"), down=("9s", "3h"), middle="Kc", jurisdiction="ny"):
    return round_data(list(seats) or [base_seat()], across, down, middle, jurisdiction)


def expect_error(data, seat, field_check):
    with pytest.raises(SettlementInputError) as info:
        settle_round(data)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.seat == seat
    if callable(field_check):
        assert field_check(err.field), err.field
    else:
        assert err.field == field_check
    return err


def test_invalid_unknown_seat_card():
    """One 52-card deck (NY 5324.39(a)(1)): an unknown card in a seat's hand names seat and cards[i]."""
    expect_error(base_round(base_seat(seat=3, cards=("Jh", "1h"))), 3, "cards[1]")


def test_invalid_unknown_community_card():
    """An unknown community card names the community field; no seat is at fault."""
    expect_error(base_round(down=("Xs", "3h")), None, "community.down[0]")


def test_invalid_duplicate_card_seat_vs_community():
    """One deck (NY 5324.39(a)(1)): a seat's card that is also a community card is rejected."""
    expect_error(base_round(base_seat(seat=4, cards=("Jh", "Kc"))), 4, lambda f: f.startswith("cards"))


def test_invalid_duplicate_card_between_seats():
    """One deck: two seats holding the same card is rejected and names one of those seats."""
    data = base_round(base_seat(seat=1, cards=("Jh", "Jd")), base_seat(seat=2, cards=("Ah", "Jd")))
    with pytest.raises(SettlementInputError) as info:
        settle_round(data)
    assert info.value.seat in (1, 2)
    assert info.value.field.startswith("cards")


def test_invalid_duplicate_card_within_community():
    """One deck: the same card twice on the cross is rejected; no seat is at fault."""
    expect_error(base_round(down=("9s", "7d")), None, lambda f: f.startswith("community"))


def test_invalid_unequal_antes_ny_5324_39_c_4():
    """NY 5324.39(c)(4),(e)(1): two ante bets of equal value."""
    expect_error(base_round(base_seat(seat=2, ante_down=1000)), 2, lambda f: f in ("wagers.ante_across", "wagers.ante_down"))


@pytest.mark.parametrize("name,amount", [("across", 2000), ("down", 750), ("middle", 250), ("across", 1250)])
def test_invalid_bet_not_one_to_three_times_the_ante_ny_5324_39_c_4(name, amount):
    """NY 5324.39(c)(4),(e)(3),(5),(7): each bet is 1x, 2x or 3x the ante (contract)."""
    expect_error(base_round(base_seat(seat=5, **{name: amount})), 5, f"wagers.{name}")


@pytest.mark.parametrize(
    "removed,offending",
    [(("across",), "wagers.down"), (("down",), "wagers.middle"), (("across", "down"), "wagers.middle")],
)
def test_invalid_bet_after_fold_pa_674a_11_b_d_f(removed, offending):
    """PA 674a.11(b),(d),(f): a seat that folded has no later bet; e.g. a down bet without an across bet."""
    seat = base_seat(seat=6, **{k: None for k in removed})
    expect_error(base_round(seat), 6, offending)


def test_invalid_bonus_without_antes_ny_5324_39_e_1():
    """NY 5324.39(c)(4),(e)(1): the bonus is optional on top of two antes; a bonus alone is invalid."""
    seat = {"seat": 2, "cards": ["Jh", "Jd"], "wagers": {"five_card_bonus": 500}}
    expect_error(base_round(seat), 2, lambda f: f.startswith("wagers"))


@pytest.mark.parametrize("amount", [0, -500, 500.0, 500.5, "500", None, True, [500]])
def test_invalid_amount_not_a_positive_integer(amount):
    """Contract: amounts are positive integer minor units (a float, string, bool or non-positive fails)."""
    seat = {"seat": 3, "cards": ["Jh", "Jd"],
            "wagers": {"ante_across": 500, "ante_down": 500, "across": 500, "down": 500, "middle": 500,
                       "five_card_bonus": amount}}
    expect_error(base_round(seat), 3, "wagers.five_card_bonus")


def test_invalid_non_integer_ante():
    """Contract: a non-integer ante is rejected and names the ante field."""
    seat = {"seat": 1, "cards": ["Jh", "Jd"],
            "wagers": {"ante_across": 500.0, "ante_down": 500.0, "across": 500, "down": 500, "middle": 500}}
    expect_error(base_round(seat), 1, lambda f: f in ("wagers.ante_across", "wagers.ante_down"))


def test_invalid_unknown_wager_name():
    """NY 5324.39(a)(2)(i): six spots only; anything else is an unknown wager."""
    expect_error(base_round(base_seat(seat=4, insurance=500)), 4, "wagers.insurance")


def test_invalid_unknown_jurisdiction():
    """Only configured jurisdictions settle; an unknown one names the 'jurisdiction' field, no seat."""
    expect_error(base_round(jurisdiction="xx"), None, "jurisdiction")


@pytest.mark.parametrize("seat_no", [0, 7, -1])
def test_invalid_seat_number_ny_5324_39_a_1(seat_no):
    """NY 5324.39(a)(1): no more than six player positions: seats 1-6."""
    with pytest.raises(SettlementInputError) as info:
        settle_round(base_round(base_seat(seat=seat_no)))
    # the contract does not fix the exact spelling of this field ("seat", "seats[0].seat", ...)
    assert info.value.field.endswith("seat")


def test_invalid_repeated_seat():
    """One player position can't appear twice in a round."""
    data = base_round(base_seat(seat=3, cards=("Jh", "Jd")), base_seat(seat=3, cards=("Ah", "Ad")))
    expect_error(data, 3, lambda f: f.endswith("seat"))


# --------------------------------------------------------------------------- property: random deals vs oracle

DECK = tuple(r + s for r in "23456789TJQKA" for s in "cdhs")

BONUS_ODDS = {
    "two_pair": 3,
    "three_of_a_kind": 4,
    "straight": 6,
    "flush": 10,
    "full_house": 15,
    "four_of_a_kind": 40,
    "straight_flush": 100,
    "royal_flush": 250,
}


def oracle_ante(cards):
    """NY 5324.39(f)(1): jacks or better (any higher hand too) 1:1; 6s-10s push; lower loses."""
    outcome, n = oracle_bet(cards)
    return ("win", 1) if outcome == "win" else (outcome, n)


def oracle_bonus(cards):
    """NY 5324.39(f)(3): pair of 6s or better 1:1, two pair 3 ... royal 250; lower loses."""
    category = oracle_category(cards)
    if category == "pair":
        return ("win", 1) if oracle_pair_rank(cards) in "6789TJQKA" else ("lose", -1)
    if category == "high_card":
        return "lose", -1
    return "win", BONUS_ODDS[category]


def oracle_seat(p, a, d, m, wagers):
    """Expected (outcome, net) per wager from NY 5324.39(e)(9), (f) and PA 674a.11(b),(d),(f),(h)."""
    across_hand, down_hand, board = p + a + [m], p + d + [m], a + d + [m]
    res = {}
    if "middle" in wagers:  # played to the end
        res["ante_across"] = oracle_ante(across_hand)
        res["ante_down"] = oracle_ante(down_hand)
        res["across"] = oracle_bet(across_hand)
        res["down"] = oracle_bet(down_hand)
        outcomes = {res["across"][0], res["down"][0]}
        if "win" in outcomes:
            res["middle"] = ("win", max(res["across"][1], res["down"][1]))
        elif "push" in outcomes:
            res["middle"] = ("push", 0)
        else:
            res["middle"] = ("lose", -1)
    else:  # folded: everything but the bonus is forfeited
        for name in ("ante_across", "ante_down", "across", "down"):
            if name in wagers:
                res[name] = ("lose", -1)
    if "five_card_bonus" in wagers:
        res["five_card_bonus"] = oracle_bonus(board)
    return {name: {"amount": wagers[name], "outcome": o, "net": n * wagers[name]} for name, (o, n) in res.items()}


@st.composite
def random_seat(draw):
    cards = draw(st.lists(st.sampled_from(DECK), min_size=7, max_size=7, unique=True))
    ante = draw(st.integers(min_value=1, max_value=100_000))
    wagers = {"ante_across": ante, "ante_down": ante}
    stop = draw(st.sampled_from(["across", "down", "middle", None]))  # where the seat folds
    for name in ("across", "down", "middle"):
        if name == stop:
            break
        wagers[name] = ante * draw(st.integers(min_value=1, max_value=3))
    if draw(st.booleans()):
        wagers["five_card_bonus"] = draw(st.integers(min_value=1, max_value=100_000))
    return cards, wagers


@settings(max_examples=examples(250), deadline=None)
@given(seat=random_seat())
def test_property_random_deals_settle_by_the_ny_tables(seat):
    """NY 5324.39(e)(9)(i),(ii), (f)(1)-(3), PA 674a.11(b),(d),(f),(h): random deals, random fold points,
    1x-3x bets: every wager's outcome and net equals the NY pay tables applied to oracle-evaluated hands,
    and the seat net is the sum."""
    cards, wagers = seat
    p, a, d, m = cards[:2], cards[2:4], cards[4:6], cards[6]
    out = settle_round(round_data([{"seat": 1, "cards": p, "wagers": wagers}], a, d, m))
    (result,) = out["seats"]
    expected = oracle_seat(p, a, d, m, wagers)
    assert result["wagers"] == expected
    assert result["net"] == sum(w["net"] for w in expected.values())
    assert result["five_card_bonus_hand"]["category"] == oracle_category(a + d + [m])
    if "middle" in wagers:
        assert result["across_hand"]["category"] == oracle_category(p + a + [m])
        assert result["down_hand"]["category"] == oracle_category(p + d + [m])
