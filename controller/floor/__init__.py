"""The floor: every table's public events, view, status and journal anchors over MQTT 5 (docs/floor.md).

- ``controller.settings.floor``: ``floor:`` of ``table.yaml`` (off by default).
- ``controller.floor.topics``: the topic names and message payloads every part below speaks.
- ``controller.floor.publisher``: the service's publisher thread; the journal is its outbox.
- ``controller.floor.mqtt``: connecting a paho-mqtt client (TLS, credentials) for the publisher and the tools.
- ``controller.floor.audit`` and ``controller.floor.pit``: ``crisscross floor audit`` and ``crisscross floor
  watch``, fed by a subscription to every table.
- The back office (docs/backoffice.md): ``controller.floor.store`` (``crisscross floor store``: every table's
  records into PostgreSQL exactly once), ``store_write`` (what it writes), ``migrate`` and ``schema/`` (the
  schema); ``report``, ``periods``, ``report_tool`` and ``plot_svg`` (``crisscross floor report``); ``serve``,
  ``serve_data`` and ``pit_page/`` (``crisscross floor serve``: the pit page); ``backoffice_tools`` (their
  options).
"""
