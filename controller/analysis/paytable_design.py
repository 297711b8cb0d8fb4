"""``crisscross paytable design``: pay tables whose exact house edge is closest to a target.

A facility may pay more than the regulation's minimum on any hand (NY 9 NYCRR 5324.39(f) "no less than";
the minimums are ``controller.game.minimums``), from the odds its layouts can show (``--values``, default
``LADDER``). The search varies one pay table of a jurisdiction file and keeps every other value:

- ``bonus`` (the five-card bonus): its house edge is exact over the 2,598,960 boards
  (``paytable_report.five_card_bonus_return``), a linear function of the odds, so every table in the
  search space is ranked exactly.
- ``bet`` (the across, down and middle bets): the house edge (of the two antes) is the par sheet's. At the
  base table's optimal strategy the expected value is linear in the odds (``ParSheet.bet_weight``); tables are
  ranked by that model (a bound: re-optimising the strategy can only raise the player's value), and the best
  ``check`` of them are recomputed by the exact par sheet and ranked by their exact edge.

Candidates for a hand: its minimum (``push`` where the minimum is a push) and each allowed value from the
minimum up to ``max_factor`` times it (at least 1 to 1); a table never pays a hand less than a lower-ranking
one. Printed edges are exact fractions; the written file loads with ``controller.game.paytable.load_jurisdiction``.
"""

from __future__ import annotations

import argparse
import bisect
import dataclasses
import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import yaml

from controller.game.minimums import REGULATIONS, odds_text, odds_value
from controller.game.paytable import MAX_ODDS, PAY_HANDS, Jurisdiction, PayTable

#: Odds (N to 1) a layout customarily shows; ``--values`` replaces them.
LADDER: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 18, 20, 25, 30, 35, 40, 50, 60, 75, 80, 100, 125,
                           150, 200, 250, 300, 400, 500, 600, 750, 800, 1000, 1500, 2000)
#: The most ``--max-factor`` (times a hand's minimum), ``--top`` (tables printed) and ``--check`` (par sheets) take.
MOST_FACTOR, MOST_TOP, MOST_CHECK = 1000, 1000, 100
#: The most tables the search may try (``search_size``: both halves of the meet in the middle, each table tried
#: once): about 2 microseconds each, so at most some ten seconds of CPU before the par sheets of ``bet``.
MAX_SEARCH = 5_000_000
#: The varied table's name in a jurisdiction for each ``--vary`` choice.
VARY = {"bonus": "five_card_bonus", "bet": "bet"}


@dataclass(frozen=True)
class Design:
    """One searched pay table: ``pays`` (hand -> odds), its exact ``house_edge`` (a fraction of the bonus wager
    for ``bonus``, of the two antes for ``bet``) and ``distance`` = |house_edge - target|."""

    pays: dict[str, int | str]
    house_edge: Fraction
    distance: Fraction


def hand_candidates(minimum: dict[str, int | str], values: Sequence[int], max_factor: int) -> list[list[int | str]]:
    """The odds tried for each hand of ``PAY_HANDS`` (see module docstring)."""
    out = []
    for hand in PAY_HANDS:
        least = minimum[hand]
        top = max(odds_value(least), 1) * max_factor
        choices: list[int | str] = ["push"] if least == "push" else []
        choices += sorted({v for v in values if max(odds_value(least), 1) <= v <= top})
        if least != "push" and least not in choices:
            choices.insert(0, least)
        out.append(choices)
    return out


def search_size(candidates: list[list[int | str]]) -> int:
    """How many tables ``nearest`` tries for ``candidates`` (one list of odds per hand): the product of the
    choices of the lower hands plus that of the upper hands (the halves of its meet in the middle)."""
    half = len(candidates) // 2
    return math.prod(map(len, candidates[:half])) + math.prod(map(len, candidates[half:]))


def check_search_size(jurisdiction: Jurisdiction, vary: str, values: Sequence[int], max_factor: int) -> None:
    """Raise ``ValueError`` when the search for ``vary`` in ``jurisdiction`` over ``values`` up to
    ``max_factor`` times each minimum would try more than ``MAX_SEARCH`` tables (``search_size``), saying how
    many and what narrows it; before any search (``--values 1,2,...,5000`` ran for minutes, silent)."""
    candidates = hand_candidates(dict(REGULATIONS[jurisdiction.code].minimums[VARY[vary]].pays), values,
                                 max_factor)
    size = search_size(candidates)
    if size > MAX_SEARCH:
        raise ValueError(f"--values and --max-factor {max_factor}: the search would try {size:,} tables, more than "
                         f"{MAX_SEARCH:,}: give fewer --values or a lower --max-factor")


def parse_values(text: str) -> tuple[int, ...]:
    """The odds of ``--values`` (``N,N,...``: whole numbers from 1 to ``MAX_ODDS``, comma-separated). Raises
    ``ValueError`` naming ``text`` and what is wrong: an empty value (``1,,3``: which one), a word that is not
    a whole number, a value below 1 or above ``MAX_ODDS`` (the pay tables' loader refuses more)."""
    values = []
    for number, word in enumerate(text.split(","), 1):
        if not word.strip():
            raise ValueError(f"--values {text}: value {number} is empty: expected positive integers separated by "
                             f"commas")
        if not word.strip().isdigit() or not word.strip().isascii():
            raise ValueError(f"--values {text}: {word.strip()[:20]!r} is not a whole number")
        values.append(int(word))
    if min(values) < 1:
        raise ValueError(f"--values {text}: expected positive integers")
    if max(values) > MAX_ODDS:
        raise ValueError(f"--values {text}: odds above {odds_text(MAX_ODDS)}, the most a pay table may offer "
                         f"(crisscross paytable, docs/commands.md)")
    return tuple(values)


def nearest(candidates: list[list[int | str]], weights: Sequence[float], constant: float, target: float,
            count: int) -> list[tuple[int | str, ...]]:
    """The ``count`` tables (one odds per hand, never decreasing with rank) whose ``constant + sum(weight x
    odds)`` is nearest ``target``: meet in the middle over the lower and the upper hands."""
    half = len(candidates) // 2

    def tables(part: range):
        for combo in itertools.product(*(candidates[i] for i in part)):
            values = [odds_value(o) for o in combo]
            if all(a <= b for a, b in zip(values, values[1:])):
                yield combo, sum(weights[i] * v for i, v in zip(part, values))

    upper: dict[int, list[tuple[float, tuple]]] = {}
    for combo, score in tables(range(half, len(candidates))):
        upper.setdefault(odds_value(combo[0]), []).append((score, combo))
    groups = []
    for first, rows in upper.items():
        rows.sort()
        groups.append((first, [r[0] for r in rows], rows))
    best: list[tuple[float, tuple]] = []  # a heap of (-distance, table)
    for combo, score in tables(range(half)):
        last = odds_value(combo[-1])
        want = target - constant - score
        for first, keys, rows in groups:
            if first < last:
                continue
            at = bisect.bisect_left(keys, want)
            for i in range(max(at - count, 0), min(at + count, len(rows))):
                entry = (-abs(keys[i] - want), combo + rows[i][1])
                if len(best) < count:
                    heapq.heappush(best, entry)
                elif entry[0] > best[0][0]:
                    heapq.heapreplace(best, entry)
    return [table for _, table in sorted(best, key=lambda e: (-e[0], tuple(map(odds_value, e[1]))))]


def with_table(jurisdiction: Jurisdiction, name: str, pays: dict[str, int | str], citation: str) -> Jurisdiction:
    """``jurisdiction`` with its pay table ``name`` replaced by ``pays``."""
    return dataclasses.replace(jurisdiction, **{name: PayTable(name, dict(pays), citation)})


def design(jurisdiction: Jurisdiction, vary: str, target: Fraction, values: Sequence[int] = LADDER,
           max_factor: int = 4, top: int = 5, check: int = 3,
           par_sheet: Callable[[Jurisdiction], object] | None = None) -> list[Design]:
    """The pay tables closest to ``target`` (see module docstring), best first: ``top`` of them for ``bonus``,
    ``check`` (each an exact par sheet, ``par_sheet(jurisdiction)``) for ``bet``. Raises ``ValueError`` for an
    unknown ``vary`` or a search larger than ``MAX_SEARCH`` (``check_search_size``)."""
    if vary not in VARY:
        raise ValueError(f"--vary {vary!r}: choose one of {', '.join(VARY)}")
    check_search_size(jurisdiction, vary, values, max_factor)
    name = VARY[vary]
    minimum = dict(REGULATIONS[jurisdiction.code].minimums[name].pays)
    candidates = hand_candidates(minimum, values, max_factor)
    if vary == "bonus":
        from controller.analysis.paytable_report import five_card_bonus_return

        boards = five_card_bonus_return(jurisdiction).boards
        total = sum(boards.values())
        # edge = -(sum(boards x odds) - losing boards) / total
        weights = [-boards[h] / total for h in PAY_HANDS]
        tables = nearest(candidates, weights, boards["below_pair_of_6s"] / total, float(target), top)
        edge = lambda pays: -five_card_bonus_return(with_table(jurisdiction, name, pays, "")).net  # noqa: E731
    else:
        if par_sheet is None:
            from controller.analysis.parsheet_totals import compute_par_sheet as par_sheet
        base = par_sheet(jurisdiction)
        current = [odds_value(jurisdiction.bet.pays[h]) for h in PAY_HANDS]
        weights = [-float(base.bet_weight[h]) / 2 for h in PAY_HANDS]
        constant = float(base.house_edge) - sum(w * v for w, v in zip(weights, current))
        tables = nearest(candidates, weights, constant, float(target), check)
        edge = lambda pays: par_sheet(with_table(jurisdiction, name, pays, "")).house_edge  # noqa: E731
    found = []
    for table in tables:
        pays = dict(zip(PAY_HANDS, table))
        exact = edge(pays)
        found.append(Design(pays, exact, abs(exact - target)))
    return sorted(found, key=lambda d: (d.distance, [odds_value(d.pays[h]) for h in PAY_HANDS]))


def write_paytable(jurisdiction: Jurisdiction, vary: str, found: Design, target: Fraction, path: Path) -> None:
    """Write ``jurisdiction``'s file with the table of ``found`` in place of the varied one (its citation
    says which minimum it answers to and how the odds were chosen), as a pay-table file ``crisscross run``
    (``jurisdiction:`` of table.yaml), ``settle`` and ``par-sheet`` accept. ``path`` is created: raises
    ``FileExistsError`` when it names a file already (nothing written over) and ``OSError`` when it cannot be
    written (a file begun is removed)."""
    name = VARY[vary]
    data = yaml.safe_load(Path(jurisdiction.source).read_text())
    table = data["pay_tables"][name]
    table["citation"] = (f"{table['citation']}; odds raised above the minimum by the facility (house edge "
                         f"{float(found.house_edge):.4%} for a target of {float(target):.4%})")
    table["pays"] = dict(found.pays)
    text = yaml.safe_dump(data, sort_keys=False, width=110)
    with path.open("x", encoding="utf-8") as out:  # never over a file: a pay table in use among them
        try:
            out.write(text)
        except BaseException:
            path.unlink(missing_ok=True)
            raise


def format_designs(jurisdiction: Jurisdiction, vary: str, target: Fraction, found: list[Design]) -> str:
    """The designs as printed: each table's odds changed from the minimum and its exact house edge."""
    name = VARY[vary]
    minimum = REGULATIONS[jurisdiction.code].minimums[name]
    what = "of the five-card bonus" if vary == "bonus" else "of the two antes, optimal strategy"
    out = [f"pay tables for {name} closest to a house edge of {float(target):.4%} ({what}); minimums: "
           f"{minimum.citation}"]
    for rank, d in enumerate(found, 1):
        edge = d.house_edge
        returned = f", return to player {float(1 - edge):.6%}" if vary == "bonus" else ""
        out.append(f"{rank}. house edge {edge.numerator}/{edge.denominator} = {float(edge):.6%} "
                   f"(distance {float(d.distance):.6%}){returned}")
        out.append("   " + ", ".join(f"{h} {odds_text(d.pays[h])}" + ("" if d.pays[h] == minimum.pays[h] else "*")
                                    for h in PAY_HANDS))
    out.append("(* above the minimum)")
    return "\n".join(out)


def parser(parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """The options of ``crisscross paytable design`` (the words after ``design``), with those of ``parents`` (the
    command line's ``-v``, docs/commands.md); ``parse_args`` exits 2 naming a bad option."""
    from controller.settings.argtypes import positive_int_at_most, workers

    parser = argparse.ArgumentParser(prog="crisscross paytable design", parents=list(parents),
                                     description="pay tables closest to a target house edge")
    parser.add_argument("--jurisdiction", default="ny", help="code or pay-table file to start from (default ny)")
    parser.add_argument("--target-house-edge", type=Fraction, required=True, metavar="EDGE",
                        help="e.g. 0.03 for 3%%")
    parser.add_argument("--vary", choices=tuple(VARY), required=True,
                        help="bonus: the five-card bonus; bet: the across, down and middle bets")
    parser.add_argument("--values", default=None, metavar="N,N,...",
                        help="the odds the facility allows (N to 1; default: "
                             + ",".join(map(str, LADDER[:8])) + ",...)")
    # each bounded: the search's memory grows with --top (the tables kept) and its time with --max-factor and
    # --check (a par sheet each, seconds of CPU)
    parser.add_argument("--max-factor", type=positive_int_at_most(MOST_FACTOR), default=4,
                        help=f"at most this many times a hand's minimum (default 4, at most {MOST_FACTOR})")
    parser.add_argument("--top", type=positive_int_at_most(MOST_TOP), default=5,
                        help=f"bonus: tables printed (default 5, at most {MOST_TOP})")
    parser.add_argument("--check", type=positive_int_at_most(MOST_CHECK), default=3,
                        help=f"bet: tables recomputed by the par sheet (default 3, at most {MOST_CHECK})")
    parser.add_argument("--output", type=Path, default=None,
                        help="pay-table file written with the best table (default: <code>-<vary>-designed.yaml)")
    parser.add_argument("--workers", type=workers, default=None, help="bet: par-sheet processes (default: one per CPU)")
    return parser


def _check_output(path: Path) -> None:
    """Raise ``ValueError`` naming ``path`` when the design's file cannot be made there: a name taken already
    (a file, a folder, a link: the design never writes over one, a pay table in use among them) or a folder
    that is not one. Checked before the search, which takes minutes of CPU for ``--vary bet``."""
    if path.exists() or path.is_symlink():
        raise ValueError(f"--output {path}: exists: the design never writes over a file (name another)")
    if not path.parent.is_dir():
        raise ValueError(f"--output {path}: no folder {path.parent}")


def main(args: argparse.Namespace) -> int:
    """``crisscross paytable design`` with ``args`` parsed by ``parser()``: search, print, write. Exit status 0,
    or 2 with one line on standard error for bad ``--values`` (``parse_values``: an empty value, a word that is
    not a whole number, below 1 or above ``MAX_ODDS``, which the pay tables' loader refuses), a search larger
    than ``MAX_SEARCH`` tables (``check_search_size``), a bad ``--target-house-edge``, a jurisdiction that does not load, an ``--output`` (or
    the default file) that exists already or whose folder does not, or a file that cannot be written."""
    import sys

    from controller.game.paytable import load_jurisdiction
    from controller.settings.files import ConfigError

    try:
        values = LADDER if args.values is None else parse_values(args.values)
        if not 0 <= args.target_house_edge < 1:
            raise ValueError(f"--target-house-edge {args.target_house_edge}: expected a fraction in [0, 1)")
        jurisdiction = load_jurisdiction(args.jurisdiction)
        check_search_size(jurisdiction, args.vary, values, args.max_factor)
        output = args.output or Path(f"{jurisdiction.code}-{args.vary}-designed.yaml")
        _check_output(output)
    except (ValueError, ConfigError) as exc:
        print(f"crisscross paytable design: {exc}", file=sys.stderr)
        return 2

    def par_sheet(j: Jurisdiction):
        from controller.analysis.parsheet_totals import compute_par_sheet

        return compute_par_sheet(j, workers=args.workers)

    found = design(jurisdiction, args.vary, args.target_house_edge, values, args.max_factor, args.top, args.check,
                   par_sheet)
    print(format_designs(jurisdiction, args.vary, args.target_house_edge, found))
    try:
        write_paytable(jurisdiction, args.vary, found[0], args.target_house_edge, output)
    except OSError as exc:
        print(f"crisscross paytable design: {output}: cannot write the pay table: {exc.strerror or exc}"
              + (" (it never writes over a file: name another with --output)" if isinstance(exc, FileExistsError)
                 else ""), file=sys.stderr)
        return 2
    load_jurisdiction(output)  # the file written loads as a pay table (else ConfigError: a defect here)
    print(f"wrote table 1 to {output} (crisscross paytable {output}; jurisdiction: {output} in table.yaml)")
    return 0
