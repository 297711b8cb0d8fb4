"""A paho-mqtt client (MQTT 5) set up from ``floor:`` of table.yaml or the tools' options (docs/floor.md)."""

from __future__ import annotations

import ssl
from typing import Any

import paho.mqtt.client as paho

from controller.settings.floor import FloorConfig, read_password

#: Seconds between keep-alive pings; the broker sends the last will after 1.5 times this without a word.
KEEPALIVE = 10
#: Seconds a connection attempt (TCP, TLS and CONNACK) may take before it is given up and tried again later.
CONNECT_TIMEOUT = 5.0


def make_client(config: FloorConfig, client_id: str, *, password: str | None = None) -> paho.Client:
    """A new, unconnected MQTT 5 client for the broker of ``config`` with ``client_id``: TLS when ``config.tls``
    (the system's certificate authorities, or ``config.ca_file``; the broker's name is checked), the username
    and the password (``password`` given, else read from ``config.password_file``: ``ConfigError`` when it
    cannot be used). paho keeps no queue beyond what the caller bounds (``max_queued_messages_set``)."""
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    client.connect_timeout = CONNECT_TIMEOUT
    if config.tls:
        client.tls_set(ca_certs=str(config.ca_file) if config.ca_file else None, cert_reqs=ssl.CERT_REQUIRED)
    if config.username is not None:
        client.username_pw_set(config.username, password if password is not None else read_password(config))
    return client


def connect(client: paho.Client, config: FloorConfig, *, clean_start: bool = True,
            session_expiry: int | None = None) -> None:
    """Connect ``client`` to ``config.broker``:``config.port`` (blocking up to ``CONNECT_TIMEOUT``); with
    ``session_expiry`` (seconds) the broker keeps the session and queues QoS 1 messages for it while away.
    Raises ``OSError`` when the broker cannot be reached."""
    properties: Any = None
    if session_expiry is not None:
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = session_expiry
    client.connect(config.broker, config.port, KEEPALIVE, clean_start=clean_start, properties=properties)
