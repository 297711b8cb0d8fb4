"""The report's plot (``crisscross floor report --plot FILE.svg``; docs/backoffice.md, "Reports"): the actual and
theoretical hold by gaming day, each cumulative from the period's first day, with the 95% band around the
theoretical, as a small SVG 1.1 document written here (the project has no plotting library).

Its input is ``controller.floor.report.daily`` and the pay tables' variance; the numbers are the report's
(``controller.floor.report.statistics`` of the days up to each one), so the last point is the report's.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from xml.sax.saxutils import escape

from controller.floor.report import Sums, statistics

WIDTH, HEIGHT = 760, 380
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 40, 48
#: The plot's least span of hold (percentage points), so a steady table is not drawn as noise.
LEAST_SPAN = 4.0


def cumulative(days: list[tuple[dt.date, Sums]], variance: Any) -> list[tuple[dt.date, dict[str, Any]]]:
    """Each day's ``statistics`` of the days up to it (the lifetime comparison left out: the same sums)."""
    out = []
    running: Sums | None = None
    for day, found in days:
        running = found if running is None else Sums({k: running.columns[k] + v for k, v in found.columns.items()},
                                                     running.theoretical + found.theoretical)
        out.append((day, statistics(running, running, variance)))
    return out


def hold_points(points: list[tuple[dt.date, dict[str, Any]]]) -> list[tuple[dt.date, float, float, float, float]]:
    """``(day, actual %, theoretical %, band low %, band high %)`` of each day with a rated drop."""
    out = []
    for day, s in points:
        if not s["rated_drop"] or s["interval_low"] is None:
            continue
        drop = s["rated_drop"]
        out.append((day, 100 * s["rated_actual"] / drop, 100 * int(s["theoretical"]) / drop,
                    100 * s["interval_low"] / drop, 100 * s["interval_high"] / drop))
    return out


def svg(table: str, period: str, points: list[tuple[dt.date, float, float, float, float]]) -> str:
    """The SVG text of ``hold_points``; a plot that says "no rated rounds" when there is none."""
    title = f"{table}: actual and theoretical hold, {period}, cumulative, with the 95% band"
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} '
            f'{HEIGHT}" font-family="sans-serif" font-size="12">\n<title>{escape(title)}</title>\n'
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>\n'
            f'<text x="{LEFT}" y="22" font-size="14">{escape(title)}</text>\n')
    if not points:
        return head + f'<text x="{LEFT}" y="{HEIGHT // 2}">no rated rounds in the period</text>\n</svg>\n'
    values = [v for p in points for v in p[1:3]]
    middle = (max(values) + min(values)) / 2
    span = max(max(values) - min(values), LEAST_SPAN) * 1.5
    low, high = middle - span / 2, middle + span / 2
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    n = len(points)

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return TOP + plot_h * (high - min(max(v, low), high)) / (high - low)

    def line(column: int) -> str:
        return " ".join(f"{x(i):.1f},{y(p[column]):.1f}" for i, p in enumerate(points))

    band = line(3).split() + list(reversed(line(4).split()))
    parts = [head, f'<polygon class="band" points="{" ".join(band)}" fill="#c6dbef" stroke="none"/>\n']
    for k in range(5):  # the grid and the hold axis
        v = low + (high - low) * k / 4
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
                     f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}%</text>\n')
    parts.append(f'<polyline class="theoretical" points="{line(2)}" fill="none" stroke="#08519c" '
                 f'stroke-width="2" stroke-dasharray="6 4"/>\n')
    parts.append(f'<polyline class="actual" points="{line(1)}" fill="none" stroke="#cb181d" stroke-width="2"/>\n')
    for i in sorted({0, n - 1, *range(0, n, max(1, n // 6))}):  # day labels
        parts.append(f'<text x="{x(i):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">'
                     f'{points[i][0].isoformat()}</text>\n')
    legend_y = HEIGHT - 10
    parts.append(f'<text x="{LEFT}" y="{legend_y}" fill="#cb181d">actual hold (rated rounds)</text>'
                 f'<text x="{LEFT + 210}" y="{legend_y}" fill="#08519c">theoretical hold</text>'
                 f'<text x="{LEFT + 360}" y="{legend_y}" fill="#4a7fb0">95% interval of the actual</text>\n')
    return "".join(parts) + "</svg>\n"
