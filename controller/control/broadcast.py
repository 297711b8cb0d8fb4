"""The control interface's one event broadcaster: owned by the server's event loop, fed by the controller thread.

The controller thread calls ``Hub.publish_record`` and ``Hub.publish_view`` (through
``loop.call_soon_threadsafe``, never directly: the hub belongs to the loop's thread, docs/architecture.md
"Threads"), each with its record's or view's JSON, encoded once on the controller thread (bytes: nothing can
change them, so the loop owns them as they are). The hub keeps the latest view, a ring of the latest public
records (``GET /events`` long polls) and one bounded queue per Server-Sent Events subscriber. Each record is
framed once as an SSE frame and offered to
every subscriber's queue with ``put_nowait``; a subscriber whose queue is full is dropped (its stream ends with
an ``event: dropped`` frame and the browser reconnects from its last ``id``), so a slow reader costs memory up to
its bound and never delays the controller or the other readers. Long polls all wait on one future, resolved
once per batch of records.

The controller thread hands its records and views over through one ``Outbox`` (the only object the two
threads share, behind its lock): the loop is woken once per batch, not once per record or view, and after a take
that found something it takes again ``PACE`` seconds later without being woken, so that the inputs of a busy
spell (a round's dealing, a burst of chip changes) go to the clients in one write every ``PACE`` while the
first input after a quiet one goes at once; the two threads trade the interpreter's lock as seldom as that.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from typing import Any

import orjson

#: Public records kept in memory for ``GET /events`` and for a stream resuming from ``Last-Event-ID``.
RING_SIZE = 2000
#: Frames waiting for one SSE subscriber; one more and the subscriber is dropped (its stream closed).
CLIENT_QUEUE = 256
#: Most records in one ``GET /events`` answer.
MAX_BATCH = 500
#: Long polls waiting at once; one more is answered at once with what is held (the client asks again), so long
#: polls never hold every connection of the interface.
MAX_WAITING = 64
#: The end of a subscriber's stream (dropped, or the server stopping).
END = b""


#: Seconds from a take that found something to the next one (module docstring): what is handed over in between
#: waits at most this long, and goes in one write.
PACE = 0.005
#: Hand-overs (records, views, alerts) waiting in the ``Outbox`` for the loop; one more drops the oldest.
OUTBOX_SIZE = RING_SIZE


def sse_frame(event: str, data: Any, ident: int | None = None) -> bytes:
    """One Server-Sent Events frame (WHATWG HTML, "Server-sent events"): ``event``, ``data`` as one line of
    compact JSON (UTF-8) and an optional ``id`` (a journal seq, which the browser sends back as
    ``Last-Event-ID``)."""
    return _frame(event, orjson.dumps(data), ident)


def _frame(event: str, body: bytes, ident: int | None = None) -> bytes:
    head = f"id: {ident}\nevent: {event}\ndata: " if ident is not None else f"event: {event}\ndata: "
    return head.encode() + body + b"\n\n"


class Outbox:
    """What the controller thread hands to the loop's thread, in order (module docstring): items ``("record",
    public, seq)``, ``("view", view)`` and ``("alert", record)``, each a copy the loop will own. ``put`` (the
    controller thread) returns True when the loop must be woken to ``take`` them: only the first waking put
    while no take is due does (records are put without waking: the view that follows each commit wakes the
    loop for all of them). A take that found something leaves a take due: the loop takes again ``PACE`` seconds
    later (``ControlServer``), and only a take that finds nothing makes the next waking put wake it. Bounded to ``size`` items: one more drops the oldest, and ``take`` returns, with the items, the
    highest seq of a record dropped so (None when none was), for the hub's ``missed`` horizon
    (docs/control.md, "Bounds"): a loop that falls behind costs memory up to the bound and never delays the
    controller. Every method holds the lock; nothing else is shared."""

    def __init__(self, size: int = OUTBOX_SIZE) -> None:
        self._lock = threading.Lock()
        self._items: collections.deque[tuple[Any, ...]] = collections.deque()
        self._size = size
        self._scheduled = False
        self._lost: int | None = None

    def put(self, item: tuple[Any, ...], wake: bool = True) -> bool:
        """Add ``item``; True when ``wake`` and the loop must be woken (no take is due yet)."""
        with self._lock:
            if len(self._items) >= self._size:
                dropped = self._items.popleft()
                if dropped[0] == "record":
                    self._lost = max(self._lost or 0, dropped[2])
            self._items.append(item)
            if not wake or self._scheduled:
                return False
            self._scheduled = True
            return True

    def wake(self) -> bool:
        """True when the loop must be woken for what waits (no take is due yet, and something waits)."""
        with self._lock:
            if self._scheduled or not (self._items or self._lost):
                return False
            self._scheduled = True
            return True

    def take(self) -> tuple[list[tuple[Any, ...]], int | None]:
        """Every item put since the last take, oldest first, and the highest seq of a record dropped. When it
        found something, a take stays due (the caller takes again after ``PACE``); when it found nothing, the
        next waking ``put`` or ``wake`` returns True."""
        with self._lock:
            items, lost = list(self._items), self._lost
            self._items.clear()
            self._lost = None
            self._scheduled = bool(items) or lost is not None
            return items, lost


class Subscriber:
    """One SSE client: a queue of at most ``size`` encoded frames and whether it was dropped."""

    def __init__(self, size: int) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue(size)
        self.dropped = False

    def offer(self, frame: bytes) -> bool:
        """Queue ``frame``; False (and the subscriber is marked dropped, its queue ended) when it is full."""
        try:
            self.queue.put_nowait(frame)
            return True
        except asyncio.QueueFull:
            self.dropped = True
            while not self.queue.empty():  # make room for the end marker: what was queued is not sent
                self.queue.get_nowait()
            self.queue.put_nowait(END)
            return False


class Hub:
    """The records and the view as the event loop holds them (module docstring). Every method runs on the loop's
    thread. ``ring_size`` bounds the ring, ``client_queue`` each subscriber's queue, ``max_subscribers`` the
    open event streams (``subscribe`` returns None beyond it; a stream counts from ``subscribe`` until
    ``release``, after it was dropped too, while it drains), ``max_waiting`` the long polls waiting at once."""

    def __init__(self, ring_size: int = RING_SIZE, client_queue: int = CLIENT_QUEUE,
                 max_subscribers: int = 1024, max_waiting: int = MAX_WAITING) -> None:
        #: the latest public records, each ``(seq, its JSON)``
        self.ring: collections.deque[tuple[int, bytes]] = collections.deque(maxlen=ring_size)
        self.last_seq = 0  # the highest journal seq seen (public or not)
        self.horizon: int | None = None  # records with seq <= horizon may be missing from the ring
        self.view_body: bytes | None = None  # the latest view's JSON with its ``seq``
        self._view: dict[str, Any] | None = None  # ``view_body`` read, when first asked for
        self.client_queue = client_queue
        self.max_subscribers = max_subscribers
        self.subscribers: set[Subscriber] = set()  # those that get the broadcast frames
        self.streams: set[Subscriber] = set()  # every stream not yet released: the ones dropped too
        self.max_waiting = max_waiting
        self.waiting = 0  # long polls waiting now
        self.dropped = 0  # subscribers dropped for a full queue since the start
        self.stopping = False
        self._arrived: asyncio.Future[None] | None = None

    # ------------------------------------------------------------------ from the controller (via the loop)
    def publish_record(self, public: bytes | None, seq: int) -> None:
        """Take the journal record ``seq``: ``public`` is the JSON of its public part (a JSON object), None when
        it stays private."""
        if self.horizon is None:
            self.horizon = seq - 1  # records before this run are in the journal only
        self.last_seq = max(self.last_seq, seq)
        if public is None:
            return
        if len(self.ring) == self.ring.maxlen:
            self.horizon = max(self.horizon, self.ring[0][0])
        self.ring.append((seq, public))
        self._broadcast(_frame("record", public, seq))
        self._wake()

    def lost(self, seq: int) -> None:
        """Records up to ``seq`` were dropped before they reached the hub (``Outbox``'s bound): a client asking
        for records at or before it is told ``missed``."""
        self.horizon = seq if self.horizon is None else max(self.horizon, seq)
        self.last_seq = max(self.last_seq, seq)

    def publish_view(self, view: bytes) -> None:
        """Take the JSON of the round's latest view (``Round.view()``, a JSON object without ``seq``); ``seq`` is
        added here as its last key, once for ``GET /state`` and the streams alike."""
        if not (view.startswith(b"{") and view.endswith(b"}")):
            raise ValueError(f"a view is a JSON object, got {view[:20]!r}")
        self.view_body = view[:-1] + (b"," if view != b"{}" else b"") + b'"seq":%d}' % self.last_seq
        self._view = None
        self._broadcast(_frame("view", self.view_body))

    @property
    def view(self) -> dict[str, Any] | None:
        """The latest view with its ``seq`` (None before the first), read from its JSON when first asked for:
        only an action's round guard and a new stream ask (``current``, ``answers``)."""
        if self._view is None and self.view_body is not None:
            self._view = orjson.loads(self.view_body)
        return self._view

    def stop(self) -> None:
        """End every stream and long poll."""
        self.stopping = True
        for subscriber in list(self.subscribers):
            subscriber.offer(END)  # a full queue is emptied first: the stream ends either way
        self.subscribers.clear()
        self._wake()

    # ------------------------------------------------------------------ for the endpoints
    def current(self) -> tuple[int | None, str | None]:
        """The round number and state of the latest view (the round guard's reference)."""
        view = self.view or {}
        return view.get("round_no"), view.get("state")

    def answers(self) -> dict[str, int]:
        """What each answering action answers now, by number, in the latest view (``Round.answers``)."""
        return dict((self.view or {}).get("answers") or {})

    def after(self, after: int) -> dict[str, Any]:
        """``{"records", "next", "missed"}``: the public records above ``after`` (at most ``MAX_BATCH``), each
        ``(seq, its JSON)``."""
        records = [r for r in self.ring if r[0] > after][:MAX_BATCH]
        full = len(records) == MAX_BATCH
        nxt = records[-1][0] if full else max(after, self.last_seq)
        missed = self.horizon is not None and after < self.horizon
        return {"records": records, "next": nxt, "missed": missed}

    def after_json(self, after: int) -> bytes:
        """``after(after)`` as the JSON answer of ``GET /events``: its records as JSON objects."""
        batch = self.after(after)
        batch["records"] = [orjson.Fragment(body) for _, body in batch["records"]]
        return orjson.dumps(batch)

    async def wait_after(self, after: int, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a public record above ``after`` (or the stop)."""
        if (self.stopping or (self.ring and self.ring[-1][0] > after) or timeout <= 0
                or self.waiting >= self.max_waiting):
            return
        if self._arrived is None or self._arrived.done():
            self._arrived = asyncio.get_running_loop().create_future()
        self.waiting += 1
        try:
            await asyncio.wait_for(asyncio.shield(self._arrived), timeout)
        except TimeoutError:
            pass
        finally:
            self.waiting -= 1

    def subscribe(self, after: int | None) -> Subscriber | None:
        """A new subscriber whose queue starts with a ``missed`` frame when records above ``after`` are no longer
        held, the ring's records above ``after`` (when given; at most ``MAX_BATCH``) and the view, with room for
        ``client_queue`` frames more; None when ``max_subscribers`` streams are open (dropped ones not yet released
        included). The caller releases it (``release``) when its stream has ended."""
        if len(self.streams) >= self.max_subscribers or self.stopping:
            return None
        frames = []
        if after is not None:
            backlog = self.after(after)
            if backlog["missed"]:
                frames.append(sse_frame("missed", {"after": after}))
            frames += [_frame("record", body, seq) for seq, body in backlog["records"]]
        subscriber = Subscriber(self.client_queue + len(frames) + 1)  # room for the backlog and the view
        for frame in frames:
            subscriber.offer(frame)
        if self.view_body is not None:
            subscriber.offer(_frame("view", self.view_body))
        self.subscribers.add(subscriber)
        self.streams.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop broadcasting to ``subscriber`` (its client went away); it still counts until ``release``."""
        self.subscribers.discard(subscriber)

    def release(self, subscriber: Subscriber) -> None:
        """``subscriber``'s stream has ended (its connection is done with): it no longer counts."""
        self.subscribers.discard(subscriber)
        self.streams.discard(subscriber)

    # ------------------------------------------------------------------ inside
    def _broadcast(self, frame: bytes) -> None:
        for subscriber in list(self.subscribers):
            if not subscriber.offer(frame):
                self.subscribers.discard(subscriber)
                self.dropped += 1

    def _wake(self) -> None:
        if self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(None)
