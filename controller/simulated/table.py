"""A scripted table for ``crisscross run --simulate`` and the rig: six simulated players and a dealer.

The players and the dealer act only through the device simulators, as people act on real equipment: players put
chips on the bet-sensor spots (``SensorSimulator.place``), the dealer presses panel buttons when their lamps are
lit (``PanelSimulator``), and stacks reach the seats in the order the shoe dispensed them, the cross first, then
one stack per wagering seat clockwise from the dealer's left (NY 9 NYCRR 5324.39(d)(2)). A player looks only at
its own two cards and at community cards already turned.

Players decide with the optimal strategy of the par sheet (``controller.analysis.strategy``); with probability
``mistakes`` a decision is instead drawn at random among fold and the allowed bets, so that a run reaches every
path. A seeded ``random.Random`` (or the system RNG) also chooses whether a seat plays, its ante (table minimum
x 1, 2 or 5) and its five-card bonus. Does not model: past-posting or irregular bets (tests inject those),
players leaving mid-round.

A supervisor comes when the table stalls (no dealer lamp lit for a moment, or a fault on the display): shuts the
shoe's door if it is open (``ShoeSimulator.close_door``: the shoe says DOOR_CLOSED, which clears nothing), then with the
key turned, it acknowledges past-posting, clears a fault once the lamp says it may, and voids the round when
only voiding is offered for a while (or, with probability ``void_rate``, instead of clearing), then turns the
key off. The dealer treats a round that ends early (``open_betting`` lit again: voided) as over. The supervisor
also comes when paged (``page``: the hole-card detector raised an alert, as a floor system pages a real one):
with the key turned it reads each alert the panel shows (``alerts_read``) and acknowledges it
(``acknowledge_alert``).

With the payout check (``payout: {check: true}`` of table.yaml) the dealer pays the seat the panel names
("Seat N pay ..."), from its own reckoning of the settlement (the wagers it saw placed, the cards it saw dealt),
and presses ``paid``; with probability ``payout_errors`` per seat it pays that seat wrong once (one of
``controller.game.payout.MISPAY_KINDS``: short, over, the payout on the wrong spot, a losing wager not taken),
recorded in ``payout_errors_made``, and when the panel shows the mispay ("Seat N mispay ...") it puts the
seat right and presses ``paid`` again.

With ``manual`` the supervisor first switches the table to dealing by hand (``deal_by_hand``, NY 9 NYCRR
5324.39(d)(1)), unless the key shows the table dealing by hand already (``deal_by_shoe`` lit: a table started again
on its journal); the dealer deals by hand whenever the shoe dealt nothing after "no more bets" (with or without
``manual``): it shuffles a deck of its own, deals the cross and one card at a time as the panel asks (confirming
each step), and types each card on the panel's keypad as it is turned (``enter_cards``): the community cards at
each reveal, each seat's two cards at settlement as the panel names the seat.

A round found in progress at the start (left open by an earlier run) is ended by the supervisor
(``controller.simulated.unknown_round``).
"""

from __future__ import annotations

import logging
import random
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from controller.analysis.strategy import OptimalStrategy
from controller.game.payout import MISPAY_KINDS, plan_seat
from controller.game.paytable import Jurisdiction
from controller.game.settlement import Community, settle_seat
from controller.game.table import Limits, TableConfig
from controller.round.inputs import SUPERVISOR_ACTIONS, SeatRating
from controller.simulated.manual import ManualDealing, RoundOver, unmarked
from controller.simulated.roaming import Roamer, roam, roamers
from controller.simulated.seating import Seating, move_players
from controller.simulated.unknown_round import UnknownRound
from drivers.panel.simulator import PanelSimulator
from drivers.reader.simulator import ReaderSimulator
from drivers.sensors.simulator import SensorSimulator
from drivers.shoe.simulator import ShoeSimulator

log = logging.getLogger(__name__)

#: Chip changes the simulated players and dealer make per second at most (``SimulatedTable._place``).
CHIP_CHANGES_PER_S = 600

#: Panel buttons that act only with the supervisor key turned.
SUPERVISOR_BUTTONS = frozenset(SUPERVISOR_ACTIONS)


#: Presses whose reading decides the wagers: what is on the layout when they are journaled is what counts (NY 9
#: NYCRR 5324.39(c)(3), controller.round.lock ``_announce``); the simulated dealer makes them once the sensors have
#: reported every chip the players put down.
ANNOUNCEMENTS: tuple[str, ...] = ("no_more_bets", "confirm")

#: The longest the simulated dealer waits for the sensors to report the chips before it calls anyway (a sensor
#: link that is down: the round's fault handles it).
CHIPS_REPORTED_S = 5.0

#: The longest the simulated supervisor waits for the host to take the shoe's DOOR_CLOSED before coming to the
#: table anyway (a shoe link that is down: the door is reported when it is back).
DOOR_REPORT_WAIT = 5.0


class SimulatedTable(ManualDealing, UnknownRound):
    """Players at ``seats`` and a dealer, driving the simulators until ``stop()`` or ``rounds`` rounds.

    Runs two threads (``start``/``stop``): the dealer and players, and the supervisor. The dealer waits for
    each lamp until it lights, the round is voided, or the table is stopped. An unexpected exception in a
    thread is logged and ``on_failure`` is called (the service stops). ``supervisor_id`` is the key's id;
    ``void_rate`` the probability that the supervisor voids a round it could resume; ``rounds_voided`` counts
    the rounds the dealer saw end early; ``pace`` the seconds the dealer leaves between its presses
    (``_dealer_press``; ``controller.simulated.pace``).
    """

    def __init__(self, shoe: ShoeSimulator, sensors: SensorSimulator, panel: PanelSimulator, *,
                 seats: Sequence[int], ante_limits: Limits, bonus_limits: Limits, strategy: OptimalStrategy,
                 mistakes: float = 0.0, seed: int | None = None, rounds: int | None = None,
                 on_failure: Callable[[], None] | None = None, supervisor_id: str = "SIM-SUPERVISOR",
                 void_rate: float = 0.0, jurisdiction: Jurisdiction | None = None,
                 winning_spot: str = "wager_and_payout", payout_errors: float = 0.0,
                 players: dict[int, Any] | None = None, manual: bool = False,
                 manual_rounds: tuple[int, int | None] | None = None,
                 on_shoe_down: Callable[[], None] | None = None, on_shoe_back: Callable[[], None] | None = None,
                 reader: ReaderSimulator | None = None, pace: float = 0.0, sessions: int = 0,
                 post: Callable[[Any], None] | None = None, roamers: Sequence[Roamer] = ()) -> None:
        self.shoe, self.sensors, self.panel = shoe, sensors, panel
        #: hole-carders who take breaks and move (``controller.simulated.roaming``), their players in ``players``
        self.roamers = tuple(roamers)
        #: seconds the dealer leaves between its presses (``--pace``; ``_dealer_press``), 0: as fast as it can
        self.pace = pace
        self._pressed_at: float | None = None  # when the dealer saw its last press take effect (monotonic seconds)
        self.players = dict(players or {})  # seat -> controller.simulated.players.SeatPlayer
        #: rounds (0-based, end excluded; None: to the last) dealt by hand; ``manual``: every round
        self.manual_rounds = (0, None) if manual and manual_rounds is None else manual_rounds
        self.on_shoe_down, self.on_shoe_back = on_shoe_down, on_shoe_back  # the shoe taken away, brought back
        self.manual = False  # the table deals by hand now (the supervisor switched it)
        self.reader = reader  # a card reader's simulator, when the table has one: cards are scanned, not typed
        self.seats = tuple(sorted(seats))
        self.ante_limits, self.bonus_limits = ante_limits, bonus_limits
        self.rng: random.Random = random.Random(seed + 1) if seed is not None else secrets.SystemRandom()
        #: players who come and go (``sessions``: their mean session in rounds; 0: the same players throughout,
        #: each sitting a round out now and then), the dealer's ratings handed in by ``post``
        self.seating = Seating(self.seats, sessions, random.Random(seed + 4) if seed is not None else
                               secrets.SystemRandom()) if sessions else None
        self.post = post
        self.rounds = rounds
        self.strategy = strategy
        self.mistakes = mistakes
        self.on_failure = on_failure
        self.rounds_played = 0
        self.rounds_voided = 0
        self.supervisor_id = supervisor_id
        self.void_rate = void_rate
        self._clears_in_round = 0  # faults the supervisor cleared in the round being played
        self._last_pressed = ""  # the dealer's last press
        self._attended_at = 0.0  # when the supervisor last left the table (monotonic seconds)
        self.patience = 20.0  # seconds the supervisor waits for a device to come back before voiding
        self._supervisor_rng: random.Random = random.Random(seed + 2) if seed is not None else secrets.SystemRandom()
        self.supervisor_actions: dict[str, int] = {"acknowledge": 0, "clear_fault": 0, "void_round": 0,
                                                   "acknowledge_alert": 0}
        self.jurisdiction = jurisdiction  # the pay tables the dealer pays by (needed with the payout check)
        self.winning_spot = winning_spot
        self.payout_errors = payout_errors
        self._payout_rng: random.Random = random.Random(seed + 3) if seed is not None else secrets.SystemRandom()
        #: the dealer's payout mistakes: ``(round, seat, kind)``, the round as the panel numbered it at the open
        self.payout_errors_made: list[tuple[int | None, int, str]] = []
        self._round_no: int | None = None  # the round being played, as the panel announced it
        self._stop = threading.Event()
        self._paged = threading.Event()  # a hole-card alert waits for the supervisor (``page``)
        #: the alert lines the supervisor read on the panel before acknowledging them, in order
        self.alerts_read: list[str] = []
        self._threads: list[threading.Thread] = []
        self._next_chip = 0.0  # when the next chip change may be made (monotonic seconds; ``_place``)

    @classmethod
    def for_table(cls, sims: dict, config: TableConfig, jurisdiction: Jurisdiction, *, seed: int | None,
                  rounds: int | None, mistakes: float, on_failure: Callable[[], None] | None = None,
                  void_rate: float = 0.0, payout_errors: float = 0.0,
                  players: Sequence[Any] = (), manual: bool = False, pace: float = 0.0, sessions: int = 0,
                  post: Callable[[Any], None] | None = None) -> "SimulatedTable":
        """Players at ``config``'s seats and limits, playing ``jurisdiction``'s optimal strategy, on the
        ``shoe``/``sensors``/``panel`` simulators of ``sims``; the dealer pays as ``config.payout`` says;
        ``players``: ``PlayerSpec`` of seats that play another strategy or see a hole card
        (``controller.simulated.player_spec``); ``pace``: seconds between the dealer's presses; ``sessions``:
        players come and go, each playing about that many rounds (``controller.simulated.seating``; 0: the same
        players throughout), the dealer's ratings of them handed to ``post`` (the service's event queue: what
        ``POST /sessions`` queues at a real table)."""
        seated = {}
        if players:
            from controller.simulated.players import SeatPlayer
            from controller.analysis.protect_tables import ProtectTables

            tables = ProtectTables.load(jurisdiction)
            seated = {spec.seat: SeatPlayer(spec, tables, None if seed is None else seed + 10 * spec.seat)
                      for spec in players}
        return cls(sims["shoe"], sims["sensors"], sims["panel"], seats=config.seats, ante_limits=config.ante_limits,
                   bonus_limits=config.bonus_limits, strategy=OptimalStrategy(jurisdiction), mistakes=mistakes,
                   seed=seed, rounds=rounds, on_failure=on_failure, void_rate=void_rate, jurisdiction=jurisdiction,
                   winning_spot=config.payout.winning_spot, payout_errors=payout_errors, players=seated,
                   manual=manual, reader=sims.get("reader"), pace=pace, sessions=sessions, post=post,
                   roamers=roamers(players, config.seats))

    def start(self) -> None:
        """Start the dealer's and the supervisor's threads."""
        self._threads = [threading.Thread(target=self._guard, args=(self._run,), name="simulated-table"),
                         threading.Thread(target=self._guard, args=(self._supervise,), name="simulated-supervisor")]
        for thread in self._threads:
            thread.start()

    @property
    def threads(self) -> tuple[threading.Thread, ...]:
        """The dealer's and the supervisor's threads (empty before ``start``), for a report of a stalled table."""
        return tuple(self._threads)

    def stop(self) -> None:
        """Stop after the current waits and join the threads."""
        self._stop.set()
        for thread in self._threads:
            thread.join(10)

    def _wait(self, button: str) -> bool:
        """Wait until ``button`` is lit: True; False when stopped; ``RoundOver`` when the round ended early.

        While waiting, a lamp of the button pressed last that is lit again (for more than 0.3 s) means that press
        never took effect (the controller restarted, the frame was lost): it is pressed again."""
        relit_since: float | None = None
        while not self._stop.is_set():
            lamps = self.panel.lamps
            if button in lamps:
                return True
            if button == "open_betting" and "no_more_bets" in lamps:
                return True  # betting was opened by someone else (the control interface): the round is on
            if button != "open_betting" and "open_betting" in lamps:
                raise RoundOver
            relit_since = self._press_again_if_relit(lamps, button, relit_since)
            self.panel.wait_for(lambda: self.panel.lamps != lamps, 0.1)
        return False

    def _open_betting(self) -> bool:
        """Press ``open_betting`` until betting is open (``no_more_bets`` lit); True then, False when stopped.

        The lamp going out is not enough: a fault raised just before the press (a device lost between rounds)
        puts it out too, and the press is refused. Once the supervisor clears the fault, ``open_betting`` lights
        again, and the dealer presses it again rather than taking the round for one that was voided."""
        while self._press_when_lit("open_betting"):
            while not self._stop.is_set():
                lamps = self.panel.lamps
                if "no_more_bets" in lamps:
                    return True
                if "open_betting" in lamps:
                    break  # no round opened: press again
                self.panel.wait_for(lambda: self.panel.lamps != lamps, 0.1)
        return False

    def _press_again_if_relit(self, lamps: frozenset[str], awaited: str, relit_since: float | None) -> float | None:
        """The lamp of the button pressed last (not ``awaited``) lit again in ``lamps`` for more than 0.3 s: that
        press never took effect (the controller restarted, the frame was lost), so it is pressed again. Returns
        when the lamp was first seen lit again (None: not lit, or pressed now)."""
        if self._last_pressed not in lamps or self._last_pressed == awaited:
            return None
        relit_since = relit_since or time.monotonic()
        if time.monotonic() - relit_since > 0.3:
            self._dealer_press(self._last_pressed, lambda: True, 0.0)
            return None
        return relit_since

    def _press_when_lit(self, button: str) -> bool:
        """Press ``button`` once its lamp is lit, again if the press was lost (the lamp stays lit); True once
        the lamp went out (a later ``_wait`` presses it again should it light up again), False when stopped."""
        while self._wait(button):
            if button not in self.panel.lamps:
                return True  # opened meanwhile by someone else (see ``_wait``): nothing to press
            if button in ANNOUNCEMENTS:  # the dealer calls once the chips are down, as the sensors reported them
                self.sensors.wait_for(lambda: self.sensors.awaiting_ack == 0, CHIPS_REPORTED_S)
            self._last_pressed = button
            if self._dealer_press(button, lambda: button not in self.panel.lamps, 1.0):
                return True
        return False

    def _dealer_press(self, button: str, took_effect: Callable[[], bool], timeout: float) -> bool:
        """The dealer presses ``button`` and waits up to ``timeout`` seconds for ``took_effect()``; its result.
        With a ``pace`` the press comes no sooner than ``pace`` seconds after the dealer saw its previous press
        take effect (or gave up waiting for it): the controller had journaled that one by then, so the journal's
        presses are at least ``pace`` apart and a person watching the screen sees each step."""
        if self.pace and self._pressed_at is not None:
            self._stop.wait(max(0.0, self._pressed_at + self.pace - time.monotonic()))
        self._act(self.panel.press, button)
        done = self.panel.wait_for(took_effect, timeout)
        self._pressed_at = time.monotonic()
        return done

    def _place(self, seat: int, spot: str, amount: int) -> None:
        """A hand putting chips on a spot (``SensorSimulator.place``), at most ``CHIP_CHANGES_PER_S`` a second:
        people move chips far slower, and the sensors' link carries at most 960 frames a second (docs/protocol.md),
        so a table dealing as fast as it can never looks like a flooding device (drivers/session.py)."""
        wait = self._next_chip - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._next_chip = max(self._next_chip, time.monotonic() - 0.1) + 1.0 / CHIP_CHANGES_PER_S
        self._act(self.sensors.place, seat, spot, amount)

    @staticmethod
    def _act(action: Callable[..., None], *args: object) -> None:
        """A person acting on a device: if the device is unplugged the signal is lost (the chips still lie where
        they were put), which the table notices and repeats like a person would; the table goes on."""
        try:
            action(*args)
        except OSError as exc:
            log.debug("simulated table: %s%s lost: %s", getattr(action, "__name__", action), args, exc)

    def _guard(self, target: Callable[[], None]) -> None:
        try:
            target()
        except OSError as exc:  # a simulator was unplugged or stopped under us
            log.warning("simulated table stopped after %d rounds: %s", self.rounds_played, exc)
        except Exception:
            log.exception("simulated table failed in round %d", self.rounds_played + 1)
            if self.on_failure is not None:
                self.on_failure()

    def _supervise(self) -> None:
        """The supervisor: called when the table stalls or shows a fault; acts with the key, then leaves."""
        stalled_since: float | None = None
        while not self._stop.wait(0.02):
            lamps, text = self.panel.lamps, unmarked(self.panel.display)
            dealer_lamps = lamps - SUPERVISOR_BUTTONS
            now = time.monotonic()
            stalled_since = (stalled_since or now) if not dealer_lamps else None
            called = text.startswith(("FAULT", "Past-posting")) or (stalled_since is not None and now - stalled_since > 0.5)
            paged = self._paged.is_set()
            if (called or paged) and now - self._attended_at > 0.5:  # a person does not come back 50 times a second
                self._paged.clear()
                self._attend(paged)
                self._attended_at = time.monotonic()
                stalled_since = None

    def page(self) -> None:
        """Call the supervisor to the table: a hole-card alert waits (safe from any thread; never waits)."""
        self._paged.set()

    def _attend(self, paged: bool = False) -> None:
        if self.shoe.door_open:  # the person at the table shuts the shoe's door before anything else
            self._act(self.shoe.close_door)
            # the supervisor comes once the shoe's DOOR_CLOSED is taken (acknowledged: the host queues a frame's
            # event before its ACK), so the door is journaled shut before the key and the clearance
            self.shoe.wait_for(lambda: self.shoe.awaiting_ack == 0, DOOR_REPORT_WAIT)
        self._act(self.panel.turn_key, True, self.supervisor_id)
        try:
            if paged:  # the alert's lamp lights once the key is seen
                self.panel.wait_for(lambda: "acknowledge_alert" in self.panel.lamps, 1.0)
            waited = time.monotonic()
            while not self._stop.is_set():
                lamps = self.panel.lamps
                if "acknowledge_alert" in lamps:  # read the alert shown, then acknowledge it
                    action = "acknowledge_alert"
                    # the alert's text comes in its own frame: a person reads it once it is on the panel
                    self.panel.wait_for(lambda: unmarked(self.panel.display).startswith("ALERT"), 2.0)
                    self.alerts_read.append(self.panel.display)
                elif "acknowledge" in lamps:
                    action = "acknowledge"
                elif "clear_fault" in lamps:
                    give_up = self._clears_in_round >= 3  # the same trouble keeps coming back: end the round
                    action = "void_round" if "void_round" in lamps and (
                        give_up or self._supervisor_rng.random() < self.void_rate) else "clear_fault"
                elif "void_round" in lamps and (unmarked(self.panel.display).endswith("to void")
                                                or time.monotonic() - waited > self.patience):
                    action = "void_round"  # nothing to resume, or the device did not come back in time
                elif lamps - SUPERVISOR_BUTTONS and not unmarked(self.panel.display).startswith("FAULT"):
                    return  # the table moves again
                elif time.monotonic() - waited > self.patience:
                    return  # nothing for a supervisor here; come back when called again
                else:  # wait for the panel to change (a supervisor's lamp lit, say), looking again in 0.2 s
                    seen = (lamps, self.panel.display)
                    self.panel.wait_for(lambda: (self.panel.lamps, self.panel.display) != seen, 0.2)
                    continue
                shown = self.panel.display
                self._act(self.panel.press, action)
                self.supervisor_actions[action] += 1
                self._clears_in_round += action == "clear_fault"
                # done when its lamp goes out, or for an alert when the next alert is shown; a busy table may take
                # a while to show it, and lamps read before then are those of before the press (acting on them,
                # a void pressed after a clear lands in the round the clear resumed)
                self.panel.wait_for(lambda a=action: a not in self.panel.lamps or (
                    a == "acknowledge_alert" and self.panel.display != shown
                    and unmarked(self.panel.display).startswith("ALERT")), self.patience)
                waited = time.monotonic()
        finally:
            self._act(self.panel.turn_key, False, self.supervisor_id)

    def _decide(self, step: str, hole: Sequence[str], cross: Sequence[str], bets: list[int]) -> int:
        """The player's decision: the bet as a multiple of the ante, or 0 to fold. Only turned cards are used:
        the across outside cards (cross[0:2]) from the down decision on, the down ones (cross[2:4]) at the middle.
        A seat of ``players`` decides by its own strategy instead (a hole-carder peeks at its one card)."""
        if self.mistakes and self.rng.random() < self.mistakes:
            return self.rng.choice((0, *self.strategy.multiples))
        if step == "across":
            return self.strategy.across(hole)
        if step == "down":
            return self.strategy.down(hole, cross[0:2], bets[0])
        return self.strategy.middle(hole, cross[0:2], cross[2:4], bets[0], bets[1])

    def _run(self) -> None:
        while not self._stop.is_set() and (self.rounds is None or self.rounds_played < self.rounds):
            try:
                if not self._play_round():
                    return
            except RoundOver:
                self.rounds_voided += 1
            self.rounds_played += 1

    def _play_round(self) -> bool:
        if self.rounds_played == 0:
            self._void_unknown_round()
        if not self._switch_when_due():
            return False
        if not self._open_betting():
            return False
        texts = map(unmarked, self.panel.messages[-3:])
        announced = [m for m in map(re.compile(r"Round (\d+): place").match, texts) if m]
        self._round_no = int(announced[-1].group(1)) if announced else None
        self._clears_in_round = 0
        self._act(self.sensors.clear)
        placed: dict[int, dict[str, int]] = {}
        antes: dict[int, int] = {}
        bonus_seats: set[int] = set()
        seated = self._seated()
        away = roam(self.roamers, self.players, self._rate)
        for seat in self.seats:
            if seat in away or (seat not in seated if seated is not None else self.rng.random() < 0.1):
                continue  # this seat sits the round out (a roaming hole-carder's break, or its seat kept free)
            ante = self.ante_limits.min * self.rng.choice((1, 2, 5))
            ante = min(ante, self.ante_limits.max)
            antes[seat] = ante
            self._place(seat, "ante_across", ante)
            self._place(seat, "ante_down", ante)
            placed[seat] = {"ante_across": ante, "ante_down": ante}
            if self.rng.random() < 0.5:
                bonus = self.bonus_limits.min * self.rng.choice((1, 5))
                self._place(seat, "five_card_bonus", bonus)
                placed[seat]["five_card_bonus"] = bonus
                bonus_seats.add(seat)
        if not antes:  # nobody played: one player sits down anyway
            seat = self.seats[0]
            antes[seat] = self.ante_limits.min
            self._place(seat, "ante_across", antes[seat])
            self._place(seat, "ante_down", antes[seat])
            placed[seat] = {"ante_across": antes[seat], "ante_down": antes[seat]}
        dealt_before = self.shoe.dealt
        if not self._press_when_lit("no_more_bets"):
            return False
        if not self._wait("confirm"):
            return False
        stacks = [cards for _, cards in self.shoe.dispensed_since(dealt_before)]
        self.manual = not stacks  # the shoe dealt nothing: the table deals by hand, as the panel asks
        if self.manual:
            dealt = self._deal_by_hand(sorted(antes))
            if dealt is None:
                return False
            cross, hands = dealt
        else:
            cross, hands = stacks[0], dict(zip(sorted(antes), stacks[1:]))
        active = set(antes)
        bets: dict[int, list[int]] = {seat: [] for seat in antes}
        for step in ("across", "down", "middle"):
            if step != "across" and not self._wait("confirm"):
                return False
            for seat in sorted(active):
                player = self.players.get(seat)
                decide = player.decide if player is not None else self._decide
                multiple = decide(step, hands[seat], cross, bets[seat])
                if multiple:
                    bets[seat].append(multiple)
                    self._place(seat, step, antes[seat] * multiple)
                    placed[seat][step] = antes[seat] * multiple
                else:
                    active.discard(seat)
            if not self._press_when_lit("confirm"):
                return False
            if not active and not bonus_seats:  # nothing left in action: the round settles at the fold
                return self._finish(placed, hands, cross)
            turned = {"across": cross[0:2], "down": cross[2:4], "middle": cross[4:]}[step]
            if self.manual and not self._enter_when_asked(f"Turn the {step}", 0, turned):
                return False
            if not self._press_when_lit("reveal"):
                return False
        return self._finish(placed, hands, cross)

    def _seated(self) -> list[int] | None:
        """With ``seating``, the seats whose players play this round (``controller.simulated.seating``), the dealer
        rating them as they come; without it None: every seat plays, sitting one round out now and then."""
        if self.seating is None:
            return None
        actions, moves = self.seating.next_round()
        move_players(self.players, moves)  # a player's strategy goes with them
        self._rate(actions)
        return self.seating.playing()

    def _rate(self, actions: Sequence[tuple[str, int, str]]) -> None:
        """Hand the dealer's rating actions ``(action, seat, player)`` in, as ``POST /sessions`` does."""
        for action, seat, player in actions if self.post is not None else ():
            self.post(SeatRating(action, seat, player, "SIM-DEALER", "dealer"))

    def _finish(self, placed: dict[int, dict[str, int]], hands: dict[int, Sequence[str]],
                cross: Sequence[str]) -> bool:
        """After the last decision: the cards entered at settlement when the round is dealt by hand, then the
        payout (``_pay_out``). True once the round is over, False when stopped."""
        if self.manual and not self._settle_by_hand(cross, hands):
            return False
        return self._pay_out(placed, hands, cross)

    # ------------------------------------------------------------------ the payout
    def _pay_out(self, placed: dict[int, dict[str, int]], hands: dict[int, Sequence[str]],
                 cross: Sequence[str]) -> bool:
        """Pay each seat the panel names and press ``paid``; put a seat right when the panel shows its mispay.
        True once the round is over (``open_betting`` lit), False when stopped. Without the payout check the
        round is over at once."""
        plans: dict[int, dict[str, dict]] = {}
        paid: set[int] = set()
        pattern = re.compile(r"Seat (\d) (pay|mispay)")
        relit_since: float | None = None
        while not self._stop.is_set():
            lamps = self.panel.lamps
            if "open_betting" in lamps:
                return True
            shown = pattern.match(unmarked(self.panel.display))
            if "paid" not in lamps or shown is None or int(shown.group(1)) not in placed:
                # the last reveal lost to a restart of the controller (its lamp lit again): pressed again
                relit_since = self._press_again_if_relit(lamps, "paid", relit_since)
                self.panel.wait_for(lambda: self.panel.lamps != lamps, 0.1)
                continue
            if not plans:
                plans = self._plans(placed, hands, cross)
            seat = int(shown.group(1))
            if shown.group(2) == "mispay" or seat not in paid:
                self._pay_seat(seat, plans[seat], first=seat not in paid)
                paid.add(seat)
            before = self.panel.messages
            self._last_pressed = "paid"
            self._dealer_press("paid", lambda: self.panel.messages != before, 1.0)
        return False

    def _plans(self, placed: dict[int, dict[str, int]], hands: dict[int, Sequence[str]],
               cross: Sequence[str]) -> dict[int, dict[str, dict]]:
        """The dealer's own reckoning: each seat's settlement and what its spots must hold once paid."""
        if self.jurisdiction is None:
            raise ValueError("the simulated dealer cannot pay: no jurisdiction given (SimulatedTable.for_table)")
        community = Community.from_stack(tuple(cross))
        return {seat: plan_seat(settle_seat(seat, tuple(hands[seat]), community, wagers,
                                            self.jurisdiction).to_json()["wagers"], self.winning_spot)
                for seat, wagers in placed.items()}

    def _pay_seat(self, seat: int, plan: dict[str, dict], *, first: bool) -> None:
        """Set the seat's spots to what they must hold (``plan``, ``controller.game.payout.plan_seat``); the first
        time, with probability ``payout_errors``, with one mistake (recorded in ``payout_errors_made``)."""
        amounts = {spot: step["expected"] for spot, step in plan.items()}
        if first and self.payout_errors and self._payout_rng.random() < self.payout_errors:
            kind = self._mispay(amounts, plan)
            if kind:
                self.payout_errors_made.append((self._round_no, seat, kind))
        for spot, amount in amounts.items():
            self._place(seat, spot, amount)

    def _mispay(self, amounts: dict[str, int], plan: dict[str, dict]) -> str | None:
        """Change ``amounts`` (spot -> what the dealer leaves there) by one mistake of a kind that can happen on
        this seat (``plan``); returns the kind, None when none can."""
        rng = self._payout_rng
        won = [spot for spot, step in plan.items() if step["action"] == "pay"]
        held = [spot for spot, amount in amounts.items() if amount]
        lost = [spot for spot, step in plan.items() if step["action"] == "take"]
        kinds = [k for k, possible in zip(MISPAY_KINDS, (won, held, won, lost)) if possible]
        if not kinds:
            return None
        kind = rng.choice(kinds)
        chip = self.bonus_limits.min  # the smallest chip the table takes
        if kind == "short":
            spot = rng.choice(won)
            amounts[spot] -= min(chip, amounts[spot])
        elif kind == "over":
            amounts[rng.choice(held)] += chip
        elif kind == "wrong_spot":  # the whole payout stacked on another spot of the seat
            spot = rng.choice(won)
            other = rng.choice([s for s in amounts if s != spot])
            amounts[spot] -= plan[spot]["pay"]
            amounts[other] += plan[spot]["pay"]
        else:
            spot = rng.choice(lost)
            amounts[spot] = plan[spot]["wager"]
        return kind
