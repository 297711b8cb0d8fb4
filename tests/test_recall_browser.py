"""Game recall on the dealer's screen (controller/control/screen/recall.html, docs/control.md "Game recall") in a real
browser: Debian's Chromium driven by Playwright against a service whose devices are the simulators on ptys.

The rounds are played through the control interface and the simulators (a voided round, a round held by a shoe
jam, a round whose jam was cleared and whose payout reading differed and was accepted); a supervisor signed in on
the recall page steps through each, one step at a time, under the RECALL banner. Sources: game recall of the last
rounds, every step in order, shown while the table is faulted (AGCO Standards 13.1.1-13.1.4, 25 CFR
547.8(a)(2); domain.md); hole-card secrecy: no card of a round not yet closed before the table turned it
(domain.md; NY 9 NYCRR 5324.39(e)(4),(6),(8) community cards at their reveals, (e)(9)(i) a seat's at its
settlement). What lay face down is read from the journal (``StackDealt``), an independent record; the steps
are compared with the journal's records of the round. Screenshots go to the folder the test prints.
"""

from __future__ import annotations

import re
import time

import pytest

from controller.control.server import public_record
from controller.journal.reader import read_records
from controller.journal.recall import STEP_TEXT
from tests.browser import PASSWORDS, Table, artifacts
from tests.test_control import Client
from tests.test_recall_control import REGULATED_STEPS
# the fixtures (Chromium, a table on ptys) and the chips of each round: seat 2 plays through, seat 5 folds at the across
# decision
from tests.test_screen_browser import DECISIONS, WAGERS, browser, table  # noqa: F401

pytestmark = pytest.mark.slow  # a browser and a table per test: the long tier (docs/testing.md)

#: Longest wait for the page or the table (a bound, not a measured time).
PATIENCE = 30.0
#: The seconds the recall page gives a recall and a sign-in (recall.js ``RECALL_S``, ``SIGN_IN_S``).
RECALL_S, SIGN_IN_S = 20, 30
#: The shoe's first cards for a round seat 2 wins: the cross as laid (across, across, down, down, middle), then
#: seat 2's stack, then seat 5's: seat 2 holds three aces on both lines, so it is paid on its spots.
SEAT_2_WINS = ("Ac", "7d", "As", "2c", "Kh", "Ah", "Ad", "3d", "8s")


@pytest.fixture(scope="module")
def shots():
    folder = artifacts("recall")
    print(f"\nscreenshots of game recall: {folder}")
    return folder


class Floor:
    """The people at the table, acting through the control interface (dan deals, sue supervises) and the
    simulators (chips on the sensors, a jam in the shoe), each step waited for on the table's state."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.client = Client(table.service.control)
        self.sensors = table.service.sims["sensors"]

    def state(self) -> dict:
        status, view = self.client.get("/state")
        assert status == 200, view
        return view

    def until(self, predicate, what: str) -> dict:
        """The view once ``predicate(view)`` holds (polled, within ``PATIENCE``; before the first view, 503)."""
        deadline = time.monotonic() + PATIENCE
        while time.monotonic() < deadline:
            status, view = self.client.get("/state")
            if status == 200 and predicate(view):
                return view
            time.sleep(0.02)
        raise AssertionError(f"the table never reached: {what}; /state is {self.client.get('/state')}")

    def press(self, action: str, user: str = "dan", **extra) -> None:
        """``action`` once the table allows it (``answers`` from the view for what it answers)."""
        view = self.until(lambda v: action in v["allowed_actions"], f"{action} allowed")
        if action in (view.get("answers") or {}):
            extra["answers"] = view["answers"][action]
        status, answer = self.client.act(action, user=user, **extra)
        assert status == 202, answer

    def chips(self, layout: dict[int, dict[str, int]]) -> None:
        """Chips on the sensor simulator, and every change reported to the controller before going on."""
        for seat, wagers in layout.items():
            for spot, amount in wagers.items():
                self.sensors.place(seat, spot, amount)
        assert self.sensors.wait_for(lambda: self.sensors.awaiting_ack == 0, PATIENCE)

    def deal(self, jam: bool = False, cards: tuple[str, ...] = ()) -> int:
        """Open betting, the chips of ``WAGERS``, no more bets; with ``jam`` the shoe jams at the first dispense
        (the table is then faulted); ``cards`` are dealt first (``ShoeSimulator.stack_deck``). Returns the round
        number."""
        if cards:
            self.table.service.sims["shoe"].stack_deck(cards)
        self.press("open_betting")
        view = self.until(lambda v: v["state"] == "betting", "betting")
        self.chips(WAGERS)
        if jam:
            self.table.service.sims["shoe"].inject("jam")
        self.press("no_more_bets")
        self.until(lambda v: v["state"] == ("fault" if jam else "across_decision"), "dealt or faulted")
        return view["round_no"]

    def decide_and_reveal(self, page_check=None) -> None:
        """The three decisions of ``DECISIONS`` and their reveals; ``page_check()`` after each reveal."""
        for step, bets in DECISIONS.items():
            self.until(lambda v: "confirm" in v["allowed_actions"], f"{step} decision")
            self.chips({seat: {step: amount} for seat, amount in bets.items()})
            self.press("confirm")
            self.press("reveal")
            self.until(lambda v, n={"across": 2, "down": 4, "middle": 5}[step]: len(v["community"]) >= n, "turned")
            if page_check:
                page_check()

    def pay_out(self, mispay_seat: int) -> None:
        """The payout check: each seat paid as the view says, but ``mispay_seat`` first paid 100 short on its
        first paid spot, which a supervisor accepts (``accept_mispay``)."""
        mispaid = False
        while (view := self.until(lambda v: v["state"] == "closed" or "paid" in v["allowed_actions"]
                                  or "accept_mispay" in v["allowed_actions"], "payout step"))["state"] != "closed":
            if "accept_mispay" in view["allowed_actions"]:
                self.press("accept_mispay", user="sue", reason="short 1.00 on seat 2, paid from the rack")
                self.until(lambda v: "accept_mispay" not in v["allowed_actions"], "mispay accepted")
                continue
            seat = view["payout"]["seat"]
            spots = {spot: step["expected"] for spot, step in view["payout"]["seats"][str(seat)]["spots"].items()}
            if seat == mispay_seat and not mispaid:
                spot = next(s for s, step in view["payout"]["seats"][str(seat)]["spots"].items() if step["pay"] > 0)
                spots[spot] -= 100
                mispaid = True
            self.chips({seat: spots})
            before = view["seq"]
            self.press("paid")
            self.until(lambda v: v["seq"] > before and "paid" not in v["allowed_actions"] or v["state"] == "closed"
                       or v["payout"] and (v["payout"]["seat"] != seat or v["payout"]["differences"]), "read")
        assert mispaid, "the seat to mispay was never paid"


def open_recall(browser, table, path: str = "/screen/recall.html"):
    """The recall page, the supervisor signed in; with every /recall answer kept as (url, text)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PATIENCE * 1000)
    answers: list[tuple[str, str]] = []
    page.on("response", lambda response: answers.append((response.url, response.text()))
            if "/recall?" in response.url or response.url.endswith("/recall") else None)
    page.goto(table.url + path)
    assert page.inner_text("#recall-banner").startswith("RECALL")
    sign_in(page)
    page.wait_for_selector("#supervisor-form .who:text('signed in: sue')")
    page.wait_for_selector("#rounds button")
    page.answers = answers  # type: ignore[attr-defined]
    return page


def sign_in(page) -> None:
    """sue's sign-in sent from the recall page."""
    page.fill("#supervisor-form input[name=user]", "sue")
    page.fill("#supervisor-form input[name=password]", PASSWORDS["sue"])
    page.click("#supervisor-form button[type=submit]")


def choose(page, number: int) -> None:
    """Open round ``number`` from the list, shown at its first step."""
    page.click(f"#rounds button[data-round='{number}']")
    page.wait_for_function("n => document.getElementById('round-title').textContent.startsWith(`Round ${n} `)",
                           arg=number)


def step_through(page) -> list[tuple[int, str, str]]:
    """Every step of the round shown, one ``Next`` at a time from the first: (seq, type, text) in page order.
    Each press shows exactly one more step, and it is the current one."""
    if page.is_enabled("#first"):
        page.click("#first")
    total = len(page.query_selector_all("#steps li"))
    seen = []
    for n in range(1, total + 1):
        page.wait_for_function("n => document.querySelectorAll('#steps li:not([hidden])').length === n", arg=n)
        current = page.query_selector_all("#steps li.current")
        last_shown = page.query_selector_all("#steps li:not([hidden])")[-1]
        assert len(current) == 1 and last_shown.get_attribute("data-seq") == current[0].get_attribute("data-seq")
        assert page.inner_text("#position") == f"step {n} of {total}"
        seen.append((int(current[0].get_attribute("data-seq")), current[0].get_attribute("data-type"),
                     current[0].inner_text()))
        if n < total:
            page.click("#next")
    assert page.is_disabled("#next") and page.is_disabled("#last")
    return seen


def journal_steps(table, number: int, *, filtered: bool) -> list[dict]:
    """The journal's records of round ``number`` that are steps (not device commands), in journal order;
    ``filtered``: as the secrecy filter lets them out."""
    records = [r for r in read_records(table.service.journal.path) if r["round"] == number]
    if filtered:
        records = [p for p in map(public_record, records) if p is not None]
    return [r for r in records if r["kind"] != "command" and r["type"] in STEP_TEXT]


def assert_steps_are_the_journal(page_steps, table, number: int, *, filtered: bool) -> None:
    expected = journal_steps(table, number, filtered=filtered)
    assert [(seq, type_) for seq, type_, _ in page_steps] == [(r["seq"], r["type"]) for r in expected]
    everything = [r for r in read_records(table.service.journal.path) if r["round"] == number and
                  r["type"] in REGULATED_STEPS and r["kind"] == "record"]
    if not filtered:  # every regulated step of the round is on the page (AGCO 13.1.1-13.1.4)
        assert {r["seq"] for r in everything} <= {seq for seq, _, _ in page_steps}


def face_down(table, number: int) -> set[str]:
    """The cards of round ``number`` the table has not turned so far, by its journal: every card dealt
    (``StackDealt``) but the community cards revealed and the cards of a seat settled in action."""
    records = [r for r in read_records(table.service.journal.path) if r["round"] == number]
    dealt = {r["data"]["stack"]: r["data"] for r in records if r["type"] == "StackDealt"}
    turned = {c for r in records if r["type"] == "CardsRevealed" for c in r["data"]["cards"]}
    for r in records:
        settlement = r["data"].get("settlement") or {}
        if r["type"] == "SeatSettled" and not settlement.get("folded_at"):
            turned |= {c for d in dealt.values() if d["seat"] == r["data"]["seat"] for c in d["cards"]}
    return {c for d in dealt.values() for c in d["cards"]} - turned


def assert_no_face_down_card(page, table, number: int) -> None:
    """Neither the page nor any recall answer of round ``number`` received shows a card the table has not
    turned."""
    hidden = face_down(table, number)
    texts = [page.content(), page.inner_text("body")]
    texts += [text for url, text in page.answers if url.endswith(f"round={number}")]
    for text in texts:
        shown = {card for card in hidden if re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", text)}
        assert not shown, f"recall of round {number} shows {sorted(shown)} before the table turned them"


def test_recall_while_faulted_of_a_voided_round_and_of_the_round_the_fault_holds(browser, table, shots):
    floor = Floor(table)
    voided = floor.deal()
    floor.press("void_round", user="sue", code="misdeal", reason="two cards exposed at seat 5")
    floor.until(lambda v: "open_betting" in v["allowed_actions"], "round voided")
    held = floor.deal()
    table.service.sims["sensors"].unplug()  # the sensors' link lost at the across decision: the round is held
    floor.until(lambda v: v["state"] == "fault", "faulted")
    assert held == voided + 1 and len(face_down(table, held)) == 9  # the cross and two stacks, none turned
    actions = len([r for r in read_records(table.service.journal.path) if r["type"] == "OperatorAction"])

    page = open_recall(browser, table)  # the table is faulted: recall is there all the same
    page.screenshot(path=shots / "1-list-while-faulted.png")
    listed = page.inner_text("#rounds")
    assert f"Round {held} (open)" in listed and f"Round {voided} (voided)" in listed

    choose(page, held)
    assert page.is_visible("#filtered")  # not yet closed: only what the secrecy filter lets out
    assert page.is_visible("#recall-banner") and page.inner_text("#recall-banner").startswith("RECALL")
    held_steps = step_through(page)
    page.screenshot(path=shots / "2-faulted-round.png")
    assert_steps_are_the_journal(held_steps, table, held, filtered=True)
    assert [t for _, t, _ in held_steps][-1] == "FaultRaised" and "StackDealt" not in [t for _, t, _ in held_steps]
    assert_no_face_down_card(page, table, held)

    choose(page, voided)
    assert page.is_hidden("#filtered")
    voided_steps = step_through(page)
    page.screenshot(path=shots / "3-voided-round.png")
    assert_steps_are_the_journal(voided_steps, table, voided, filtered=False)
    void = next(text for _, t, text in voided_steps if t == "RoundVoided")
    assert "ROUND VOIDED by sue (supervisor, misdeal): two cards exposed at seat 5" in void  # the reason: it ended
    assert [t for _, t, _ in voided_steps].count("StackDealt") == 3  # a round that ended shows its stacks

    page.click("#previous")  # stepping back hides the last step again
    page.wait_for_function("s => document.querySelector('#steps li.current').dataset.seq === String(s)",
                           arg=voided_steps[-2][0])
    assert page.is_hidden(f"#steps li[data-seq='{voided_steps[-1][0]}']")

    for typed, said in (("abc", 'round number: a whole number, not "abc"'), ("0", "round 0: 404")):
        page.fill("#round-input", typed)  # a bad number is answered where the form is, in view
        page.click("#round-form button")
        page.wait_for_function("t => document.querySelector('#answer').textContent.startsWith(t)", arg=said)
        box = page.locator("#answer").bounding_box()
        assert box is not None and box["y"] + box["height"] <= page.viewport_size["height"]

    dispute = open_recall(browser, table, f"/screen/recall.html?round={held}")  # a dispute names the round
    dispute.wait_for_selector(f"#round-title:text('Round {held} (open)')")
    dispute.click("#last")
    assert_no_face_down_card(dispute, table, held)
    assert floor.state()["state"] == "fault"  # recall changed nothing
    assert len([r for r in read_records(table.service.journal.path) if r["type"] == "OperatorAction"]) == actions


def test_recall_of_a_round_with_a_fault_cleared_and_a_mispay_accepted_step_by_step(browser, table, shots):
    floor = Floor(table)
    number = floor.deal(jam=True, cards=SEAT_2_WINS)
    page = open_recall(browser, table)
    choose(page, number)
    assert_no_face_down_card(page, table, number)
    floor.press("clear_fault", user="sue")
    floor.until(lambda v: "confirm" in v["allowed_actions"], "the round resumed")

    def recall_again():  # the supervisor reads the round again as it goes on: never a card not yet turned
        before = int(page.get_attribute("#recalled", "data-readings"))
        page.click("#reload")
        page.wait_for_function("n => Number(document.getElementById('recalled').dataset.readings) > n", arg=before)
        page.click("#last")
        assert_no_face_down_card(page, table, number)

    recall_again()
    floor.decide_and_reveal(recall_again)
    page.screenshot(path=shots / "4-round-in-progress.png")
    floor.pay_out(mispay_seat=2)

    page = open_recall(browser, table)  # a new page: the round's answers received before it closed are not mixed in
    choose(page, number)
    assert page.is_hidden("#filtered")
    steps = step_through(page)
    page.screenshot(path=shots / "5-mispay-round.png")
    assert_steps_are_the_journal(steps, table, number, filtered=False)
    types = [t for _, t, _ in steps]
    assert types.index("FaultRaised") < types.index("FaultCleared") < types.index("StackDealt")
    assert types.index("MispayAccepted") < types.index("RoundClosed")
    cleared = next(text for _, t, text in steps if t == "FaultCleared")
    assert "jam" in cleared and "by sue (supervisor)" in cleared
    accepted = next(text for _, t, text in steps if t == "MispayAccepted")
    assert "seat 2 MISPAY ACCEPTED by sue (supervisor): short $1.00" in accepted  # the screen's money format
    readings = [text for _, t, text in steps if t == "PayoutChecked"]
    assert [r for r in readings if "seat 2 paid" in r][0].endswith("(-$1.00)")  # the reading that caught it
    assert [r for r in readings if "seat 5 paid" in r][0].endswith("| matches")
    dealt = {r["seq"]: r["data"]["cards"] for r in read_records(table.service.journal.path)
             if r["round"] == number and r["type"] == "StackDealt"}
    for seq, type_, text in steps:  # each stack with its cards, as the journal has them
        if type_ == "StackDealt":
            assert text.endswith(" ".join(dealt[seq]))


def test_a_server_that_does_not_answer_is_said_so_on_the_recall_page_which_carries_on_after(browser, table, shots):
    """The control interface stops answering (its loop blocked, as a stopped process leaves it: connections open,
    nothing answered): a sign-in, then a recall, is given up after the page's time limit, and the page says there
    was no answer from the server; once it answers, the page signs in and recalls."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PATIENCE * 1000)
    page.goto(table.url + "/screen/recall.html")
    with table.silent():
        sign_in(page)
        page.wait_for_selector("#answer.error:has-text('sign-in of sue: no answer from the server')",
                               timeout=(SIGN_IN_S + PATIENCE) * 1000)
        assert page.inner_text("#supervisor-form .who") == ""  # nobody signed in
    deadline = time.monotonic() + PATIENCE
    while True:  # the check of the sign-in given up may still run once the server answers: 503, try again
        sign_in(page)
        page.wait_for_function("() => !document.getElementById('answer').textContent.startsWith('signing in')")
        if page.inner_text("#supervisor-form .who"):
            break
        assert "password checks already running" in page.inner_text("#answer")
        assert time.monotonic() < deadline, page.inner_text("#answer")
        page.wait_for_timeout(200)  # a poll: the next attempt a moment later, as the 503 asks (Retry-After)
    page.wait_for_selector("#answer:text('no round in the journal yet')")
    with table.silent():
        page.fill("#round-input", "1")
        page.click("#round-form button")
        page.wait_for_selector("#answer.error:has-text('round 1: no answer from the server')",
                               timeout=(RECALL_S + PATIENCE) * 1000)
        page.screenshot(path=shots / "6-no-answer.png")
    page.click("#round-form button")  # answered again: the journal holds no round yet
    page.wait_for_selector("#answer.error:has-text('round 1: 404')")


@pytest.fixture
def stalled_body():
    """A loopback server that answers any request with its headers and the first bytes of a 100-byte body, then
    sends nothing more while the connection stays open (a server stopped part way through an answer). Yields
    its URL."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n"
                               b"Access-Control-Allow-Origin: *\r\n\r\npart of it")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/stalled"
    finally:
        done.set()
        listener.close()
        for connection in held:
            connection.close()
        thread.join(5)


@pytest.mark.slow
def test_an_answer_whose_body_stops_coming_is_given_up_within_the_time_limit(browser, table, stalled_body):
    """``fetchWithin`` (page.js, every page's requests) stopped its clock once the headers came: a server stopped
    part way through its answer left ``response.json()`` waiting for ever. The body is read within the limit."""
    page = browser.new_page()
    page.set_default_timeout(PATIENCE * 1000)
    page.goto(table.url + "/screen/recall.html")
    outcome = page.evaluate("""async (url) => {
      const hung = new Promise(resolve => setTimeout(() => resolve("still waiting after 10 s"), 10000));
      const read = fetchWithin(url, {}, 1).then(response => response.text()).then(() => "read", error => error.name);
      return Promise.race([read, hung]);
    }""", stalled_body)
    assert outcome == "NoAnswer"
    page.close()
