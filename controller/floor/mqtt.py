"""A paho-mqtt client (MQTT 5) set up from ``floor:`` of table.yaml or the tools' options (docs/floor.md)."""

from __future__ import annotations

import ssl
from typing import Any

import paho.mqtt.client as paho
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from controller.settings.floor import FloorConfig, read_password

#: Seconds between keep-alive pings; the broker sends the last will after 1.5 times this without a word.
KEEPALIVE = 10
#: Seconds a connection attempt (TCP, TLS and CONNACK) may take before it is given up and tried again later.
CONNECT_TIMEOUT = 5.0
#: Largest packet, in bytes, a floor client takes from the broker (its CONNECT's Maximum Packet Size, MQTT 5.0,
#: 3.1.2.11.4): the broker discards a larger message for this client instead of sending it (and paho would read it
#: whole into memory). A table publishes at most ``publisher.MAX_MESSAGE`` a record and a round's view of a few
#: KiB: only a message no table sends is discarded.
MAX_RECEIVED = 1 << 20


#: The PUBACK reason codes of a message the broker took, as paho gives them (MQTT 5.0 section 3.4.2.1: 0x00
#: Success, 0x10 No matching subscribers), shared by every PUBACK ``Client`` reads (never changed).
_TAKEN = {0x00: ReasonCode(PacketTypes.PUBACK, identifier=0x00),
          0x10: ReasonCode(PacketTypes.PUBACK, identifier=0x10)}
#: The properties of a PUBACK that has none (paho's empty ``Properties``), shared likewise.
_NO_PROPERTIES = Properties(PacketTypes.PUBACK)


class Client(paho.Client):
    """paho's MQTT client, with a short path for the usual PUBACK: a message the broker took, without
    properties (MQTT 5.0 section 3.4: remaining length 2, or 3 with reason code 0x00 or 0x10; with less than 4
    bytes there is no property length, 3.4.2.2). paho builds a new ``ReasonCode`` and ``Properties`` for each
    PUBACK, most of the publisher's time per message; here they are shared constants, and ``on_publish`` gets
    the same mid, reason code and (empty) properties as paho's own path gives it. Every other PUBACK (a
    refusal, one with properties, MQTT 3.1.1, PUBCOMP) goes through paho's path unchanged."""

    def _handle_pubackcomp(self, cmd: Any) -> paho.MQTTErrorCode:
        packet = self._in_packet["packet"]
        size = len(packet)
        if cmd != "PUBACK" or self._protocol != paho.MQTTv5 or size not in (2, 3) or (
                size == 3 and packet[2] not in _TAKEN):
            return super()._handle_pubackcomp(cmd)
        mid = (packet[0] << 8) | packet[1]
        reason = _TAKEN[packet[2] if size == 3 else 0x00]
        with self._out_message_mutex:
            if mid in self._out_messages:  # as paho: only the first PUBACK of a message is said
                return self._do_on_publish(mid, reason, _NO_PROPERTIES)
        return paho.MQTTErrorCode.MQTT_ERR_SUCCESS


    def limit_connect_time(self, seconds: float) -> None:
        """The next connection attempt (``connect`` or ``reconnect``: TCP and TLS) may take at most ``seconds``
        (capped at ``CONNECT_TIMEOUT``; a thousandth of a second at least): for a caller bounded by a deadline of
        its own (``controller.floor.listen.Listener.open``). paho's ``connect_timeout`` setter refuses a change
        while the client is connecting, which is the state an attempt that failed leaves it in."""
        self._connect_timeout = max(min(seconds, CONNECT_TIMEOUT), 0.001)


def make_client(config: FloorConfig, client_id: str, *, password: str | None = None) -> Client:
    """A new, unconnected MQTT 5 client (``Client``) for the broker of ``config`` with ``client_id``: TLS when ``config.tls``
    (the system's certificate authorities, or ``config.ca_file``; the broker's name is checked), the username
    and the password (``password`` given, else read from ``config.password_file``: ``ConfigError`` when it
    cannot be used). paho keeps no queue beyond what the caller bounds (``max_queued_messages_set``)."""
    client = Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    client.connect_timeout = CONNECT_TIMEOUT
    if config.tls:
        client.tls_set(ca_certs=str(config.ca_file) if config.ca_file else None, cert_reqs=ssl.CERT_REQUIRED)
    if config.username is not None:
        client.username_pw_set(config.username, password if password is not None else read_password(config))
    return client


def connect(client: paho.Client, config: FloorConfig, *, clean_start: bool = True,
            session_expiry: int | None = None, receive_maximum: int | None = None) -> None:
    """Connect ``client`` to ``config.broker``:``config.port`` (blocking up to ``CONNECT_TIMEOUT``); with
    ``session_expiry`` (seconds) the broker keeps the session and queues QoS 1 messages for it while away; with
    ``receive_maximum`` the broker sends at most that many QoS 1 messages not yet acknowledged (MQTT 5.0,
    3.1.2.11.3 and 4.9: flow control). The broker is told the largest packet the client takes (``MAX_RECEIVED``).
    Raises ``OSError`` when the broker cannot be reached."""
    properties = Properties(PacketTypes.CONNECT)
    properties.MaximumPacketSize = MAX_RECEIVED
    if session_expiry is not None:
        properties.SessionExpiryInterval = session_expiry
    if receive_maximum is not None:
        properties.ReceiveMaximum = receive_maximum
    client.connect(config.broker, config.port, KEEPALIVE, clean_start=clean_start, properties=properties)
