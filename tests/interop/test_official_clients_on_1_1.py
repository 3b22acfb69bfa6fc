"""The official 1.x SDK clients against an interlingua agent whose card offers A2A 1.1
(draft): its v1.0 interfaces name protocol version 1.1 (``serve --offer-1.1``).

Neither a2a-sdk 1.3.0 nor @a2a-js/sdk 1.3.0 knows 1.1. Both pick such an interface
(a2a-sdk takes a version above 1.0 when it finds no 1.0; @a2a-js/sdk the binding's
first interface when none says 1.0) and speak 1.0 to it, with ``A2A-Version: 1.0``;
the agent answers them in 1.0. Checked here for every 1.x client row: the card, a
send, a stream and a read, as ``test_official_clients.py`` checks them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.procs import free_port

from .conftest import CLIENT_ROWS, client_argv
from .content import DATA, FILE_ARG, FILE_NAME, STREAM_CHUNKS, TEXT, check_stream_events
from .harness import Driver, InterlinguaProcess, PeerError, ensure_env, running, state_name
from .matrix import Row

pytestmark = pytest.mark.interop

#: the rows of the 1.x SDKs (each in its 1.0 and its v0.3 compatibility dialect)
ROWS_1X = [r for r in CLIENT_ROWS if r.env in ("py-a2a-1.3.0", "js-1.3.0")]


@pytest.fixture(scope="module")
def offering() -> Iterator[str]:
    with running(InterlinguaProcess("tests/interop/agent.py:agent", free_port(),
                                    extra=("--offer-1.1",))) as server:
        yield server.url


@pytest.fixture(params=ROWS_1X, ids=[r.id for r in ROWS_1X])
def driver(request: pytest.FixtureRequest, offering: str) -> Iterator[Driver]:
    row: Row = request.param
    env = ensure_env(row.env)
    driver = Driver(row.id + "-on-1.1", client_argv(row, env, offering))
    try:
        try:
            driver.wait_ready()
        except PeerError as exc:
            pytest.fail(f"the {row.id} client did not start against a card offering 1.1: "
                        f"{exc}")
        driver.row = row  # type: ignore[attr-defined]
        yield driver
    finally:
        driver.close()


def test_the_card_offers_1_1_and_no_1_0(offering: str) -> None:
    card = httpx.get(offering + "/.well-known/agent-card.json", timeout=10).json()
    versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
    assert "1.1" in versions and "1.0" not in versions, versions


def test_a_1x_client_connects_and_speaks_1_0_or_its_compat_dialect(driver: Driver) -> None:
    row: Row = driver.row  # type: ignore[attr-defined]
    transport = driver.call("info").value()["transport"]
    compat = re.search("Compat|Legacy", transport) is not None
    assert compat == (row.dialect == "0.3"), transport

    task = driver.call("send", text=TEXT, data=DATA, file=FILE_ARG).value()
    assert task["kind"] == "task" and state_name(task["state"]) == "completed", task
    assert [a["name"] for a in task["artifacts"]] == ["echo"]
    names = [p.get("name") or p.get("filename") for p in task["artifacts"][0]["parts"]]
    assert FILE_NAME in names or "" in names or None in names

    events = driver.call("stream", text=f"stream {STREAM_CHUNKS}").value()["events"]
    # (the known append bug of @a2a-js/sdk's v0.3 HTTP+JSON client: test_official_clients.py)
    task_id = check_stream_events(events, append_dropped=row.id == "js-1.3.0-v03-rest")
    got = driver.call("get", taskId=task_id).value()
    assert got["id"] == task_id and state_name(got["state"]) == "completed"
