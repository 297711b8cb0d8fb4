"""The pit page (controller/floor/pit_page, docs/backoffice.md "The pit page") in a real browser: Debian's Chromium
driven by Playwright (tests/browser.py) against ``crisscross floor serve``'s server in this process, its store in a
real PostgreSQL (tests/postgres.py) filled with two simulated tables' public records as the floor's store writes
them.

A dealer is refused and a supervisor signs in; every table has its row; records stored while the page is open
show without a reload; a click on a table opens its report and the plot's SVG. Oracles: ``crisscross meters`` on
the table's own journal as of the last record stored. A real ``crisscross floor store`` shows as writing, and once
killed (SIGKILL) as silent, with every row's Store saying so. A server that stops answering (its loop blocked, as
``kill -STOP`` leaves it) is shown not live, its figures stale, until it answers again. Screenshots go to the
folder the test prints.
"""

from __future__ import annotations

import signal

import pytest

from tests.browser import PASSWORDS, artifacts, first_request, held
from tests.pit_helpers import day_start_for, meters_at, pit_served, public, simulated_journal, store
from tests.postgres import wait_until
from tests.test_floor_store import Publisher, _last_seq, _store_process, postgres  # noqa: F401 - the fixture
from tests.test_floor_store_health import SHORT, day_start, health, health_row_written
from tests.test_screen_browser import browser  # noqa: F401 - the fixture (Debian's Chromium, or skipped)

pytestmark = pytest.mark.slow  # a browser: the long tier (docs/testing.md)

#: Longest wait for the page to show something (milliseconds; a bound, not a measured time).
PATIENCE_MS = 30_000
RATED, SECOND = "CC-07", "CC-08"


def _value(page, table: str, key: str) -> str:
    return page.get_attribute(f"#rows tr[data-table='{table}'] td[data-key='{key}']", "data-value")


def _sign_in(page, user: str) -> None:
    page.fill("#sign-in input[name=user]", user)
    page.fill("#sign-in input[name=password]", PASSWORDS[user])
    page.click("#sign-in button[type=submit]")


def _signed_in_page(browser, server):  # noqa: F811 - browser is a fixture's name
    """A new page of ``server`` with sue (supervisor) signing in."""
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.set_default_timeout(PATIENCE_MS)
    page.goto(server.url + "/")
    page.wait_for_selector("#columns th", state="attached")  # the labels are read
    _sign_in(page, "sue")
    return page


def test_a_supervisor_sees_every_table_live_and_a_tables_report_and_plot(postgres, browser, tmp_path):  # noqa: F811
    shots = artifacts("pit")
    print(f"\nscreenshots of the pit page: {shots}")
    rated = simulated_journal(tmp_path / "rated.db", seed=7, rounds=12, rating=True, payout_errors=0.4)
    second = simulated_journal(tmp_path / "second.db", seed=21, rounds=4, mistakes=0.5)
    dsn = postgres.create("pit_browser")
    published = public(rated)
    half = next(i for i, r in enumerate(published) if r["type"] == "RoundClosed" and r["round"] == 6)
    store(dsn, RATED, published[:half + 1])
    store(dsn, SECOND, public(second))
    with pit_served(dsn, tmp_path, day_start_for(rated + second), every=0.5) as server:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(PATIENCE_MS)
        page.goto(server.url + "/")
        page.wait_for_selector("#columns th", state="attached")  # the labels are read
        _sign_in(page, "dan")
        page.wait_for_selector("#sign-in-answer:has-text('needs a supervisor; user dan has the role dealer')")
        assert page.is_hidden("#pit")
        _sign_in(page, "sue")
        page.wait_for_selector("#who:has-text('signed in: sue')")
        page.wait_for_selector("#sign-in", state="hidden")
        for table in (RATED, SECOND):
            page.wait_for_selector(f"#rows tr[data-table='{table}']")
        page.wait_for_selector("#link:has-text('live')")
        before = meters_at(tmp_path / "rated.db", published[half]["seq"])
        assert int(_value(page, RATED, "drop")) == before["drop"] and int(_value(page, RATED, "rounds")) == 6
        drop_text = page.inner_text(f"#rows tr[data-table='{RATED}'] td[data-key='drop']")
        assert drop_text == f"${before['drop'] // 100:,}.{before['drop'] % 100:02d}"  # the screen's money format
        page.screenshot(path=shots / "1-signed-in.png")

        store(dsn, RATED, published[half + 1:])  # the rest of the table's play reaches the store
        after = meters_at(tmp_path / "rated.db", published[-1]["seq"])
        assert after["drop"] > before["drop"]
        page.wait_for_function("([table, drop]) => { const cell = document.querySelector("
                               "`#rows tr[data-table='${table}'] td[data-key=drop]`); "
                               "return cell && cell.dataset.value === String(drop); }", arg=[RATED, after["drop"]])
        assert int(_value(page, RATED, "rounds")) == after["rounds"] == 12
        assert int(_value(page, RATED, "win")) == after["win"]
        assert _value(page, RATED, "state") == '"closed"'
        page.screenshot(path=shots / "2-live.png")

        page.click(f"#rows tr[data-table='{RATED}'] td[data-key='state']")
        page.wait_for_selector(f"#report-title:has-text('{RATED}: Gaming day')")
        page.wait_for_selector(f"#figures dd[data-key=drop][data-value='{after['drop']}']")
        assert page.get_attribute("#figures dd[data-key=rounds]", "data-value") == "12"
        page.wait_for_selector("#plot svg")  # shown; its lines hold one point a gaming day (one here: no length)
        assert page.locator("#plot svg polyline.actual").count() == page.locator("#plot svg polyline.theoretical"
                                                                                 ).count() == 1
        assert RATED in page.text_content("#plot svg title")
        page.screenshot(path=shots / "3-report.png")

        page.click("#periods button[data-period=lifetime]")
        page.wait_for_selector(f"#report-title:has-text('{RATED}: Lifetime')")
        page.wait_for_selector("#periods button[data-period=lifetime][aria-pressed=true]")
        page.wait_for_function("() => (document.querySelector('#plot svg title') || {}).textContent"
                               "?.includes('lifetime')")
        page.screenshot(path=shots / "4-lifetime.png")

        page.click("#sign-out")
        page.wait_for_selector("#sign-in:not([hidden])")
        assert page.locator("#rows tr").count() == 0 and page.is_hidden("#report")


def test_a_killed_store_shows_silent_and_every_rows_figures_stale(postgres, mosquitto, browser, tmp_path):  # noqa: F811
    shots = artifacts("pit-store")
    print(f"\nscreenshots of the pit page: {shots}")
    dsn = postgres.create("pit_browser_health")
    process = _store_process(mosquitto.port, dsn)
    publisher = Publisher(mosquitto.port)
    try:
        wait_until(lambda: health_row_written(dsn) and health(dsn)["state"] == "writing", 60, "the store writing")
        publisher.send("T-1", (1, 0), (2, 1))
        wait_until(lambda: _last_seq(dsn, "T-1") == 2, 60, "the table's records stored")
        with pit_served(dsn, tmp_path, day_start(), silent_after=SHORT) as server:
            page = _signed_in_page(browser, server)
            page.wait_for_selector("#health.writing:has-text('store writing')")
            page.wait_for_selector("#rows tr[data-table='T-1'] td[data-key='store']:text-is('complete')")
            assert "crisscross-store-store" in page.inner_text("#health-state")
            assert not page.locator("#tables.stale").count()
            page.screenshot(path=shots / "1-writing.png")

            process.send_signal(signal.SIGKILL)
            process.wait(30)
            page.wait_for_selector("#health.down:has-text('store silent')")
            page.wait_for_selector("#health-state[role=alert]:has-text('The figures may be stale')")
            assert page.inner_text("#health-state").startswith("store silent for ")
            page.wait_for_selector("#rows tr[data-table='T-1'] td[data-key='store']:text-is('store silent; complete')")
            assert page.locator("#tables.stale").count() == 1
            page.wait_for_selector("#link:has-text('live')")  # the database itself is read: only the store is gone
            page.screenshot(path=shots / "2-silent.png")
    finally:
        publisher.close()
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_a_server_that_stops_answering_shows_the_page_not_live_until_it_answers(postgres, browser, tmp_path):  # noqa: F811
    """docs/backoffice.md, "Live": a request the server does not answer within 5 s (pit.js ``ANSWER_S``) is given
    up; the link says so, the store's health is unknown (the server says nothing of it) and the figures greyed."""
    shots = artifacts("pit-silent")
    print(f"\nscreenshots of the pit page: {shots}")
    dsn = postgres.create("pit_browser_silent")
    store(dsn, "T-1", [{"seq": 1, "time": "2026-01-01T00:00:00+00:00", "kind": "event", "round": None,
                        "type": "ServiceStarted", "data": {}}])
    with pit_served(dsn, tmp_path, day_start()) as server:
        page = _signed_in_page(browser, server)
        page.wait_for_selector("#rows tr[data-table='T-1']")
        page.wait_for_selector("#link.up:has-text('live')")
        assert "does not answer" not in page.inner_text("#health-state")
        with held(server._loop):  # noqa: SLF001 - the one loop that answers every request
            page.wait_for_selector("#link.down:has-text('no answer from the server')")
            page.wait_for_selector("#health.unknown:has-text('store health unknown')")
            assert "the page's server does not answer" in page.inner_text("#health-state")
            assert page.locator("#tables.stale").count() == 1
            page.screenshot(path=shots / "1-no-answer.png")
        page.wait_for_selector("#link.up:has-text('live')")
        page.wait_for_function("() => !document.getElementById('health-state').textContent.includes('does not')")
        page.screenshot(path=shots / "2-back.png")


def test_a_page_loaded_as_the_server_stops_answering_says_so_and_signs_in_once_it_answers(  # noqa: F811
        postgres, browser, tmp_path):
    """docs/backoffice.md, "Live": the page's first request (``GET /api/labels``, the columns) is given up after
    5 s (pit.js ``ANSWER_S``) when the server stops answering just after it served the page (its loop blocked, as
    ``kill -STOP`` leaves it); the link says so, a sign-in meanwhile signs nobody in and never puts the password in
    the page's address, and the page reads the labels once the server answers."""
    dsn = postgres.create("pit_browser_labels")
    store(dsn, "T-1", [{"seq": 1, "time": "2026-01-01T00:00:00+00:00", "kind": "event", "round": None,
                        "type": "ServiceStarted", "data": {}}])
    with pit_served(dsn, tmp_path, day_start()) as server:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(PATIENCE_MS)
        labels = first_request(page, "**/api/labels", server.url + "/")  # held until the server is stopped
        with held(server._loop):  # noqa: SLF001 - the one loop that answers every request
            labels.continue_()  # sent to the stopped server
            page.wait_for_selector("#link.down:has-text('no answer from the server')")
            _sign_in(page, "sue")
            page.wait_for_selector("#sign-in-answer:has-text('not signed in')")
            assert "password" not in page.url and page.is_hidden("#pit")
        page.wait_for_selector("#columns th", state="attached")  # read once the server answers
        _sign_in(page, "sue")
        page.wait_for_selector("#rows tr[data-table='T-1']")
        page.wait_for_selector("#link.up:has-text('live')")
