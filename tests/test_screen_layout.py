"""The dealer's screen at arm's length (docs/control.md, "The dealer's screen"), in Debian's Chromium driven by
Playwright: one round played through betting (chips on the felt), a shoe fault, a decision, a reveal and the
payout check with a mispay; in each state, at 1024x768, 1280x800 and 1920x1080, nothing is below the fold or
clipped, the table's text is at least 18 px at 1280x800, amounts are written in one format with the currency,
and axe-core finds no serious or critical violation. A screenshot of each state at each size goes to
``$CI_ARTIFACTS/screen-layout``. A manual-dealing table's supervisor buttons go with the supervisor's login.
"""

from __future__ import annotations

import re

import pytest

from controller.journal.reader import read_records
from tests.browser import Table, artifacts, axe_violations
from tests.test_screen_browser import PATIENCE_MS, browser, press, sign_in, wait_state  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow  # a browser per test: the long tier (docs/testing.md)

#: The sizes of a table's touch display the screen is made for (width, height in CSS pixels).
SIZES = ((1024, 768), (1280, 800), (1920, 1080))
#: Smallest text in the table area at 1280x800 (CSS pixels): read at arm's length (the issue's figure).
MIN_TEXT_PX = 18
#: An amount as the screen writes it: the currency's symbol, thousands separated, two decimals (minor units:
#: cents, domain.md "Money"), an optional sign.
MONEY = re.compile(r"^[+-]?\$\d{1,3}(,\d{3})*\.\d\d$")
WAGERS = {2: {"ante_across": 500, "ante_down": 500, "five_card_bonus": 100}, 5: {"ante_across": 1000,
                                                                                  "ante_down": 1000}}

#: Every element whose own text is visible: (font size in px, its own text, whether it lies in the table area).
TEXTS = """() => [...document.querySelectorAll('body *')].filter((node) => {
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    const box = node.getBoundingClientRect();
    return own && box.width > 0 && box.height > 0 && getComputedStyle(node).visibility !== 'hidden';
  }).map((node) => [parseFloat(getComputedStyle(node).fontSize),
                    [...node.childNodes].filter((c) => c.nodeType === 3).map((c) => c.textContent.trim()).join(' '),
                    Boolean(node.closest('#table'))])"""
#: What does not fit: the page scrolling, a seat tile or the side column clipping its content, a spot's name cut.
OVERFLOW = """() => {
    const out = [];
    const page = document.scrollingElement;
    if (page.scrollHeight > innerHeight || page.scrollWidth > innerWidth)
      out.push(`page ${page.scrollWidth}x${page.scrollHeight} in ${innerWidth}x${innerHeight}`);
    for (const node of document.querySelectorAll('.seat, aside, #table, header'))
      if (node.scrollHeight > node.clientHeight + 1 || node.scrollWidth > node.clientWidth + 1)
        out.push(`${node.id || node.tagName}: ${node.scrollWidth}x${node.scrollHeight} in ${node.clientWidth}x${node.clientHeight}`);
    for (const node of document.querySelectorAll('.spots dt'))  // a spot's name cut short
      if (node.scrollWidth > node.clientWidth) out.push(`${node.closest('.seat').id}: "${node.textContent}" cut`);
    return out;
  }"""


@pytest.fixture
def table(tmp_path):
    running = Table(tmp_path)
    yield running
    running.stop()


def check_state(page, name: str, shots) -> None:
    """At each of ``SIZES``: no scroll and nothing clipped, the table's text large enough at 1280x800, every
    amount in the one format, no serious or critical axe violation; a screenshot of each."""
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_function("([w, h]) => innerWidth === w && innerHeight === h", arg=[width, height])
        page.screenshot(path=shots / f"{name}-{width}x{height}.png")
        assert page.evaluate(OVERFLOW) == [], f"{name} at {width}x{height}"
        texts = page.evaluate(TEXTS)
        if (width, height) == (1280, 800):
            small = [(size, text[:40]) for size, text, in_table in texts if in_table and size < MIN_TEXT_PX]
            assert not small, f"{name}: text under {MIN_TEXT_PX} px in the table area: {small}"
        amounts = [word for _, text, _ in texts for word in re.findall(r"\S*\d\.\d\d\S*", text)]
        wrong = [a for a in amounts if not MONEY.match(a.rstrip(",;.)").lstrip("("))]
        assert not wrong, f"{name}: amounts not written as $1,234.50: {wrong}"
        violations = axe_violations(page)
        assert violations == [], f"{name} at {width}x{height}: {violations}"


def test_each_state_fits_each_size_is_legible_and_passes_axe(browser, table):
    shots = artifacts("screen-layout")
    print(f"\nscreenshots of the dealer's screen at each size: {shots}")
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.set_default_timeout(PATIENCE_MS)
    page.goto(table.url + "/")
    page.wait_for_selector("#link:text('live')")
    sign_in(page, "dealer", "dan")
    press(page, "open_betting")
    table.place(WAGERS)
    page.wait_for_selector("#seat-5.unlocked dd")  # the chips on the felt, before "no more bets"
    assert page.inner_text("#seat-5 dl") .split() == ["Ante", "across", "$10.00", "Ante", "down", "$10.00"]
    check_state(page, "1-betting", shots)

    table.service.sims["shoe"].inject("jam")
    press(page, "no_more_bets")
    wait_state(page, "fault")
    page.wait_for_selector("#reason-clear_fault, #buttons button[data-action=clear_fault]")
    check_state(page, "2-fault", shots)
    sign_in(page, "supervisor", "sue")
    press(page, "clear_fault")

    wait_state(page, "across_decision")
    assert page.inner_text("#state") == "Across decision"
    check_state(page, "3-decision", shots)
    for step, amount in (("across", 1000), ("down", 500), ("middle", 1500)):
        wait_state(page, f"{step}_decision")
        table.place({2: {step: amount}})
        press(page, "confirm")
        wait_state(page, f"{step}_reveal")
        if step == "across":
            check_state(page, "4-reveal", shots)
        press(page, "reveal")

    wait_state(page, "payout")
    payout = table.service.machine.view()["payout"]
    seat = payout["seat"]
    spots = {spot: step["expected"] for spot, step in payout["seats"][str(seat)]["spots"].items()}
    over = next(spot for spot, step in payout["seats"][str(seat)]["spots"].items() if step["action"] != "none")
    table.place({seat: {**spots, over: spots[over] + 100}})  # one spot over by $1.00
    press(page, "paid")
    page.wait_for_selector(".mispay-box")
    assert "over $1.00" in page.inner_text(".mispay-box")
    assert page.inner_text(f"#seat-{seat} dd.mispay") == "Over $1.00"
    assert page.inner_text("#next") == f"Seat {seat}: correct the payout"
    page.wait_for_selector("#seat-2 .hands .hand")  # the hands named at settlement (seat 5 folded)
    check_state(page, "5-payout-mispay", shots)


def test_a_manual_dealing_table_s_supervisor_buttons_go_as_the_supervisor(browser, tmp_path):
    """The issue's case: with a dealer and a supervisor signed in, ``deal_by_hand`` (a supervisor's action,
    NY 9 NYCRR 5324.39(d)(1)) is labelled in words, marked as the supervisor's, sent with the supervisor's login
    and carried out; signed out, the supervisor's buttons say why they are disabled, in words beside them."""
    table = Table(tmp_path, manual_dealing=True)
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(PATIENCE_MS)
        page.goto(table.url + "/")
        page.wait_for_selector("#link:text('live')")
        sign_in(page, "dealer", "dan")
        button = "#buttons button[data-action=deal_by_hand]"
        page.wait_for_selector(button)
        assert page.inner_text(button) == "Deal by hand" and page.get_attribute(button, "data-role") == "supervisor"
        assert page.is_disabled(button)
        assert page.inner_text("#reason-deal_by_hand") == "A supervisor must sign in"
        sign_in(page, "supervisor", "sue")
        press(page, "deal_by_hand")
        page.wait_for_selector("#answer:text('Deal by hand: sent as sue')")
        page.wait_for_selector("#buttons button[data-action=deal_by_shoe]")  # the mode switched
        actions = [r["data"] for r in read_records(table.service.journal.path) if r["type"] == "OperatorAction"]
        assert [(a["action"], a["user"], a["role"]) for a in actions] == [("deal_by_hand", "sue", "supervisor")]
        page.click("#supervisor-form .sign-out")
        page.wait_for_selector("#reason-deal_by_shoe:text('A supervisor must sign in')")
        assert page.is_disabled("#buttons button[data-action=deal_by_shoe]")
        assert page.is_enabled("#buttons button[data-action=open_betting]")  # the dealer is still signed in
    finally:
        table.stop()
