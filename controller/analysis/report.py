"""The par sheet as text, Markdown (with a chart of the return table) or JSON (``crisscross par-sheet``).

JSON keys: ``expected_value_per_ante``, ``house_edge`` (a fraction of the two antes), ``element_of_risk``,
``average_total_wager`` (in antes), ``decisions`` (probability per round of each choice at each step),
``return_table`` (rows of wager, outcome, probability, return per ante; the returns add up to the expected
value), plus ``expected_value_fraction``, ``five_card_bonus``, ``card_seen_before_first_decision`` and
``across_strategy``, and ``simplified_strategies``: the exact expected value of each strategy of
``controller.analysis.simplified.STRATEGIES`` (``name``, ``description``, ``expected_value_per_ante``, its
fraction, ``house_edge``, and ``cost_per_ante``: optimal minus it, with its fraction) and ``strategy_card``,
the card's lines.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from controller.analysis.parsheet_totals import ParSheet
from controller.analysis.simplified import CARD, STRATEGIES

SEEN_NAMES = {"middle": "the middle card", "across_outside": "an across outside card",
              "down_outside": "a down outside card"}


def to_json_data(sheet: ParSheet) -> dict[str, Any]:
    """The par sheet as a JSON-ready dict (see module docstring)."""
    return {
        "jurisdiction": sheet.jurisdiction,
        "source": sheet.source,
        "pay_tables": sheet.pay_tables,
        "expected_value_per_ante": float(sheet.expected_value),
        "expected_value_fraction": f"{sheet.expected_value.numerator}/{sheet.expected_value.denominator}",
        "house_edge": float(sheet.house_edge),
        "element_of_risk": float(sheet.element_of_risk),
        "average_total_wager": float(sheet.average_total_wager),
        "decisions": {step: {k: float(v) for k, v in choices.items()} for step, choices in sheet.decisions.items()},
        "return_table": sheet.return_table,
        "five_card_bonus": {"return": float(sheet.bonus_return),
                            "return_fraction": f"{sheet.bonus_return.numerator}/{sheet.bonus_return.denominator}",
                            "boards": sheet.bonus_counts},
        "card_seen_before_first_decision": {k: {"expected_value_per_ante": v, "player_edge": v / 2}
                                            for k, v in sheet.seen_card_value.items()},
        "across_strategy": sheet.across_strategy,
        "simplified_strategies": [
            {"name": name, "description": STRATEGIES[name], "expected_value_per_ante": float(value),
             "expected_value_fraction": _fraction(value), "house_edge": float(-value / 2),
             "cost_per_ante": float(sheet.expected_value - value),
             "cost_fraction": _fraction(sheet.expected_value - value)}
            for name, value in sheet.strategies.items()],
        "strategy_card": list(CARD),
    }


def _fraction(value) -> str:
    return f"{value.numerator}/{value.denominator}"


def _strategy_rows(sheet: ParSheet) -> list[tuple[str, str, float, float, float]]:
    """(name, description, expected value, house edge, cost per ante) of the simplified strategies, the
    optimal one first."""
    rows = [("optimal", "the par sheet's strategy", float(sheet.expected_value), float(sheet.house_edge), 0.0)]
    return rows + [(name, STRATEGIES[name], float(value), float(-value / 2), float(sheet.expected_value - value))
                   for name, value in sheet.strategies.items()]


def to_json(sheet: ParSheet) -> str:
    """JSON text of ``to_json_data``."""
    return json.dumps(to_json_data(sheet), indent=2)


def _strategy_lines(sheet: ParSheet) -> list[str]:
    groups: dict[int, list[str]] = {}
    for hand, choice in sheet.across_strategy.items():
        groups.setdefault(choice, []).append(hand)
    lines = []
    for choice, hands in sorted(groups.items()):
        lines += textwrap.wrap(" ".join(hands), 100, initial_indent=f"  {'fold' if choice == 0 else f'{choice}x'}: ",
                               subsequent_indent="        ")
    return lines


def _where(source: str) -> str:
    """The pay-table file as a path relative to the working folder when it lies below it."""
    try:
        return str(Path(source).resolve().relative_to(Path.cwd()))
    except ValueError:
        return source


def _pay_lines(sheet: ParSheet) -> list[str]:
    lines = []
    for name, pays in sheet.pay_tables.items():
        cells = ", ".join(f"{hand} {odds if odds == 'push' else f'{odds} to 1'}" for hand, odds in pays.items())
        lines += textwrap.wrap(cells, 100, initial_indent=f"  {name}: ", subsequent_indent="    ")
    return lines


def _bonus_lines(sheet: ParSheet) -> list[tuple[str, int, str]]:
    pays = sheet.pay_tables.get("five_card_bonus", {})
    return [(hand, count, "loses" if hand not in pays else (pays[hand] if pays[hand] == "push" else f"{pays[hand]} to 1"))
            for hand, count in sheet.bonus_counts.items()]


PROBABILITY_NOTE = "probability per round; the ante rows count both lines of a round (the two antes)"


def _decision_line(choices: dict[str, float]) -> str:
    return "  ".join(f"{name} {100 * p:.4f}%" for name, p in choices.items())


def to_text(sheet: ParSheet) -> str:
    """A plain-text par sheet."""
    lines = [
        f"Criss-Cross Poker par sheet ({sheet.jurisdiction}), optimal strategy, exact enumeration",
        f"pay tables from {_where(sheet.source)}:",
        *_pay_lines(sheet),
        f"expected value per ante   {float(sheet.expected_value):+.6f}  "
        f"({sheet.expected_value.numerator}/{sheet.expected_value.denominator})",
        f"house edge (two antes)     {100 * float(sheet.house_edge):.4f}%",
        f"element of risk            {100 * float(sheet.element_of_risk):.4f}%",
        f"average total wager        {float(sheet.average_total_wager):.4f} antes",
        "decisions (probability per round):",
    ]
    lines += [f"  {step:<7}{_decision_line(choices)}" for step, choices in sheet.decisions.items()]
    lines.append(f"return table (per ante; {PROBABILITY_NOTE}):")
    lines.append(f"  {'wager':<8}{'outcome':<22}{'probability':>14}{'return':>12}")
    for row in sheet.return_table:
        lines.append(f"  {row['wager']:<8}{row['outcome']:<22}{row['probability']:>14.8f}{row['return']:>12.6f}")
    bonus = sheet.bonus_return
    lines.append(f"five-card bonus return     {100 * float(bonus):+.4f}%  ({bonus.numerator}/{bonus.denominator}), "
                 f"over {sum(sheet.bonus_counts.values()):,} boards:")
    lines += [f"  {hand:<22}{count:>10,}  {pays}" for hand, count, pays in _bonus_lines(sheet)]
    lines.append("one community card seen before the across decision (expected value per ante, player edge):")
    for key, value in sheet.seen_card_value.items():
        lines.append(f"  {SEEN_NAMES[key]:<24}{value:+.6f}  {100 * value / 2:+.2f}% of the two antes")
    lines.append("across decision by two-card hand:")
    lines += _strategy_lines(sheet)
    if sheet.strategies:
        lines.append("simplified strategies (expected value per ante, house edge, cost per ante against optimal):")
        for name, description, value, edge, cost in _strategy_rows(sheet):
            lines.append(f"  {name:<18}{value:+.6f}  {100 * edge:7.4f}%  {cost:.6f}  {description}")
        lines.append("strategy card:")
        lines += [f"  {line}" for line in CARD]
    return "\n".join(lines)


def _bar(value: float, scale: float, width: int = 40) -> str:
    n = round(abs(value) / scale * width) if scale else 0
    return ("-" if value < 0 else "+") * n


def to_markdown(sheet: ParSheet) -> str:
    """A Markdown par sheet with tables and a text chart of the return table."""
    out = [
        f"# Criss-Cross Poker par sheet: {sheet.jurisdiction}",
        "",
        "Optimal strategy (fold or bet at each of the three decisions to maximise expected value), exact",
        f"enumeration of every deal. Pay tables from `{_where(sheet.source)}` (odds N to 1):",
        "",
        "| hand | " + " | ".join(sheet.pay_tables) + " |",
        "|---|" + "---|" * len(sheet.pay_tables),
        *[f"| {hand} | " + " | ".join(str(t[hand]) for t in sheet.pay_tables.values()) + " |"
          for hand in next(iter(sheet.pay_tables.values()), {})],
        "",
        "| measure | value |",
        "|---|---|",
        f"| expected value per ante | {float(sheet.expected_value):+.6f} ({sheet.expected_value.numerator}/"
        f"{sheet.expected_value.denominator}) |",
        f"| house edge (of the two antes) | {100 * float(sheet.house_edge):.4f}% |",
        f"| element of risk | {100 * float(sheet.element_of_risk):.4f}% |",
        f"| average total wager | {float(sheet.average_total_wager):.4f} antes |",
        f"| five-card bonus return | {100 * float(sheet.bonus_return):+.4f}% ({sheet.bonus_return.numerator}/"
        f"{sheet.bonus_return.denominator}) |",
        "",
        "## Decisions (probability per round)",
        "",
    ]
    names = sorted({n for c in sheet.decisions.values() for n in c}, key=lambda n: -1 if n == "fold" else int(n[:-1]))
    out.append("| decision | " + " | ".join(names) + " |")
    out.append("|---|" + "---|" * len(names))
    for step, choices in sheet.decisions.items():
        out.append(f"| {step} | " + " | ".join(f"{100 * choices.get(n, 0.0):.4f}%" for n in names) + " |")
    out += ["", "## Return table (per ante)", "", PROBABILITY_NOTE + ".", "",
            "| wager | outcome | probability | return |", "|---|---|---|---|"]
    for row in sheet.return_table:
        out.append(f"| {row['wager']} | {row['outcome']} | {row['probability']:.8f} | {row['return']:+.6f} |")
    scale = max(abs(r["return"]) for r in sheet.return_table)
    out += ["", "Return by wager and outcome (each `+`/`-` is "
            f"{scale / 40:.4f} ante):", "", "```"]
    for row in sheet.return_table:
        out.append(f"{row['wager'] + ' ' + row['outcome']:<32}{row['return']:+9.4f} {_bar(row['return'], scale)}")
    out += ["```", "", "## One community card seen before the across decision", "",
            "| card seen | expected value per ante | player edge (of two antes) |", "|---|---|---|"]
    for key, value in sheet.seen_card_value.items():
        out.append(f"| {SEEN_NAMES[key]} | {value:+.6f} | {100 * value / 2:+.2f}% |")
    out += ["", "## Five-card bonus", "", "| board | boards | pays |", "|---|---|---|"]
    out += [f"| {hand} | {count:,} | {pays} |" for hand, count, pays in _bonus_lines(sheet)]
    out += ["", "## Across decision by two-card hand", ""]
    out += [line.strip() + "  " for line in _strategy_lines(sheet)]
    if sheet.strategies:
        out += ["", "## Simplified strategies", "",
                "Exact expected value of strategies players use, each against the optimal strategy.", "",
                "| strategy | what it does | expected value per ante | house edge | cost per ante |",
                "|---|---|---|---|---|"]
        out += [f"| {name} | {description} | {value:+.6f} | {100 * edge:.4f}% | {cost:.6f} |"
                for name, description, value, edge, cost in _strategy_rows(sheet)]
        out += ["", "Strategy card:", ""] + [f"- {line}" for line in CARD]
    return "\n".join(out) + "\n"
