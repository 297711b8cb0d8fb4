"""Whether a request's ``Host`` names the loopback door it reached (DNS rebinding: RFC 9110 7.4's 421): the one
rule of every HTTP door of ours, the control interface (docs/control.md, "Limits"), the pit page
(docs/backoffice.md) and the metrics port (docs/operations.md, "Metrics"). Plain text, no HTTP framework: the
service's exposition server uses it as the interfaces above it do (``controller.control.signin`` re-exports it).
"""

from __future__ import annotations

import ipaddress

#: Loopback addresses a ``Host`` of ``localhost`` may stand for.
LOCALHOST = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


def accepts_host(value: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int,
                 names: tuple[str, ...] = ()) -> bool:
    """True when ``value``, a request's ``Host`` header, names the door bound to ``address`` and ``port``:
    that address (``127.0.0.1``, ``[::1]``), ``localhost`` when it is 127.0.0.1 or ::1, or one of ``names``
    (host names given to the door, lower case: its TLS certificate's), with its port. A ``Host`` without
    a port means port 80 (RFC 9110, 4.2.1 and 7.2). Any other name is refused: a web page whose own name was
    made to resolve to the door's address (DNS rebinding) sends that name. Never raises."""
    value = value.strip()
    if value.startswith("["):
        host, bracket, rest = value[1:].partition("]")
        if not bracket:
            return False
    else:
        host, colon, port_text = value.partition(":")
        rest = colon + port_text
    if rest == "":
        port_no = 80
    elif rest.startswith(":") and rest[1:].isascii() and rest[1:].isdigit() and len(rest) <= 6:
        port_no = int(rest[1:])
    else:
        return False
    if port_no != port:
        return False
    if host.lower() == "localhost":
        return address in LOCALHOST
    if not value.startswith("[") and host.lower() in names:
        return True
    try:
        found = ipaddress.ip_address(host)
    except ValueError:
        return False
    return found == address and (found.version == 6) == value.startswith("[")
