"""The floor's clients tell the broker the largest packet they take (MQTT 5.0, 3.1.2.11.4, Maximum Packet Size:
``controller.floor.mqtt.MAX_RECEIVED``): a message larger than it, which no table publishes (a record is at most
``publisher.MAX_MESSAGE``), is discarded by the broker for them instead of being read whole into memory, and the
messages after it still come."""

from __future__ import annotations

import threading
import time

import paho.mqtt.client as paho

from controller.floor import topics
from controller.floor.listen import Listener
from controller.floor.mqtt import MAX_RECEIVED
from controller.floor.publisher import MAX_MESSAGE
from controller.settings.floor import FloorConfig


def _publish(port: int, messages: list[tuple[str, bytes]]) -> None:
    """Publish ``messages`` (topic, payload) in order at QoS 1 from a plain paho client (no code of ours), each
    acknowledged by the broker."""
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        for topic, payload in messages:
            client.publish(topic, payload, qos=1).wait_for_publish(15)
    finally:
        client.loop_stop()
        client.disconnect()


def test_a_message_over_the_limit_never_reaches_a_floor_listener_and_the_next_one_does(mosquitto):
    assert MAX_MESSAGE < MAX_RECEIVED  # every message a table publishes fits
    received: list[tuple[str, str, int]] = []
    last = threading.Event()

    def on_message(table: str, kind: str, payload: bytes, when: float) -> None:
        received.append((table, kind, len(payload)))
        if payload == b'{"last":true}':
            last.set()

    listener = Listener(FloorConfig(enabled=True, broker="127.0.0.1", port=mosquitto.port), on_message)
    listener.open(timeout=10)
    try:
        topic = topics.topic("crisscross", "t1", "events")
        just_fits = b"x" * (MAX_RECEIVED - 1024)  # the topic and the packet's header fit in the rest
        _publish(mosquitto.port, [(topic, b"y" * (MAX_RECEIVED + 1)), (topic, just_fits), (topic, b'{"last":true}')])
        deadline = time.monotonic() + 15
        while not last.is_set() and time.monotonic() < deadline:
            listener.pump(0.05)
    finally:
        listener.close()
    assert last.is_set(), received
    # in the order published: the message over the limit was discarded, the one that fits came whole
    assert received == [("t1", "events", len(just_fits)), ("t1", "events", len(b'{"last":true}'))]
