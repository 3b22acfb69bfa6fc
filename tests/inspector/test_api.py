"""The inspector's server API over real HTTP on loopback, without a browser."""

from __future__ import annotations

import base64
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from interlingua.core.dialects.card_checks import check_card

from .inspect_api import InspectorAPI
from .servers import API_KEY, ReportAgent, Served, agent_app, example

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def api(inspector: Served) -> Iterator[InspectorAPI]:
    client = InspectorAPI(inspector.url)
    client.config()  # the session's cookie
    try:
        yield client
    finally:
        client.close()


def _frames(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["frame"] for e in entries if e["kind"] == "frame" and e["frame"]["done"]]


def _events(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e["kind"] == "event"]


# ---------------------------------------------------------------- the card


def test_connect_reads_the_card_checks_each_generation_and_picks_an_endpoint(api, story):
    info = api.connect(story.url)
    assert info["endpoint"] == {"url": story.url + "/", "dialect": "1.0", "binding": "JSONRPC"}
    card = info["card"]
    assert card["name"] == "Storyteller"
    assert [(c["version"], c["ok"]) for c in card["checks"]] == [("1.0", True), ("0.2/0.3", True)]
    assert card["signature"]["status"] == "unsigned"
    assert {(i["binding"], i["protocolVersion"]) for i in card["interfaces"]} == {
        ("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3"), ("HTTP+JSON", "0.3")}
    assert all(i["spoken"] for i in card["interfaces"])
    assert json.loads(card["document"])["name"] == "Storyteller"


def test_card_checks_name_what_each_version_misses():
    v01 = {"name": "Old", "version": "1", "capabilities": {}, "skills": [{"id": "s"}],
           "authentication": {"schemes": []}}
    (report,) = check_card(v01)
    assert report["version"] == "0.1" and not report["ok"]
    assert "card: the required member 'url' is missing" in report["problems"]
    assert "skills[0]: the required member 'name' is missing" in report["problems"]
    v10 = {"name": "New", "description": "d", "version": "1", "capabilities": {},
           "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
           "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC"}]}
    (report,) = check_card(v10)
    assert report["problems"] == [
        "supportedInterfaces[0]: the required member 'protocolVersion' is missing"]
    (report,) = check_card({**v10, "supportedInterfaces": [
        {"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
    # valid, but an empty skill list is warned of
    assert report["ok"] and report["problems"] == []
    assert [w.split(":")[0] for w in report["warnings"]] == ["skills is empty"]
    assert check_card([])[0]["problems"] == ["the card is not a JSON object"]


def test_an_agent_without_skills_serves_a_card_with_one(api):
    """An agent that declares no skill lists one made from its name and description,
    so its card draws no warning (an empty list does: ``check_card`` above)."""
    from interlingua import Agent
    from tests.live import live_agent

    async def quiet(text: str) -> str:
        return text

    with live_agent(Agent("Quiet", "Lists no skills.", quiet)) as url:
        checks = api.connect(url)["card"]["checks"]
    assert [(c["version"], c["ok"]) for c in checks] == [("1.0", True), ("0.2/0.3", True)]
    assert all(c["warnings"] == [] for c in checks), checks
    # the smallest example lists one
    with live_agent(example("echo").agent) as url:
        checks = api.connect(url)["card"]["checks"]
    assert all(c["ok"] and c["warnings"] == [] for c in checks)


def test_a_grpc_interface_is_shown_as_a_grpc_address(api):
    from tests.live import live_grpc_agent

    with live_grpc_agent(example("echo").agent) as (url, target):
        card = api.connect(url)["card"]
    grpc = [i for i in card["interfaces"] if i["binding"] == "GRPC"]
    assert {i["url"] for i in grpc} == {f"grpc://{target}"}
    assert {i["protocolVersion"] for i in grpc} == {"1.0", "0.3"}


def test_the_icon_is_served(inspector):
    icon = httpx.get(inspector.url + "/favicon.ico", timeout=10)
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg")
    page = httpx.get(inspector.url + "/", timeout=10).text
    assert '<link rel="icon" href="static/favicon.svg"' in page
    assert httpx.get(inspector.url + "/static/favicon.svg", timeout=10).content == icon.content


def _tamperer(secure: Any, card_path: str) -> Served:
    """A server of ``secure``'s card changed after signing, at ``card_path``, and of its
    keys at the origin's root."""
    real = httpx.get(secure.url + "/.well-known/agent-card.json").json()
    keys = httpx.get(secure.url + "/.well-known/jwks.json").json()
    forged = {**real, "description": "Reads your calendar, and sends it to me."}

    async def card(request: Any) -> Response:
        return JSONResponse(forged)

    async def jwks(request: Any) -> Response:
        return JSONResponse(keys)

    return Served(Starlette(routes=[Route(card_path, card),
                                    Route("/.well-known/jwks.json", jwks)]))


def test_a_signed_card_verifies_and_a_tampered_one_does_not(api, secure):
    info = api.connect(secure.url)
    assert info["card"]["signature"]["status"] == "verified", info["card"]["signature"]
    tamperer = _tamperer(secure, "/.well-known/agent-card.json")
    try:
        info = api.connect(tamperer.url)
    finally:
        tamperer.stop()
    signature = info["card"]["signature"]
    assert signature["status"] == "invalid"
    assert "not trusted" in signature["message"]


def test_an_untrusted_card_names_the_keys_it_was_checked_with(api, secure):
    """A changed card below a path, the keys at the origin's root only: the verdict named
    the JWKS beside the card (which answered 404), not the one whose keys refused it."""
    tamperer = _tamperer(secure, "/a/.well-known/agent-card.json")
    try:
        info = api.connect(tamperer.url + "/a/")
    finally:
        tamperer.stop()
    signature = info["card"]["signature"]
    assert signature["status"] == "invalid", signature
    assert "does not match the card" in signature["message"]
    assert signature["jwksUrl"] == tamperer.url + "/.well-known/jwks.json"


def test_bad_input_gets_a_clear_message(api):
    r = api.post("api/connect", {"url": "ftp://example.com/"})
    assert r.status_code == 400 and "not an http:// or https:// URL" in r.json()["error"]
    for url, said in (("http://[::1/", "is not a URL"),  # the user's to mend, not a 502
                      ("http://127.0.0.1:99999/", "has no valid port (0-65535)")):
        r = api.post("api/connect", {"url": url})
        assert r.status_code == 400 and said in r.json()["error"], r.text
    r = api.post("api/send", {"text": "hi"})
    assert r.status_code == 400 and r.json()["error"] == "connect to an agent first"
    r = api.http.post("api/connect", content=b"url=x",
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    r = api.http.post("api/connect", content=b"[" * 5000 + b"]" * 5000,
                      headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "nested too deeply" in r.json()["error"], r.text
    r = api.post("api/connect", {"url": "http://127.0.0.1:9/", "dialect": "2.0"})
    assert r.status_code == 400 and "unknown dialect '2.0'" in r.json()["error"]

    info = api.connect("http://127.0.0.1:9/")
    # (the AgentUnreachable that says nothing was sent, a port nothing listens at)
    assert "cannot reach" in info["error"] and "(NotConnected)" in info["error"]

    async def not_a_card(request: Any) -> Response:
        return JSONResponse({"hello": "world"})

    elsewhere = Served(Starlette(routes=[Route("/.well-known/agent-card.json", not_a_card)]))
    try:
        info = api.connect(elsewhere.url)
    finally:
        elsewhere.stop()
    assert "InvalidCard" in info["error"]
    problems = info["card"]["checks"][0]["problems"]
    assert "card: the required member 'name' is missing" in problems


def test_a_card_nested_too_deeply_is_said_to_be_one(api):
    """The client said so (InvalidCard); the inspector's own reading of the document,
    to show what is wrong with it, failed with a RecursionError: a 500."""
    async def deep(request: Any) -> Response:
        return Response(b"[" * 100_000 + b"]" * 100_000, media_type="application/json")

    elsewhere = Served(Starlette(routes=[Route("/.well-known/agent-card.json", deep)]))
    try:
        r = api.post("api/connect", {"url": elsewhere.url})
    finally:
        elsewhere.stop()
    assert r.status_code == 200, r.text[:300]
    info = r.json()
    assert "InvalidCard" in info["error"] and "nested too deeply" in info["error"]
    assert info["card"]["checks"][0]["problems"] == ["the card is JSON nested too deeply to read"]


@pytest.mark.parametrize("dialect", [None, "1.0"])
def test_a_card_interface_no_agent_is_at_is_shown_not_spoken(api, story, dialect):
    """An interface whose URL has a port past 65535 (or a bracket left open): the card
    is shown, that interface as the card names it and not spoken, and the one that
    works is used. (The client raised a ValueError out of reading the card: a 500.)"""
    broken = ["http://[::1", "http://127.0.0.1:99999/"]

    async def card(request: Any) -> Response:
        document = json.loads(httpx.get(story.url + "/.well-known/agent-card.json").text)
        document["supportedInterfaces"][:0] = [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            for url in broken]
        return JSONResponse(document)

    elsewhere = Served(Starlette(routes=[Route("/.well-known/agent-card.json", card)]))
    try:
        r = api.post("api/connect", {"url": elsewhere.url, "dialect": dialect})
    finally:
        elsewhere.stop()
    assert r.status_code == 200, r.text[:300]
    info = r.json()
    assert "error" not in info, info["error"]
    shown = {i["url"]: i["spoken"] for i in info["card"]["interfaces"]}
    assert all(shown[url] is False for url in broken)
    if dialect is None:
        assert info["endpoint"]["url"] == story.url + "/"


def test_a_password_in_the_agents_url_is_refused_not_used_and_not_shown(api, story):
    """Before: httpx called the agent with the URL's user and password (Basic), not the
    bearer token chosen in the form, while the page showed the password in the URL, the
    frames and their curl lines."""
    host = story.url.removeprefix("http://")
    for url in (f"http://alice:s3cretpw@{host}/", f"http://alice@{host}/",
                f"http://alice:s3cret/pw@{host}/"):  # (a slash unescaped: no port, as read)
        r = api.post("api/connect", {"url": url, "auth": {"kind": "bearer", "value": "TOK"}})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert "carries credentials; give them in the form's Credentials" in error, error
        assert "s3cretpw" not in error
    assert api.http.get("api/state").json()["info"] is None


# ---------------------------------------------------------------- calls


def test_dialect_and_binding_can_be_forced(api, story):
    info = api.connect(story.url, dialect="0.3", binding="rest")
    assert info["endpoint"]["dialect"] == "0.3" and info["endpoint"]["binding"] == "HTTP+JSON"
    entries = api.turn(api.send("a story"))
    urls = [f["url"] for f in _frames(entries)]
    assert story.url + "/v1/message:stream" in urls
    assert _events(entries)[-1]["state"] == "completed"

    api.connect(story.url + "/", dialect="0.1")
    entries = api.turn(api.send("a story"))
    bodies = [json.loads(f["request"]["body"]) for f in _frames(entries) if f["method"] == "POST"]
    assert bodies[0]["method"] == "tasks/sendSubscribe"
    assert _events(entries)[-1]["state"] == "completed"


def test_a_stream_is_logged_with_its_sequence_numbers_and_raw_frames(api, story):
    api.connect(story.url)
    entries = api.turn(api.send("a story"))
    events = _events(entries)
    chunks = example("story").STORY
    assert [e["seq"] for e in events] == list(range(1, len(chunks) + 4))
    assert [e["type"] for e in events] == ["task", "status"] + ["artifact"] * len(chunks) + [
        "status"]
    texts = [e["item"]["artifact"]["parts"][0]["text"] for e in events if e["type"] == "artifact"]
    assert texts == chunks
    (stream,) = [f for f in _frames(entries) if f["sse"]]
    assert stream["response"]["status"] == 200
    assert stream["response"]["body"].count("\nid: ") + stream["response"]["body"].startswith(
        "id: ") == len(events)
    assert stream["curl"].startswith(f"curl -N -X POST {story.url}/ -H ")
    assert "SendStreamingMessage" in stream["curl"]


def test_subscribe_with_last_event_id_gets_only_what_follows(api, story):
    api.connect(story.url)
    first = _events(api.turn(api.send("a story")))
    task_id = first[0]["taskId"]
    r = api.post(f"api/tasks/{task_id}/subscribe", {"lastEventId": 3})
    assert r.status_code == 200, r.text
    entries = api.turn(r.json()["turn"])
    assert [e["seq"] for e in _events(entries)] == [e["seq"] for e in first if e["seq"] > 3]
    (frame,) = [f for f in _frames(entries) if f["sse"]]
    assert frame["request"]["headers"]["Last-Event-ID"] == "3"


def test_tasks_are_listed_with_filters_got_and_canceled(api, flights):
    api.connect(flights.url)
    waiting = _events(api.turn(api.send("a flight, please")))[-1]
    assert waiting["state"] == "input-required"
    done = _events(api.turn(api.send("JFK to LHR")))[-1]
    assert done["state"] == "completed"

    def listed(**query: Any) -> set[str]:
        r = api.http.get("api/tasks", params=query)
        assert r.status_code == 200, r.text
        return {t["taskId"] for t in r.json()["tasks"]}

    assert waiting["taskId"] in listed(status="input-required")
    assert waiting["taskId"] not in listed(status="completed")
    assert done["taskId"] in listed(status="completed", contextId=done["contextId"])
    assert listed(contextId="no-such-context") == set()
    # a state no task has: the page's input, a 400 as its other bad values are (a 502,
    # as if the agent had failed)
    r = api.http.get("api/tasks", params={"status": "bogus"})
    assert r.status_code == 400 and "status must be one of" in r.json()["error"], r.text

    r = api.post(f"api/tasks/{waiting['taskId']}/cancel")
    assert r.status_code == 200 and r.json()["state"] == "canceled"
    got = api.http.get(f"api/tasks/{waiting['taskId']}").json()
    assert got["state"] == "canceled" and json.loads(got["raw"])["id"] == waiting["taskId"]
    r = api.post(f"api/tasks/{done['taskId']}/cancel")
    assert r.status_code == 502 and "TaskNotCancelable" in r.json()["error"]
    r = api.http.get("api/tasks/no-such-task")
    assert r.status_code == 502 and "TaskNotFound" in r.json()["error"]


def test_files_and_data_parts_go_out_as_parts(api, files_agent):
    api.connect(files_agent.url)
    entries = api.turn(api.send("", data={"n": 1}, files=[
        {"name": "a.bin", "mediaType": "application/octet-stream",
         "bytes": base64.b64encode(b"\x00\x01\x02").decode()}]))
    (artifact,) = [e for e in _events(entries) if e["type"] == "artifact"]
    part = artifact["item"]["artifact"]["parts"][0]
    assert part["filename"] == "processed_a.bin"
    assert base64.b64decode(part["raw"]) == b"\x02\x01\x00"
    r = api.post("api/send", {"files": [{"name": "x", "bytes": "not base64!"}]})
    assert r.status_code == 400 and "not base64" in r.json()["error"]
    for bad, key in (({"name": 5}, "name"), ({"mediaType": 7}, "mediaType")):
        r = api.post("api/send", {"files": [{"bytes": "aGk=", **bad}]})
        assert r.status_code == 400 and f"a file's {key} must be text" in r.json()["error"]
    r = api.post("api/send", {"text": ""})
    assert r.status_code == 400 and "the message is empty" in r.json()["error"]


# ---------------------------------------------------------------- credentials


def test_credentials_stay_on_the_server(api, secure):
    info = api.connect(secure.url, auth={"kind": "apikey", "name": "X-API-Key", "value": API_KEY})
    assert info["credentials"] == "apikey"
    entries = api.turn(api.send("show my calendar"))
    # the key got in: the agent asks for the second credential, not for the first
    assert _events(entries)[-1]["state"] == "auth-required"
    assert API_KEY not in json.dumps(info)
    everything = json.dumps(entries)
    assert API_KEY not in everything
    frames = _frames(entries)
    assert frames and all(f["request"]["headers"]["X-API-Key"] == "<redacted>" for f in frames
                          if f["method"] == "POST")
    assert api.http.cookies.get("interlingua_inspector")
    state = api.http.get("api/state").json()
    assert API_KEY not in json.dumps(state)

    api.connect(secure.url, auth={"kind": "bearer", "value": "wrong"})
    (error,) = [e for e in api.turn(api.send("show my calendar")) if e["kind"] == "error"]
    assert "AuthenticationRequired" in error["message"]
    api.connect(secure.url, auth={"kind": "basic", "user": "alice", "password": "pw"})
    (error,) = [e for e in api.turn(api.send("show my calendar")) if e["kind"] == "error"]
    assert "AuthenticationRequired" in error["message"]
    r = api.post("api/connect", {"url": secure.url, "auth": {"kind": "apikey", "value": "a\nb"}})
    assert r.status_code == 400 and "printable ASCII" in r.json()["error"]
    # the form's empty token: said so, not "cannot reach" the agent
    for auth, said in (({"kind": "bearer", "value": ""}, "the bearer token is empty"),
                       ({"kind": "bearer", "value": "  "}, "the bearer token is empty"),
                       ({"kind": "apikey", "value": ""}, "the API key is empty")):
        r = api.post("api/connect", {"url": secure.url, "auth": auth})
        assert r.status_code == 400 and said in r.json()["error"], r.text
    # spaces around a token are the form's, not the token's
    info = api.connect(secure.url, auth={"kind": "apikey", "value": f" {API_KEY} "})
    assert info["credentials"] == "apikey"


def test_sessions_are_separate(inspector, story):
    one, two = InspectorAPI(inspector.url), InspectorAPI(inspector.url)
    try:
        cookie = one.http.get("api/config").headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        two.config()
        one.connect(story.url)
        assert one.http.get("api/state").json()["info"]["url"] == story.url
        assert two.http.get("api/state").json()["info"] is None
        r = two.post("api/send", {"text": "hi"})
        assert r.status_code == 400
    finally:
        one.close()
        two.close()


# ---------------------------------------------------------------- push


@pytest.fixture(scope="module")
def quick_reports() -> Iterator[ReportAgent]:
    agent = ReportAgent().start(seconds=1.5)
    try:
        yield agent
    finally:
        agent.stop()


def test_a_webhook_registered_for_a_task_gets_verified_notifications(api, quick_reports):
    info = api.connect(quick_reports.url)
    webhook = info["webhook"]
    entries = api.turn(api.send("Q1 report", push=True))
    (created,) = _events(entries)
    task_id = created["taskId"]
    assert created["state"] in ("submitted", "working")
    pushes = [e for e in api.entries(lambda e: e["kind"] == "push" and e["state"] == "completed")
              if e["kind"] == "push"]
    assert pushes[-1]["taskId"] == task_id
    assert all(p["verified"] and p["signed"] for p in pushes)
    assert pushes[-1]["headers"]["x-a2a-notification-token"] == "<redacted>"

    # registered afterwards for a task, through the push-config call
    second = _events(api.turn(api.send("Q2 report", push=True)))[0]["taskId"]
    r = api.post(f"api/tasks/{second}/push")
    assert r.status_code == 200, r.text
    assert r.json()["config"]["url"] == webhook
    # the webhook takes only what carries the session's token
    assert httpx.post(webhook, json={"task": {}}).status_code == 401
    assert httpx.post(webhook.rsplit("/", 1)[0] + "/nobody", json={}).status_code == 404


# ---------------------------------------------------------------- where it is served


def test_create_app_mounts_the_inspector_only_when_asked(story):
    from interlingua import create_app

    mounted = Served(create_app(example("story").agent, inspector=True, freeze_gc=False))
    plain = Served(agent_app("story"))
    try:
        page = httpx.get(mounted.url + "/inspector/")
        assert page.status_code == 200 and "interlingua inspector" in page.text
        # the page's URLs are relative: without the slash it is sent to the one with it
        bare = httpx.get(mounted.url + "/inspector")
        assert bare.status_code in (307, 308)
        assert bare.headers["location"] == mounted.url + "/inspector/"
        assert httpx.get(mounted.url + "/inspector/static/app.js").status_code == 200
        client = InspectorAPI(mounted.url + "/inspector")
        try:
            config = client.config()
            assert config["defaultUrl"] == mounted.url + "/"
            assert config["webhook"].startswith(mounted.url + "/inspector/push/")
            info = client.connect(config["defaultUrl"])
            assert info["card"]["name"] == "Storyteller"
            events = _events(client.turn(client.send("a story")))
            assert events[-1]["state"] == "completed"
        finally:
            client.close()
        # the agent's own HTTP+JSON routes are still the agent's
        missing = httpx.get(mounted.url + "/tasks/no-such-task")
        assert missing.status_code == 404 and "error" in missing.json()
        assert "interlingua inspector" not in httpx.get(plain.url + "/inspector/").text
    finally:
        mounted.stop()
        plain.stop()


@contextlib.contextmanager
def inspecting(*args: str) -> Iterator[str]:
    """``interlingua inspect ARGS --port 0`` running: the URL it prints, once it answers."""
    cli = Path(sys.executable).with_name("interlingua")
    proc = subprocess.Popen([str(cli), "inspect", *args, "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        for _ in range(100):
            try:
                httpx.get(url)
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)
        assert proc.stdout is not None
        proc.stdout.close()


def test_the_inspect_command_prints_its_url_and_serves_the_page(story):
    with inspecting(story.url) as url:
        assert url.startswith("http://127.0.0.1:"), url
        page = httpx.get(url)
        assert page.status_code == 200 and "interlingua inspector" in page.text
        assert httpx.get(url + "api/config").json()["defaultUrl"] == story.url
        assert httpx.get(url.replace("127.0.0.1", "localhost")).status_code == 200
        # a name that is not this machine's, as a rebinding page would send; that
        # answer cannot be framed either (its headers were missing)
        refused = httpx.get(url, headers={"Host": "evil.example"})
        assert refused.status_code == 400
        assert refused.headers["x-frame-options"] == "DENY"
        assert refused.headers["content-security-policy"] == "frame-ancestors 'none'"


def test_the_inspect_command_on_ipv6_loopback_answers_its_own_url():
    """``--host ::1``: the URL it prints is answered (every request was a 400, the
    bracketed address not matched as a host name), a name that is not its own is not."""
    import socket

    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with inspecting("--host", "::1") as url:
        assert url.startswith("http://[::1]:"), url
        page = httpx.get(url)
        assert page.status_code == 200 and "interlingua inspector" in page.text
        assert httpx.get(url + "api/config").status_code == 200
        assert httpx.get(url, headers={"Host": "evil.example"}).status_code == 400


def test_an_agent_that_does_not_stream_gets_a_blocking_send(api):
    from interlingua import Agent, create_app

    async def echo(text: str) -> str:
        return f"you said: {text}"

    plain = Served(create_app(Agent("Plain", "Does not stream.", echo, streaming=False),
                              freeze_gc=False))
    try:
        info = api.connect(plain.url)
        assert info["card"]["capabilities"].get("streaming", False) is False
        entries = api.turn(api.send("hello"))
    finally:
        plain.stop()
    (event,) = _events(entries)
    assert event["type"] == "task" and event["state"] == "completed"
    assert event["item"]["artifacts"][0]["parts"][0]["text"] == "you said: hello"
    (frame,) = [f for f in _frames(entries) if f["method"] == "POST"]
    assert json.loads(frame["request"]["body"])["method"] == "SendMessage"
    assert not frame["sse"]


def test_listing_tasks_in_an_older_dialect_says_it_needs_a2a_1_0(api, story):
    api.connect(story.url, dialect="0.3")
    r = api.http.get("api/tasks")
    assert r.status_code == 502 and "listing tasks needs A2A 1.0" in r.json()["error"]


async def test_the_least_recently_used_session_is_dropped_past_the_limit():
    from interlingua.inspector.app import Sessions

    sessions = Sessions(limit=2)
    first, second = await sessions.new(), await sessions.new()
    assert sessions.get(first.id) is first  # used: now the most recent
    third = await sessions.new()
    assert sessions.get(second.id) is None and sessions.by_push_id(second.push_id) is None
    assert sessions.get(first.id) is first and sessions.get(third.id) is third
    await sessions.aclose()


def test_another_pages_requests_neither_make_sessions_nor_drop_the_users(story):
    """A page of another site sends no cookie (SameSite=Strict): each of its requests
    made a session, and enough of them dropped the user's, credentials and all."""
    from interlingua.inspector import inspector_app

    served = Served(inspector_app(sessions_limit=3))
    user = InspectorAPI(served.url)
    try:
        user.connect(story.url)
        pages = (("sec-fetch-site", "cross-site"), ("sec-fetch-site", "same-site"),
                 ("origin", "http://localhost:1"))
        for name, value in pages:
            for _ in range(5):
                r = httpx.get(served.url + "/api/config", headers={name: value})
                assert r.status_code == 403 and "set-cookie" not in r.headers, r.text
        # requests that name no page (curl, say) make sessions; unused ones go first
        for _ in range(5):
            assert httpx.get(served.url + "/api/config").status_code == 200
        assert user.http.get("api/state").json()["info"]["url"] == story.url
        assert user.http.get("api/config", headers={"sec-fetch-site": "same-origin"}
                             ).status_code == 200
    finally:
        user.close()
        served.stop()


def test_the_inspector_beside_an_agent_takes_its_page_behind_a_proxy():
    """Before: a proxy that changed the Host (the agent's public URL another) had the
    page's own requests refused with 403, where the agent took them."""
    from interlingua import create_app

    public = "https://agent.example.com"
    mounted = Served(create_app(example("story").agent, inspector=True, freeze_gc=False,
                                public_url=public, trust_forwarded=True))
    try:
        base = mounted.url + "/inspector/"
        for headers in ({"Origin": public},  # (an older browser: no Sec-Fetch-Site)
                        {"Origin": public, "Sec-Fetch-Site": "same-origin"},
                        {"Origin": "https://other.example.com",
                         "X-Forwarded-Host": "other.example.com"}):
            r = httpx.post(base + "api/connect", json={"url": "http://127.0.0.1:1/"},
                           headers=headers)
            assert r.status_code not in (403, 415), (headers, r.text)
        for headers in ({"Origin": "https://evil.example"},
                        {"Origin": public, "Sec-Fetch-Site": "cross-site"}):
            r = httpx.post(base + "api/connect", json={"url": "http://127.0.0.1:1/"},
                           headers=headers)
            assert r.status_code == 403, (headers, r.text)
    finally:
        mounted.stop()


def test_every_post_takes_json_only_and_from_the_inspectors_own_page(api, story):
    """A page on another port of this host gets the cookie sent: a plain form of it
    (``text/plain``, no preflight) canceled the user's task through cancel and push,
    which read no body."""
    api.connect(story.url)
    for action in ("cancel", "push"):
        r = api.http.post(f"api/tasks/some-task/{action}", content=b"a=b",
                          headers={"Content-Type": "text/plain"})
        assert r.status_code == 415, r.text
        r = api.http.post(f"api/tasks/some-task/{action}", json={},
                          headers={"Origin": "http://127.0.0.1:1"})
        assert r.status_code == 403, r.text
    own = api.http.base_url
    r = api.http.post("api/tasks/some-task/cancel", json={},
                      headers={"Origin": f"{own.scheme}://{own.netloc.decode()}"})
    assert r.status_code == 502 and "TaskNotFound" in r.json()["error"], r.text


def test_a_media_type_is_json_in_any_case(api, story):
    """Media types are case-insensitive (RFC 9110 §8.3.1): ``application/JSON`` was a 415."""
    for media_type in ("application/JSON", "Application/Json; charset=utf-8"):
        r = api.http.post("api/connect", content=json.dumps({"url": story.url}).encode(),
                          headers={"Content-Type": media_type})
        assert r.status_code == 200 and r.json()["card"]["name"] == "Storyteller", r.text


#: what keeps another page from framing the inspector's (and so from having the user
#: click in it, or from loading it with ?url= to connect at once)
_NOT_FRAMED = {"x-frame-options": "DENY", "content-security-policy": "frame-ancestors 'none'"}


def _not_framed(response: httpx.Response) -> None:
    for name, value in _NOT_FRAMED.items():
        assert response.headers.get(name) == value, (str(response.url), name,
                                                     dict(response.headers))


def test_no_page_may_frame_the_inspector(inspector):
    """Before: a page of another port of this host framed the inspector, with the user's
    session, and had the user click send or cancel in it; inside a frame, the page's
    requests are the inspector's own (``Sec-Fetch-Site: same-origin``)."""
    for path in ("/", "/static/app.js", "/static/style.css", "/favicon.ico", "/api/config",
                 "/api/state", "/no-such-page"):
        _not_framed(httpx.get(inspector.url + path, timeout=10))
    _not_framed(httpx.post(inspector.url + "/api/connect", json={}, timeout=10))
    _not_framed(httpx.post(inspector.url + "/push/nobody", json={}, timeout=10))
    with httpx.stream("GET", inspector.url + "/api/events", timeout=10) as events:
        _not_framed(events)
    from interlingua import create_app

    mounted = Served(create_app(example("story").agent, inspector=True, freeze_gc=False))
    try:
        for path in ("/inspector/", "/inspector/static/app.js", "/inspector/api/config"):
            _not_framed(httpx.get(mounted.url + path, timeout=10))
        # the agent's own routes are not the inspector's: its card is read by pages
        card = httpx.get(mounted.url + "/.well-known/agent-card.json", timeout=10)
        assert "x-frame-options" not in card.headers
    finally:
        mounted.stop()


def test_a_page_of_a_session_before_a_restart_is_shown_the_new_one(api, story):
    """After the inspector restarts, the page's EventSource comes back with the old
    session's last event id: the new session's log, which starts at 1 again, was all
    hidden behind it."""
    api.after = 40
    api.connect(story.url)
    entries = api.entries(lambda e: e["kind"] == "connected", timeout=5)
    assert entries[0]["n"] == 1
    # an id the log has reached is still followed from there
    api.after = entries[-1]["n"]
    turn = api.send("a story")
    assert api.turn(turn)[0]["n"] == entries[-1]["n"] + 1


def test_numbers_must_be_whole_numbers(api, story):
    """``int()`` took 2.7 as 2 and true as 1: a subscription started from another event."""
    api.connect(story.url)
    for bad in (2.7, True, "2.7", "x", [1]):
        r = api.post("api/tasks/some-task/subscribe", {"lastEventId": bad})
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["error"] == "lastEventId must be a whole number"
    r = api.post("api/tasks/some-task/subscribe", {"lastEventId": -1})
    assert r.status_code == 400 and "must not be negative" in r.json()["error"]
    r = api.http.get("api/tasks/some-task", params={"historyLength": "1.5"})
    assert r.status_code == 400 and "historyLength must be a whole number" in r.text
    for good in (2, "2"):
        r = api.post("api/tasks/some-task/subscribe", {"lastEventId": good})
        assert r.status_code == 200, r.text


def test_the_status_filter_offers_and_takes_only_states_a_task_is_listed_in(api, story):
    """"unknown" was offered, and an agent reads it as no filter: every task was listed."""
    assert "unknown" not in api.config()["states"]
    api.connect(story.url)
    api.turn(api.send("a story"))
    r = api.http.get("api/tasks", params={"status": "unknown"})
    assert r.status_code == 400 and "status must be one of" in r.json()["error"], r.text
    assert api.http.get("api/tasks", params={"status": "completed"}).json()["tasks"]


def test_the_text_is_sent_as_written(api, story):
    """The text was stripped: leading spaces, and the newline a message ends with, lost."""
    api.connect(story.url)
    entries = api.turn(api.send("  indented\nand ended\n", stream=False))
    (frame,) = [f for f in _frames(entries) if f["method"] == "POST"]
    (part,) = json.loads(frame["request"]["body"])["params"]["message"]["parts"]
    assert part["text"] == "  indented\nand ended\n"
    r = api.post("api/send", {"text": " \n "})
    assert r.status_code == 400 and "the message is empty" in r.json()["error"]
    r = api.post("api/send", {"text": 5})
    assert r.status_code == 400 and "text must be text" in r.json()["error"]


def test_notifications_of_an_agent_connected_to_before_still_verify(api, quick_reports, story):
    """Connecting to another agent replaced the webhook's receiver: the first agent's
    notifications still due were checked against the new agent's JWKS, and refused."""
    api.connect(quick_reports.url)
    (created,) = _events(api.turn(api.send("Q3 report", push=True)))
    api.connect(story.url)
    pushes = [e for e in api.entries(lambda e: e["kind"] == "push" and e["state"] == "completed")
              if e["kind"] == "push"]
    assert {p["taskId"] for p in pushes} == {created["taskId"]}
    assert all(p["verified"] for p in pushes)


def test_a_refused_connect_keeps_the_connection_that_works(api, story):
    """A connect refused (an impossible dialect and binding) closed the working client
    first, while the state and the log still said connected."""
    api.connect(story.url)
    r = api.post("api/connect", {"url": story.url, "dialect": "0.1", "binding": "rest"})
    assert r.status_code == 400, r.text
    assert api.http.get("api/state").json()["info"]["endpoint"]["url"] == story.url + "/"
    entries = api.turn(api.send("a story"))
    assert _events(entries)[-1]["state"] == "completed"


def test_a_turn_stopped_by_connecting_again_logs_its_end(api, story):
    api.connect(story.url)
    turn = api.send("a story")
    api.entries(lambda e: e["kind"] == "event" and e["turn"] == turn)
    api.connect(story.url)
    entries = api.entries(lambda e: e["kind"] == "connected")
    (stopped,) = [e for e in entries if e.get("turn") == turn and e["kind"] == "error"]
    assert "connection to the agent was closed" in stopped["message"]


def test_the_signed_card_of_one_of_several_agents_verifies(api):
    """Its JWKS is below /agents/{name}/ (where its signature's jku points), and was
    looked for at the origin's root only: "Signature ✗"."""
    from interlingua import create_app
    from interlingua.server.cards.signer import CardSigning

    served = Served(create_app([example("echo").agent, example("story").agent],
                               card_signing=CardSigning(), store="memory://",
                               freeze_gc=False))
    try:
        info = api.connect(served.url + "/agents/Echo/")
    finally:
        served.stop()
    signature = info["card"]["signature"]
    assert signature["status"] == "verified", signature
    assert signature["jwksUrl"] == served.url + "/agents/Echo/.well-known/jwks.json"


def test_a_streams_frame_shows_its_body_as_it_arrives(api, story):
    """The frame of a stream was reported when its headers came and when it ended, its
    body empty all the while between."""
    api.connect(story.url)
    entries = api.turn(api.send("a story"))
    reports = [e["frame"] for e in entries if e["kind"] == "frame" and e["frame"]["sse"]]
    arriving = [f for f in reports if not f["done"] and f["response"]["body"]]
    assert arriving, [(f["done"], len(f["response"]["body"])) for f in reports]
    # in order, each with more of the body, and a few of them (not one per event)
    sizes = [len(f["response"]["body"]) for f in arriving]
    assert sizes == sorted(sizes) and len(arriving) <= 8
    assert reports[-1]["done"] and reports[-1]["response"]["body"].startswith(
        arriving[0]["response"]["body"])
