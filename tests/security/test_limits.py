"""Limits: message size, rate per principal, the executor cap, run-time and inactivity limits.

Load is made by a bounded number of concurrent clients on loopback; every
request must be answered exactly once, with either its result or the
refusal in the caller's dialect.
"""

from __future__ import annotations

import asyncio
import base64
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from interlingua import Agent, Context
from interlingua.core.errors import RateLimitExceeded
from interlingua.server.auth import APIKeyAuth, AuthConfig, Limits, RateLimit, RateLimiter

from .helpers import RATE_LIMITED, UNAVAILABLE, send_request, serve_agent

ALICE = {"X-API-Key": "alice-" + "a" * 20}
BOB = {"X-API-Key": "bob-" + "b" * 20}
V1 = {"A2A-Version": "1.0"}


def two_keys() -> AuthConfig:
    return AuthConfig(schemes={"key": APIKeyAuth({"alice": ALICE["X-API-Key"],
                                                  "bob": BOB["X-API-Key"]})})


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def _echo(text: str) -> str:
    return text


# ------------------------------------------------------------------ rate limit


def test_token_bucket() -> None:
    clock = FakeClock()
    limiter = RateLimiter(RateLimit(rate=2, burst=3), clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [None, None, None]
    assert limiter.take("a") == pytest.approx(0.5)
    assert limiter.take("b") is None  # buckets are per key
    clock.now += 0.5
    assert limiter.take("a") is None
    assert limiter.take("a") == pytest.approx(0.5)
    clock.now += 100
    assert [limiter.take("a") for _ in range(4)][-1] is not None  # never more than burst
    with pytest.raises(RateLimitExceeded) as err:
        limiter.check("a")
    assert err.value.retry_after == 1  # type: ignore[attr-defined]


async def _concurrently(url: str, bodies: list[tuple[dict[str, Any], dict[str, str]]],
                        width: int = 16) -> list[httpx.Response]:
    sem = asyncio.Semaphore(width)
    async with httpx.AsyncClient(timeout=30) as client:
        async def one(body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
            async with sem:
                return await client.post(url + "/", json=body, headers=headers)

        return list(await asyncio.gather(*(one(b, h) for b, h in bodies)))


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
async def test_rate_limit_under_load(dialect: str) -> None:
    clock = FakeClock()
    limits = Limits(rate_limit=RateLimit(rate=5, burst=10), clock=clock)
    agent = Agent("Echo", "Echoes.", _echo)
    with serve_agent(agent, auth=two_keys(), limits=limits) as url:
        bodies = []
        for i in range(40):
            body, headers = send_request(dialect, f"n{i}")
            body["id"] = f"req-{i}"
            bodies.append((body, {**ALICE, **headers}))
        answers = await _concurrently(url, bodies)
        # every request answered once, by id
        assert sorted(r.json()["id"] for r in answers) == sorted(b["id"] for b, _ in bodies)
        ok = [r for r in answers if r.status_code == 200]
        limited = [r for r in answers if r.status_code == 429]
        assert len(ok) == 10 and len(limited) == 30  # the clock stood still: the burst only
        assert all("result" in r.json() for r in ok)
        for r in limited:
            assert r.json()["error"]["code"] == RATE_LIMITED[dialect]
            assert r.headers["retry-after"] == "1"
            assert "Rate limit exceeded" in r.json()["error"]["message"]
        # another principal has its own bucket: still served
        body, headers = send_request(dialect, "bob")
        again = await _concurrently(url, [(body, {**BOB, **headers})])
        assert again[0].status_code == 200
        # time passes: alice has 5 more tokens
        clock.now += 1.0
        more = await _concurrently(url, [(send_request(dialect, f"m{i}")[0],
                                          {**ALICE, **headers}) for i in range(8)])
        assert sorted(r.status_code for r in more) == [200] * 5 + [429] * 3


def test_failed_credentials_are_rate_limited_by_address() -> None:
    clock = FakeClock()
    limits = Limits(rate_limit=RateLimit(rate=1, burst=3), clock=clock)
    with serve_agent(Agent("Echo", "d", _echo), auth=two_keys(), limits=limits) as url, \
            httpx.Client() as c:
        body, headers = send_request("1.0")
        codes = [c.post(url + "/", json=body, headers={"X-API-Key": "x" * 20, **headers})
                 .status_code for _ in range(5)]
        assert codes == [401, 401, 401, 429, 429]


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
def test_each_request_of_a_batch_spends_a_token(dialect: str) -> None:
    """A batch of n requests is n requests to the rate limit: those within the
    principal's tokens run, each later one gets the error a lone request would get (with
    its "retry in N s"), as its own answer in the array; the batch's credentials are
    checked once (a batch of 100 sends paid one token and made 100 tasks)."""
    clock = FakeClock()
    limits = Limits(rate_limit=RateLimit(rate=0.2, burst=3), clock=clock)
    agent = Agent("Echo", "Echoes.", _echo)
    with serve_agent(agent, auth=two_keys(), limits=limits) as url,             httpx.Client(timeout=30) as c:
        _, headers = send_request(dialect)
        def batch(n: int) -> list[dict[str, Any]]:
            """``n`` sends, with ids 0, 1, …"""
            out = [send_request(dialect, f"n{i}")[0] for i in range(n)]
            for i, body in enumerate(out):
                body["id"] = i
            return out

        r = c.post(url + "/", json=batch(5), headers={**ALICE, **headers})
        assert r.status_code == 200, r.text
        answers = r.json()
        assert [a["id"] for a in answers] == [0, 1, 2, 3, 4]
        assert all("result" in a for a in answers[:3]), answers[:3]
        for a in answers[3:]:
            assert a["error"]["code"] == RATE_LIMITED[dialect], a
            assert "Rate limit exceeded" in a["error"]["message"], a
            assert "retry in 5 s" in a["error"]["message"], a
        # the same refusal as a lone request gets, now that the tokens are spent
        lone = c.post(url + "/", json=send_request(dialect)[0], headers={**ALICE, **headers})
        assert lone.status_code == 429 and lone.headers["retry-after"] == "5"
        assert lone.json()["error"] == {**answers[3]["error"]}, (lone.json(), answers[3])
        # a batch with no token left is refused whole (429, an error each), as before
        r = c.post(url + "/", json=batch(2), headers={**ALICE, **headers})
        assert r.status_code == 429
        assert [a["error"]["code"] for a in r.json()] == [RATE_LIMITED[dialect]] * 2
        # bob's bucket is his own
        r = c.post(url + "/", json=batch(2), headers={**BOB, **headers})
        assert r.status_code == 200 and all("result" in a for a in r.json()), r.json()
        # a token comes back every 5 s: one of two runs
        clock.now += 5.0
        r = c.post(url + "/", json=batch(2), headers={**ALICE, **headers})
        assert r.status_code == 200
        assert ["result" in a for a in r.json()] == [True, False], r.json()


def test_a_batch_of_a_hundred_sends_makes_as_many_tasks_as_it_has_tokens() -> None:
    """The reported case: three batches of 100 SendMessage under a burst of 3 made 300
    tasks; now they make three, and every other send is refused."""
    clock = FakeClock()
    limits = Limits(rate_limit=RateLimit(rate=0.2, burst=3), clock=clock)
    agent = Agent("Echo", "Echoes.", _echo)
    context = str(uuid.uuid4())
    with serve_agent(agent, auth=two_keys(), limits=limits) as url,             httpx.Client(timeout=60) as c:
        refused = 0
        for _ in range(3):
            batch = []
            for i in range(100):
                body, headers = send_request("1.0", f"n{i}")
                body["id"] = i
                body["params"]["message"]["contextId"] = context
                batch.append(body)
            r = c.post(url + "/", json=batch, headers={**ALICE, **headers})
            answers = r.json()
            assert isinstance(answers, list) and len(answers) == 100, r.text
            refused += sum("error" in a for a in answers)
        assert refused == 297
        clock.now += 100  # a token to read with
        listed = c.post(url + "/", headers={**ALICE, **V1}, json={
            "jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"contextId": context}})
        assert len(listed.json()["result"]["tasks"]) == 3, listed.text


# ---------------------------------------------------------------- executor cap


class Gate:
    """Holds executors until released; counts how many run at once."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.running = 0
        self.peak = 0
        self.started = 0

    async def __call__(self, ctx: Context) -> None:
        self.running += 1
        self.started += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.to_thread(self.release.wait, 20)
        finally:
            self.running -= 1
        await ctx.complete("released")


@pytest.mark.parametrize("dialect", ["1.0", "0.1"])
async def test_executor_cap_rejects(dialect: str) -> None:
    gate = Gate()
    limits = Limits(max_running=2, when_busy="reject")
    with serve_agent(Agent("Gate", "d", gate), auth=two_keys(), limits=limits) as url:
        bodies = []
        for i in range(8):
            body, headers = send_request(dialect, f"n{i}")
            body["id"] = f"req-{i}"
            bodies.append((body, {**ALICE, **headers}))
        async with httpx.AsyncClient(timeout=30) as client:
            sends = [asyncio.ensure_future(client.post(url + "/", json=b, headers=h))
                     for b, h in bodies]
            # Two run and hold their answers; the other six are refused while they do.
            answered: set[asyncio.Future[httpx.Response]] = set()
            held = set(sends)
            async with asyncio.timeout(20):
                while len(answered) < 6 or gate.started < 2:
                    done, held = await asyncio.wait(held, timeout=0.05,
                                                    return_when=asyncio.FIRST_COMPLETED)
                    answered |= done
            assert len(held) == 2 and gate.running == 2
            gate.release.set()
            answers = list(await asyncio.gather(*sends))
        assert sorted(r.json()["id"] for r in answers) == sorted(b["id"] for b, _ in bodies)
        done = [r.json() for r in answers if "result" in r.json()]
        refused = [r.json() for r in answers if "error" in r.json()]
        assert len(done) == 2 and len(refused) == 6
        assert all(r.status_code == 200 for r in answers)
        for doc in refused:
            assert doc["error"]["code"] == UNAVAILABLE[dialect]
            assert doc["error"]["message"] == "The agent is busy (2 tasks running); try again later"
        assert gate.peak == 2 and gate.started == 2
        # refused sends made no task; the server serves again once there is room
        async with httpx.AsyncClient() as c:
            body, headers = send_request("1.0", "after")
            r = await c.post(url + "/", json=body, headers={**ALICE, **headers})
            assert r.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            listed = await c.post(url + "/", json={"jsonrpc": "2.0", "id": 1,
                                                   "method": "ListTasks", "params": {}},
                                  headers={**ALICE, **V1})
            assert listed.json()["result"]["totalSize"] == 3


async def test_executor_cap_refusal_names_its_error_over_v03_http_json() -> None:
    """v0.3's HTTP+JSON names every error but an auth refusal by its type and code:
    the busy refusal too, as JSON-RPC names it (-32603), with its 503; the client
    reads it as the agent being unavailable."""
    from interlingua.client import Client
    from interlingua.core.errors import ResourceUnavailable

    gate = Gate()
    limits = Limits(max_running=1, when_busy="reject")

    def send(text: str) -> dict[str, Any]:
        return {"request": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                            "content": [{"text": text}]}}

    with serve_agent(Agent("Gate", "d", gate), auth=two_keys(), limits=limits) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            held = asyncio.ensure_future(c.post(url + "/v1/message:send", json=send("a"),
                                                headers=ALICE))
            async with asyncio.timeout(20):
                while gate.started < 1:
                    await asyncio.sleep(0.01)
            r = await c.post(url + "/v1/message:send", json=send("b"), headers=ALICE)
            assert r.status_code == 503, r.text
            assert r.json() == {"code": -32603, "type": "InternalError", "message":
                                "The agent is busy (1 tasks running); try again later"}
            async with Client(url, headers=ALICE, binding="rest", dialect="0.3") as client:
                with pytest.raises(ResourceUnavailable, match="agent is busy"):
                    await client.send("c")
            gate.release.set()
            assert (await held).status_code == 200


async def test_executor_cap_queues() -> None:
    gate = Gate()
    limits = Limits(max_running=2, when_busy="queue", max_queued=3)
    with serve_agent(Agent("Gate", "d", gate), auth=two_keys(), limits=limits) as url:
        bodies = []
        for i in range(8):
            body, headers = send_request("1.0", f"n{i}",
                                         configuration={"returnImmediately": True})
            body["id"] = f"req-{i}"
            bodies.append((body, {**ALICE, **headers}))
        answers = await _concurrently(url, bodies)
        accepted = [r.json()["result"]["task"]["id"] for r in answers if "result" in r.json()]
        refused = [r.json() for r in answers if "error" in r.json()]
        assert len(accepted) == 5 and len(refused) == 3
        assert refused[0]["error"]["message"] == \
            "The agent is busy (2 tasks running and 3 waiting); try again later"
        # Each answer came after its turn was scheduled: a turn that did not wait
        # for a slot would have started by now.
        async with asyncio.timeout(20):
            while gate.started < 2:
                await asyncio.sleep(0.01)
        assert gate.running == 2 and gate.started == 2  # the other three wait their turn
        gate.release.set()
        async with httpx.AsyncClient() as c:
            for _ in range(200):
                states = []
                for tid in accepted:
                    r = await c.post(url + "/", json={"jsonrpc": "2.0", "id": 1,
                                                      "method": "GetTask",
                                                      "params": {"id": tid}},
                                     headers={**ALICE, **V1})
                    states.append(r.json()["result"]["status"]["state"])
                if all(s == "TASK_STATE_COMPLETED" for s in states):
                    break
                await asyncio.sleep(0.05)
            assert states == ["TASK_STATE_COMPLETED"] * 5
        assert gate.peak == 2 and gate.started == 5


# ------------------------------------------------------------------- timeouts


async def _sleepy(ctx: Context) -> None:
    if ctx.text == "silent":  # reports nothing at all, not even that it started
        await asyncio.sleep(5)
    elif ctx.text == "quiet":
        await ctx.update("started")
        await asyncio.sleep(5)
    elif ctx.text == "chatty":
        for i in range(8):
            await ctx.update(f"step {i}")
            await asyncio.sleep(0.1)
        await ctx.complete("chatted")
    else:
        await ctx.update("long")
        for _ in range(50):
            await ctx.update("still going")
            await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
def timed_url() -> Iterator[str]:
    limits = Limits(run_timeout=1.2, idle_timeout=0.4)
    with serve_agent(Agent("Sleepy", "d", _sleepy), limits=limits) as url:
        yield url


def _final(url: str, dialect: str, text: str) -> tuple[str, str]:
    body, headers = send_request(dialect, text)
    with httpx.Client(timeout=20) as c:
        doc = c.post(url + "/", json=body, headers=headers).json()
    result = doc["result"]
    task = result["task"] if dialect == "1.0" else result
    msg = task["status"].get("message")
    return task["status"]["state"], msg["parts"][0]["text"] if msg else ""


@pytest.mark.parametrize(("dialect", "text"), [("1.0", "quiet"), ("0.1", "quiet"),
                                               ("1.0", "silent")])
def test_inactivity_timeout(timed_url: str, dialect: str, text: str) -> None:
    state, text = _final(timed_url, dialect, text)
    assert state in ("failed", "TASK_STATE_FAILED")
    assert text == "The agent reported nothing for 0.4 s (inactivity timeout)"


def test_activity_keeps_a_turn_alive(timed_url: str) -> None:
    assert _final(timed_url, "1.0", "chatty") == ("TASK_STATE_COMPLETED", "chatted")


def test_run_timeout(timed_url: str) -> None:
    state, text = _final(timed_url, "0.3", "forever")
    assert state == "failed"
    assert text == "The agent did not finish within 1.2 s (run timeout)"


# ------------------------------------------------------------------ message size


@pytest.mark.parametrize("dialect", ["1.0", "0.3", "0.1"])
def test_message_limits(dialect: str) -> None:
    limits = Limits(max_parts=3, max_inline_file_bytes=1000)
    with serve_agent(Agent("Echo", "d", _echo), limits=limits, max_body_bytes=20_000) as url, \
            httpx.Client() as c:
        body, headers = send_request(dialect)
        parts = body["params"]["message"]["parts"]
        body["params"]["message"]["parts"] = parts * 4
        r = c.post(url + "/", json=body, headers=headers)
        assert r.status_code == 200 and r.json()["error"]["code"] == -32602
        assert r.json()["error"]["message"] == (
            "Invalid params: message.parts has 4 parts; this agent accepts at most 3 per message")
        raw = base64.b64encode(b"x" * 2000).decode()
        file_part = {"1.0": {"raw": raw, "mediaType": "text/plain"},
                     "0.3": {"kind": "file", "file": {"bytes": raw, "mimeType": "text/plain"}},
                     "0.1": {"type": "file", "file": {"bytes": raw, "mimeType": "text/plain"}}}
        body, headers = send_request(dialect)
        body["params"]["message"]["parts"].append(file_part[dialect])
        r = c.post(url + "/", json=body, headers=headers)
        assert r.json()["error"]["code"] == -32602
        assert "inline files hold 2000 bytes" in r.json()["error"]["message"]
        big, headers = send_request(dialect, "x" * 30_000)
        r = c.post(url + "/", json=big, headers=headers)
        assert r.status_code == 413
        assert "larger than the limit of 20000 bytes" in r.json()["error"]["message"]
        ok = c.post(url + "/", json=send_request(dialect, str(uuid.uuid4()))[0], headers=headers)
        assert ok.status_code == 200 and "result" in ok.json()


def test_limits_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="when_busy"):
        Limits(when_busy="drop")
    with pytest.raises(ValueError, match="max_running"):
        Limits(max_running=0)
    with pytest.raises(ValueError, match="run_timeout"):
        Limits(run_timeout=-1)
    with pytest.raises(ValueError, match="idle_timeout"):
        Limits(idle_timeout=float("nan"))
    with pytest.raises(ValueError, match="max_queued"):
        Limits(max_queued=-1)
    # where it is given, not only once a server builds its limiter
    for rate, burst in ((0.0, 1), (-1.0, 1), (1.0, 0), (float("nan"), 1)):
        with pytest.raises(ValueError, match="rate > 0 and burst >= 1"):
            RateLimit(rate=rate, burst=burst)
