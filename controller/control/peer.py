"""Who is at the other end of a loopback TCP connection: the user id that owns its socket, from the kernel's table
of TCP sockets (Linux ``/proc/net/tcp`` and ``/proc/net/tcp6``, proc(5)). Every process of the table's PC signs
in to the control interface from a loopback address: the sign-in throttle counts a loopback client by the account
it runs under (``controller.control.signin.throttle_keys``), so that one account's process failing sign-ins under
made-up names does not keep another account's operators out.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

#: The kernel's tables of TCP sockets, IPv4 and IPv6 (proc(5)).
TCP_TABLES = {4: Path("/proc/net/tcp"), 6: Path("/proc/net/tcp6")}
#: Most bytes of a table read (a socket a line of about 150 bytes: tens of thousands of sockets).
MAX_TABLE_BYTES = 8 << 20


def _hex_address(host: str, port: int) -> str:
    """``host:port`` as the kernel's tables spell it: each 32-bit word of the address in the host's byte order
    (little-endian here), then the port, in upper-case hexadecimal."""
    address = ipaddress.ip_address(host)
    packed = address.packed
    words = b"".join(packed[i:i + 4][::-1] for i in range(0, len(packed), 4))
    return f"{words.hex().upper()}:{port:04X}"


def loopback_owner(client: tuple[str, int], server: tuple[str, int]) -> int | None:
    """The user id owning the socket at ``client`` (host, port) connected to ``server`` (host, port), both on a
    loopback address of this machine; None when ``client`` is not loopback or the kernel's table does not hold it
    (the client gone, a system without ``/proc``), or the table cannot be read."""
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return None
    if not address.is_loopback:
        return None
    try:
        local, remote = _hex_address(*client), _hex_address(*server)
    except ValueError:  # the server's host is a name, not an address
        return None
    try:
        with TCP_TABLES[address.version].open("rb") as table:
            text = table.read(MAX_TABLE_BYTES).decode("ascii", "replace")
    except OSError:
        return None
    for line in text.splitlines()[1:]:
        fields = line.split()
        if len(fields) > 7 and fields[1] == local and fields[2] == remote:
            try:
                return int(fields[7])
            except ValueError:
                return None
    return None

