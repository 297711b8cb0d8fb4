"""The session's heartbeat, silence and flooding rules without a port (drivers/session.py; docs/protocol.md
"Heartbeat", "Flooding"). Times are given; expected values follow from the documented defaults (heartbeat
1 s, link silence 3.5 s, flooding above 250 frames a second over 3 s)."""

from __future__ import annotations

from drivers.session import FLOOD_RATE, FLOOD_WINDOW, Liveness
from drivers.timing import LinkTiming


def test_an_idle_device_is_pinged_once_a_second_and_lost_after_the_silence():
    watch = Liveness(LinkTiming(), 0.0)
    pings = [t / 10 for t in range(1, 40) if watch.ping_due(t / 10, refresh=False)]
    assert pings == [1.0, 2.0, 3.0]
    assert watch.silent(3.5) is None
    assert "nothing received for 3.60 s" in watch.silent(3.6)


def test_traffic_keeps_the_link_and_needs_no_ping_unless_a_state_must_be_confirmed():
    watch = Liveness(LinkTiming(), 0.0)
    for t in range(1, 50):
        watch.received(t / 10, frames=1, errors=0)
        assert not watch.ping_due(t / 10, refresh=False)
    assert watch.silent(4.9) is None
    confirming = [t / 10 for t in range(50, 80) if watch.ping_due(t / 10, refresh=True)]
    assert confirming == [5.0, 6.0, 7.0]


def test_flooding_is_more_than_the_rate_on_average_over_the_window():
    steady = Liveness(LinkTiming(), 0.0)
    assert steady.received(FLOOD_WINDOW, frames=int(FLOOD_RATE * FLOOD_WINDOW), errors=0) is None
    flood = Liveness(LinkTiming(), 0.0)
    assert flood.received(1.0, frames=1600, errors=0) is None  # judged over the whole window only
    assert flood.received(FLOOD_WINDOW, frames=800, errors=800) == \
        f"3200 frames in 3.0 s, more than {FLOOD_RATE} a second"
