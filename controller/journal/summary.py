"""A compact, readable text summary of a closed or voided round, for the service's output and for recall.

Shows the cross, each seat's decisions, hands and wager results, the mispays a supervisor accepted (as
``crisscross recall`` words them) and the round's totals. A seat that folded
never had its cards turned on the table, so its cards are not shown (hole-card secrecy; PA 58 Pa. Code
674a.11(b),(d),(f) send them to the discard rack face down). Amounts are printed from integer minor units as
units.cents without floating point.
"""

from __future__ import annotations

from controller.game.hands import evaluate
from controller.game.money import money
from controller.game.settlement import SETTLEMENT_ORDER
from controller.journal.recall import RoundRecord, step_text


#: After the number of a test round (NY 9 NYCRR 5319.58): its money is the test meters', not the table's.
TEST = " (TEST)"

def describe(hand: dict) -> str:
    """A hand's category in words, with the rank for a pair (``pair of Qs``), from its settlement JSON."""
    if hand["category"] == "pair":
        return f"pair of {evaluate(hand['cards']).pair_rank}s"
    return hand["category"].replace("_", " ")


def _wager(name: str, result: dict) -> str:
    return f"{name} {money(result['amount'])} {result['outcome']} {money(result['net'], signed=True)}"


def _format_voided(rnd: RoundRecord) -> list[str]:
    voided = rnd.voided or {}
    lines = [f"Round {rnd.round_no}{TEST if rnd.test else ''} VOIDED by {voided.get('by')} ({voided.get('role')}): {voided.get('reason')}"]
    if rnd.revealed:  # only what was turned on the table: the rest stays face down
        lines[0] += f" | turned: {' '.join(rnd.revealed)}"
    for entry in voided.get("seats", ()):
        amounts = ", ".join(f"{name} {money(amount)}" for name, amount in entry["wagers"].items())
        lines.append(f"  seat {entry['seat']}: returned {amounts}")
    return lines


def format_round(rnd: RoundRecord) -> str:
    """The summary of a closed or voided round as lines of text (no trailing newline)."""
    cross = rnd.cross or ()
    if rnd.voided is not None:
        lines = _format_voided(rnd)
        if rnd.faults:
            lines.append(f"  faults: {', '.join(f['cause'] for f in rnd.faults)}")
        t = rnd.totals or {}
        lines.append(f"  totals: wagered {money(t.get('wagered', 0))} | returned {money(t.get('returned', 0))}")
        return "\n".join(lines)
    lines = [f"Round {rnd.round_no}{TEST if rnd.test else ''}"]
    if len(cross) == 5:
        lines[0] += f" | cross: across {cross[0]} {cross[1]} | down {cross[2]} {cross[3]} | middle {cross[4]}"
    for seat in rnd.settled_order:
        settled = rnd.settlements[seat]
        wagers = settled["wagers"]
        ante = wagers["ante_across"]["amount"]
        folded = settled.get("folded_at")
        if folded:
            head = f"  seat {seat}: folded at the {folded} decision (cards not shown)"
        else:
            bets = ", ".join(f"{d} {wagers[d]['amount'] // ante}x" for d in ("across", "down", "middle"))
            a, d = settled["across_hand"], settled["down_hand"]
            head = (f"  seat {seat}: {' '.join(a['cards'][:2])} | {bets} | across hand {describe(a)}, "
                    f"down hand {describe(d)}")
        lines.append(head)
        results = [_wager(n, wagers[n]) for n in SETTLEMENT_ORDER if n in wagers]
        lines.append("      " + "; ".join(results) + f" | seat net {money(settled['net'], signed=True)}")
    if rnd.settlements:
        board = next(iter(rnd.settlements.values()))["five_card_bonus_hand"]
        lines.append(f"  board (five-card bonus hand): {describe(board)}")
    if rnd.faults:
        cleared = ", ".join(f"{c['by']}" for c in rnd.faults_cleared)
        lines.append(f"  faults: {', '.join(f['cause'] for f in rnd.faults)} (cleared by {cleared or '-'})")
    if rnd.irregularities:
        lines.append(f"  irregularities: {len(rnd.irregularities)} ({', '.join(i['kind'] for i in rnd.irregularities)})")
    for accepted in rnd.mispays_accepted:  # a payout that stands though it differs from the settlement
        lines.append(f"  {step_text('MispayAccepted', accepted, money)}")
    if rnd.totals:
        t = rnd.totals
        lines.append(f"  totals: wagered {money(t['wagered'])} | returned {money(t['returned'])} | "
                     f"collected {money(t['collected'])} | paid {money(t['paid'])} | "
                     f"players net {money(t['player_net'], signed=True)}")
    return "\n".join(lines)
