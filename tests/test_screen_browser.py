"""The dealer's screen (controller/control/screen, docs/control.md "The dealer's screen") in a real browser: Debian's
Chromium driven by Playwright against a service whose devices are the simulators on ptys.

A round is played from the page's buttons (the chips put on the sensor simulator by the test), a shoe fault is
cleared by a supervisor signed in on the page, and the page carries on after the service restarts. One seeded
run records every message the browser received (each Server-Sent Events frame, read by Chromium's network
layer, and each fetch answer) and the page's DOM after every change, and finds no card before the table turned
it: the community cards at their reveal (NY 9 NYCRR 5324.39(e)(4),(6),(8)), a seat's cards at its settlement
((e)(9)(i)), a folded seat's cards never. The cards dealt are read from the journal (``StackDealt``), an
independent record of what lay face down. Screenshots of each step go to the folder the test prints.
"""

from __future__ import annotations

import json
import math
import re
import time

import pytest

from controller.control.app import HEARTBEAT
from controller.journal.reader import read_records
from tests.browser import CHROMIUM, CHROMIUM_ARGS, PASSWORDS, Table, artifacts, first_request, need_browser

pytestmark = pytest.mark.slow  # a browser per test: the long tier (docs/testing.md)

#: Longest wait for the page to show something (milliseconds; a bound, not a measured time).
PATIENCE_MS = 20_000
#: Chips of the round played: seat 2 plays through, seat 5 folds at the across decision.
WAGERS = {2: {"ante_across": 500, "ante_down": 500, "five_card_bonus": 100}, 5: {"ante_across": 1000,
                                                                                  "ante_down": 1000}}
DECISIONS = {"across": {2: 1000}, "down": {2: 500}, "middle": {2: 1500}}
#: The event stream's heartbeat (seconds) in the test of a table that stops answering, and the silence the page
#: allows before it says so (screen.js ``silence``: 1.5 heartbeats, one heartbeat and 5 s at least; 22.5 s of the
#: server's 15 s).
QUICK_HEARTBEAT = 1.0
QUICK_SILENCE = max(1.5 * QUICK_HEARTBEAT, QUICK_HEARTBEAT + 5)
#: A longer heartbeat (seconds) of a service restarted: longer than the silence the first one allows.
SLOW_HEARTBEAT = 8


@pytest.fixture(scope="module")
def shots():
    folder = artifacts("screen")
    print(f"\nscreenshots of the dealer's screen: {folder}")
    return folder


@pytest.fixture
def browser():
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def table(tmp_path):
    running = Table(tmp_path)
    yield running
    running.stop()


def open_page(browser, table):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(PATIENCE_MS)
    page.goto(table.url + "/")
    page.wait_for_selector("#link:text('live')")
    return page


def sign_in(page, role: str, user: str) -> None:
    form = f"#{role}-form"
    page.fill(f"{form} input[name=user]", user)
    page.fill(f"{form} input[name=password]", PASSWORDS[user])
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector(f"{form} .who:text('signed in: {user}')")


def press(page, action: str) -> None:
    """Wait for the lamp of ``action`` to be lit and enabled, then press it."""
    page.click(f"#buttons button[data-action={action}]:not([disabled])")


def wait_state(page, state: str) -> None:
    page.wait_for_function("s => document.getElementById('state').dataset.state === s", arg=state)


def play_round(page, table, shots, fault: str | None = None, prefix: str = "") -> None:
    """One round from the page's buttons: open, chips, no more bets, the three decisions and reveals."""
    press(page, "open_betting")
    page.wait_for_selector("#buttons button[data-action=no_more_bets]")
    table.place(WAGERS)
    page.screenshot(path=shots / f"{prefix}1-betting.png")
    if fault:
        table.service.sims["shoe"].inject(fault)
    press(page, "no_more_bets")
    if fault:
        wait_state(page, "fault")
        page.wait_for_selector("#alerts .fault")
        page.screenshot(path=shots / f"{prefix}2-fault.png")
        assert page.is_disabled("#buttons button[data-action=clear_fault]")  # no supervisor signed in yet
        sign_in(page, "supervisor", "sue")
        press(page, "clear_fault")
        page.wait_for_function("() => !document.querySelector('#alerts .fault')")
    page.wait_for_selector("#seat-5:not(.unlocked) dd")  # the locked wagers
    for step, bets in DECISIONS.items():
        page.wait_for_selector("#buttons button[data-action=confirm]")
        table.place({seat: {step: amount} for seat, amount in bets.items()})
        page.screenshot(path=shots / f"{prefix}3-{step}-decision.png")
        press(page, "confirm")
        page.wait_for_selector("#buttons button[data-action=reveal]")
        press(page, "reveal")
        page.wait_for_function("n => document.querySelectorAll('#cross [data-card]').length >= n",
                               arg={"across": 2, "down": 4, "middle": 5}[step])
        page.screenshot(path=shots / f"{prefix}4-{step}-revealed.png")
    pay_out(page, table, shots, prefix)
    wait_state(page, "closed")
    page.wait_for_selector("#seat-2 .net")
    page.screenshot(path=shots / f"{prefix}5-settled.png")


def pay_out(page, table, shots, prefix: str = "") -> None:
    """The payout check from the page: the seat the page marks is paid as the view says, then ``paid``."""
    wait_state(page, "payout")
    while (payout := table.service.machine.view()["payout"]) is not None:
        seat = payout["seat"]
        page.wait_for_selector(f"#seat-{seat}.current")
        if not shots.joinpath(f"{prefix}5-payout.png").exists():
            page.screenshot(path=shots / f"{prefix}5-payout.png")
        table.place({seat: {spot: step["expected"] for spot, step in payout["seats"][str(seat)]["spots"].items()}})
        press(page, "paid")
        page.wait_for_function("s => !document.querySelector(`#seat-${s}.current`)", arg=seat)


def test_a_round_is_played_from_the_page_and_no_card_shows_before_its_reveal(browser, table, shots):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(PATIENCE_MS)
    network: list[tuple[str, str]] = []  # (what, text) as Chromium's network layer got them, in order
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.eventSourceMessageReceived", lambda event: network.append(("sse", event["data"])))

    def on_response(response):
        if "text/event-stream" not in response.headers.get("content-type", ""):
            network.append(("fetch", response.text()))

    page.on("response", on_response)
    inside: list[tuple[str, str]] = []  # what the page's script got and the DOM after each change, in page order
    page.expose_function("recordPage", lambda what, text: inside.append((what, text)))
    page.add_init_script("""
        const listen = EventSource.prototype.addEventListener;
        EventSource.prototype.addEventListener = function (type, handler, ...rest) {
          return listen.call(this, type, function (event) {
            if (event.data !== undefined) window.recordPage("frame", event.data);
            return handler.call(this, event);
          }, ...rest);
        };
        const fetchFirst = window.fetch;
        window.fetch = async (...args) => {
          const response = await fetchFirst(...args);
          window.recordPage("fetch", await response.clone().text());
          return response;
        };
        new MutationObserver(() => window.recordPage("dom", document.body.innerHTML))
          .observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
    """)
    page.goto(table.url + "/")
    page.wait_for_selector("#link:text('live')")
    sign_in(page, "dealer", "dan")
    play_round(page, table, shots)
    seat5 = page.inner_text("#seat-5")
    assert "Folded at across" in seat5 and not page.query_selector_all("#seat-5 [data-card]")
    assert len(page.query_selector_all("#seat-2 .hole [data-card]")) == 2  # turned at its settlement
    page.screenshot(path=shots / "5-settled.png")

    records = read_records(table.service.journal.path)
    dealt = {record["data"]["stack"]: record["data"]["cards"] for record in records if record["type"] == "StackDealt"}
    cross, hands = set(dealt[0]), {card for stack, cards in dealt.items() if stack for card in cards}
    assert len(cross) == 5 and len(hands) == 4
    seat_cards = {r["data"]["seat"]: set(dealt[r["data"]["stack"]]) for r in records if r["type"] == "StackDealt"
                  and r["data"]["stack"]}
    checked = {}
    for log in (network, inside):
        turned: set[str] = set()
        for what, text in log:
            if what != "dom":
                turned |= _turned_by(text, seat_cards)
            shown = {card for card in cross | hands if re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", text)}
            assert shown <= turned, f"{what} shows {sorted(shown - turned)} before its reveal: {text[:300]}"
            checked[what] = checked.get(what, 0) + 1
    assert turned >= cross | seat_cards[2]  # the run did turn them all, and the check saw it
    assert not turned & seat_cards[5]  # the folded seat's cards were never shown
    assert checked["sse"] > 20 and checked["frame"] > 20 and checked["fetch"] > 3 and checked["dom"] > 20, checked
    print(f"secrecy: {checked} messages and DOM states checked")


def _turned_by(text: str, seat_cards: dict[int, set[str]]) -> set[str]:
    """The cards a message itself shows as turned: revealed community cards (a ``CardsRevealed`` record, the
    view's ``community``) and the cards of a seat settled in action."""
    try:
        message = json.loads(text)
    except ValueError:
        return set()
    items = message.get("records", [message]) if isinstance(message, dict) else []
    turned: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        turned |= set(item.get("community") or ())
        data = item.get("data") or {}
        if item.get("type") == "CardsRevealed":
            turned |= set(data.get("cards") or ())
        if item.get("type") == "SeatSettled" and not (data.get("settlement") or {}).get("folded_at"):
            turned |= seat_cards.get(data.get("seat"), set())
    return turned


def test_a_fault_is_cleared_by_a_supervisor_signed_in_on_the_page(browser, table, shots):
    page = open_page(browser, table)
    sign_in(page, "dealer", "dan")
    play_round(page, table, shots, fault="jam", prefix="fault-")
    records = read_records(table.service.journal.path)
    cleared = [r["data"] for r in records if r["type"] == "FaultCleared"]
    assert [c["causes"] for c in cleared] == [["jam"]]
    actions = [r["data"] for r in records if r["type"] == "OperatorAction"]
    assert {"action": "clear_fault", "user": "sue", "role": "supervisor"}.items() <= next(
        a for a in actions if a["action"] == "clear_fault").items()
    assert all(a["round"] == 1 and a["state"] for a in actions if a["action"] != "open_betting")  # the round guard


def test_a_supervisor_disables_the_table_and_plays_it_in_test_mode_from_the_page(browser, table, shots):
    """NY 9 NYCRR 5319.54(b) and 5319.58 from the page: the supervisor's buttons send with the supervisor's login,
    the lock shows in the header with its code, and TEST shows at all times in test mode."""
    page = open_page(browser, table)
    sign_in(page, "dealer", "dan")
    sign_in(page, "supervisor", "sue")
    page.select_option("#disable-code", "maintenance")
    press(page, "disable_table")
    page.wait_for_selector("#lock:text('Table disabled: maintenance')")
    assert page.is_hidden("#test-mode")
    press(page, "enter_test_mode")
    page.wait_for_selector("#test-mode:text('TEST')")
    page.screenshot(path=shots / "test-mode.png")
    press(page, "leave_test_mode")
    page.wait_for_selector("#test-mode", state="hidden")
    press(page, "enable_table")
    page.wait_for_selector("#lock", state="hidden")
    records = read_records(table.service.journal.path)
    done = [(r["type"], r["data"]["by"]) for r in records if r["type"] in ("TableDisabled", "TestModeEntered",
                                                                           "TestModeLeft", "TableEnabled")]
    assert done == [("TableDisabled", "sue"), ("TestModeEntered", "sue"), ("TestModeLeft", "sue"),
                    ("TableEnabled", "sue")]
    assert [r["data"]["code"] for r in records if r["type"] == "TableDisabled"] == ["maintenance"]


def test_the_page_carries_on_after_the_service_restarts(browser, tmp_path, shots):
    first = Table(tmp_path)
    try:
        page = open_page(browser, first)
        sign_in(page, "dealer", "dan")
        wait_state(page, "idle")
    finally:
        first.stop()
    page.wait_for_selector("#link.down")
    page.fill("#supervisor-form input[name=user]", "sue")  # a sign-in while nothing answers says so
    page.fill("#supervisor-form input[name=password]", PASSWORDS["sue"])
    page.click("#supervisor-form button[type=submit]")
    page.wait_for_selector("#answer.error:has-text('Cannot reach the table')")
    assert "sue is not signed in" in page.inner_text("#answer")
    assert page.inner_text("#supervisor-form .who") == ""
    page.screenshot(path=shots / "restart-1-service-down.png")
    second = Table(tmp_path, port=first.port)  # the same journal and port: the service restarted
    try:
        page.wait_for_selector("#link:text('live')")
        wait_state(page, "idle")
        press(page, "open_betting")  # the credentials are still in the page's memory
        page.wait_for_selector("#buttons button[data-action=no_more_bets]")
        page.screenshot(path=shots / "restart-2-back.png")
        opened = [r for r in read_records(tmp_path / "journal.jsonl") if r["type"] == "OperatorAction"]
        assert opened[-1]["data"]["user"] == "dan" and opened[-1]["data"]["state"] == "idle"
    finally:
        second.stop()


def watched_page(browser):
    """A new page whose idle stream's heartbeats, as Chromium's network layer received them, are kept in the list
    returned with it, and which keeps every text its link shows in ``window.linkShown``."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(PATIENCE_MS)
    heartbeats: list[dict] = []
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.eventSourceMessageReceived",
           lambda event: heartbeats.append(event) if event["eventName"] == "heartbeat" else None)
    page.add_init_script("""
        window.linkShown = [];  // every text the link showed
        document.addEventListener("DOMContentLoaded", () => new MutationObserver(
          () => window.linkShown.push(document.getElementById("link").textContent))
          .observe(document.getElementById("link"), {subtree: true, childList: true, characterData: true}));
    """)
    return page, heartbeats


def stays_live(page, heartbeats: list[dict], count: int, patience_s: float) -> None:
    """``count`` more heartbeats received (within ``patience_s`` seconds) while the link showed nothing but
    "live"."""
    page.evaluate("() => { window.linkShown = []; }")
    heard, deadline = len(heartbeats), time.monotonic() + patience_s
    while len(heartbeats) < heard + count:
        shown = page.evaluate("() => window.linkShown")
        assert not shown, f"the link showed {shown} after {len(heartbeats) - heard} heartbeats"
        assert time.monotonic() < deadline, f"{len(heartbeats) - heard} heartbeats in {patience_s} s"
        page.wait_for_timeout(50)  # a poll (Playwright delivers the events meanwhile), not a wait for them
    assert page.evaluate("() => window.linkShown") == [] and page.inner_text("#link") == "live"


def test_a_table_that_stops_answering_shows_not_live_with_every_button_disabled_until_it_answers(browser, tmp_path,
                                                                                                 shots):
    """A control interface that stops answering (its loop blocked, as a stopped process leaves it: connections
    open, nothing sent) is seen within the silence allowed (``QUICK_SILENCE``), never shown as live, every button
    disabled; the page catches up once it answers again. An idle table's heartbeats keep the page live."""
    table = Table(tmp_path, heartbeat=QUICK_HEARTBEAT)
    try:
        page, heartbeats = watched_page(browser)
        page.goto(table.url + "/")
        page.wait_for_selector("#link:text('live')")
        sign_in(page, "dealer", "dan")
        wait_state(page, "idle")
        stays_live(page, heartbeats, math.ceil(QUICK_SILENCE / QUICK_HEARTBEAT) + 2,  # idle past the silence allowed
                   PATIENCE_MS / 1000)
        press(page, "open_betting")
        page.wait_for_selector("#buttons button[data-action=no_more_bets]:not([disabled])")

        with table.silent():
            page.wait_for_selector("#link.down:text('no answer from the table')")
            disabled = page.eval_on_selector_all("#buttons button", "all => all.map((b) => b.disabled)")
            assert disabled and all(disabled), disabled
            table.place({2: {"ante_across": 500, "ante_down": 500}})  # the table carries on meanwhile
            page.fill("#supervisor-form input[name=user]", "sue")
            page.fill("#supervisor-form input[name=password]", PASSWORDS["sue"])
            page.click("#supervisor-form button[type=submit]")
            page.wait_for_selector("#answer.error:has-text('Cannot reach the table')")
            assert page.inner_text("#link") == "no answer from the table"
            assert all(page.eval_on_selector_all("#buttons button", "all => all.map((b) => b.disabled)"))
            page.screenshot(path=shots / "silent-1-no-answer.png")
        page.wait_for_selector("#link:text('live')")
        page.wait_for_function("() => [...document.querySelectorAll('#seat-2 dd')].map((d) => d.textContent)"
                               ".join() === '$5.00,$5.00'")  # caught up: the chips put down while it was silent
        page.wait_for_selector("#buttons button[data-action=no_more_bets]:not([disabled])")
        page.screenshot(path=shots / "silent-2-back.png")
    finally:
        table.stop()


def test_a_press_the_table_does_not_answer_says_it_may_not_have_reached_it_and_is_not_sent_again(browser, tmp_path,
                                                                                                 shots):
    """A press made just before the control interface stops answering (its loop blocked, as a stopped process
    leaves it) is given up within the silence allowed (``QUICK_SILENCE``: a press may need a password check, as a
    sign-in) and the page says it may not have reached the table. The page never sends it again by itself: a
    second press in the same state would be taken too (docs/control.md, "The round guard")."""
    table = Table(tmp_path, heartbeat=QUICK_HEARTBEAT)
    try:
        page = open_page(browser, table)
        sign_in(page, "dealer", "dan")
        wait_state(page, "idle")
        posts = []
        page.on("request", lambda request: posts.append(request.post_data_json)
                if request.method == "POST" and request.url.endswith("/actions") else None)
        with table.silent():
            press(page, "open_betting")  # at once: the page is live for QUICK_SILENCE more seconds
            page.wait_for_selector("#answer.error:has-text('Open betting: no answer from the table')",
                                   timeout=(QUICK_SILENCE + PATIENCE_MS / 1000) * 1000)
            assert "may not have reached it" in page.inner_text("#answer")
            page.screenshot(path=shots / "press-1-no-answer.png")
        page.wait_for_selector("#link:text('live')")
        page.wait_for_selector("#buttons button:not([disabled])")  # the page acts again once the table answers
        assert [post["action"] for post in posts] == ["open_betting"], posts
    finally:
        table.stop()


def test_the_page_reads_the_heartbeat_interval_again_when_the_service_restarts_with_another(browser, tmp_path):
    """A service restarted with a longer heartbeat interval: the page learns it from ``GET /labels`` when it
    connects again (docs/control.md, "The dealer's screen"), so the new server's idle heartbeats keep it live.
    With the first interval it would take the table for silent after ``QUICK_SILENCE`` seconds, before the new
    server's first heartbeat (``SLOW_HEARTBEAT``)."""
    assert SLOW_HEARTBEAT > QUICK_SILENCE
    first = Table(tmp_path, heartbeat=QUICK_HEARTBEAT)
    try:
        page, heartbeats = watched_page(browser)
        page.goto(first.url + "/")
        page.wait_for_selector("#link:text('live')")
    finally:
        first.stop()
    page.wait_for_selector("#link.down")
    second = Table(tmp_path, port=first.port, heartbeat=SLOW_HEARTBEAT)  # the same journal and port: restarted
    try:
        page.wait_for_selector("#link:text('live')")
        stays_live(page, heartbeats, 2, 2 * SLOW_HEARTBEAT + PATIENCE_MS / 1000)
    finally:
        second.stop()


def test_a_table_that_stops_answering_as_the_page_loads_is_said_so_and_followed_once_it_answers(browser, table):
    """The control interface stops answering (its loop blocked, as a stopped process leaves it) just after it
    served the page, before the page's first ``GET /labels`` is answered: the page gives it up within the silence
    allowed of the interface's usual heartbeat (``HEARTBEAT``: 1.5 of it, one and 5 s at least) and says so, and
    goes live once the table answers."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.set_default_timeout(PATIENCE_MS)
    labels = first_request(page, "**/labels", table.url + "/")  # held in the browser until the table is stopped
    usual = max(1.5 * HEARTBEAT, HEARTBEAT + 5)
    with table.silent():
        labels.continue_()  # sent to the stopped table
        page.wait_for_selector("#link.down:text('no answer from the table')", timeout=(usual * 1000 + PATIENCE_MS))
    page.wait_for_selector("#link:text('live')")
    wait_state(page, "idle")
