"""The metrics port's door over a real socket (docs/operations.md, "Metrics"): it answers only a ``Host`` naming
its own address and port, as the control interface does (docs/control.md, "Limits": 421 otherwise, against DNS
rebinding, RFC 9110 7.4), and only the path Prometheus scrapes, ``/metrics`` (its ``metrics_path`` by default);
any other path is 404.
"""

from __future__ import annotations

import socket
import time

import pytest

from controller.service.metrics import ServiceMetrics

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def metrics():
    """The port of a ``ServiceMetrics`` serving on a free loopback port; closed after."""
    served = ServiceMetrics(lambda: 0, dict)
    port = served.serve("127.0.0.1", 0)
    yield port
    served.close()


def ask(port: int, request: str, timeout: float = 10.0) -> tuple[int, str]:
    """Send ``request`` (its lines, without the blank line that ends it) and read the answer until the server
    closes (HTTP/1.0: one request per connection); the status code and the body. Fails past ``timeout``."""
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall((request + "\r\n\r\n").encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            assert time.monotonic() < deadline, "the answer did not end in time"
    head, _, body = data.decode("latin-1").partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), body


@pytest.mark.parametrize("host", ["attacker.example:{port}", "attacker.example", "127.0.0.1:{other}",
                                  "127.0.0.2:{port}", "[::1]:{port}", "localhost.attacker.example:{port}",
                                  "127.0.0.1:+{port}", ""])
def test_a_host_that_is_not_the_port_s_own_is_answered_421_with_no_metric(metrics, host):
    status, body = ask(metrics, f"GET /metrics HTTP/1.1\r\nHost: {host.format(port=metrics, other=metrics + 1)}")
    assert status == 421
    assert "crisscross_" not in body


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_port_s_own_host_is_served_its_metrics(metrics, host):
    status, body = ask(metrics, f"GET /metrics HTTP/1.1\r\nHost: {host.format(port=metrics)}")
    assert status == 200
    assert "crisscross_build_info" in body


def test_a_scrape_of_http_1_0_without_host_is_served_and_http_1_1_without_host_is_400(metrics):
    assert ask(metrics, "GET /metrics HTTP/1.0")[0] == 200
    assert ask(metrics, "GET /metrics HTTP/1.1")[0] == 400


def test_two_host_headers_are_refused_400(metrics):
    own = f"Host: 127.0.0.1:{metrics}"
    assert ask(metrics, f"GET /metrics HTTP/1.1\r\n{own}\r\n{own}")[0] == 400
    assert ask(metrics, f"GET /metrics HTTP/1.1\r\n{own}\r\nHost: attacker.example:{metrics}")[0] == 400


@pytest.mark.parametrize("path", ["/x", "/", "/metrics/", "/metricsx", "/favicon.ico", "/metrics/x",
                                  "http://attacker.example/metrics"])
def test_a_path_other_than_metrics_is_404(metrics, path):
    status, body = ask(metrics, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{metrics}")
    assert status == 404
    assert "crisscross_" not in body


def test_a_query_on_metrics_is_still_metrics(metrics):
    """Prometheus' client and some scrapers filter with ``name[]``: the path is still ``/metrics``."""
    status, body = ask(metrics, f"GET /metrics?name[]=crisscross_build_info HTTP/1.1\r\nHost: 127.0.0.1:{metrics}")
    assert status == 200
    assert "crisscross_build_info" in body
