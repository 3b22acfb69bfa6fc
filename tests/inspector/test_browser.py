"""The inspector in headless Chromium, against the example agents on loopback.

Each test drives the page as a person would (fill the form, click, read what
is shown) and checks what the page shows against what the agent did.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from .servers import API_KEY, example

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) and says why
    expect = None

pytestmark = pytest.mark.timeout(60)


def connect(page: Any, url: str, *, kind: str = "none", value: str = "",
            binding: str = "") -> None:
    page.fill("#url", url)
    page.select_option("#auth-kind", kind)
    if value:
        page.fill("#auth-value", value)
    if binding:
        page.select_option("#binding", binding)
    page.click("#connect")
    expect(page.locator("#status")).not_to_have_text(re.compile("Connecting"))


def say(page: Any, text: str) -> None:
    page.click("#tabs button[data-view=chat]")
    page.fill("#chat-text", text)
    page.click("#chat-send")


def test_the_card_is_shown_checked_per_version_with_its_interfaces(page, story):
    connect(page, story.url)
    card = page.locator("#view-card")
    expect(card.locator("#card-name")).to_contain_text("Storyteller")
    expect(page.locator("#status")).to_contain_text("A2A 1.0 over JSONRPC")
    # interlingua's card carries v1.0 and v0.3 at once: both are checked
    expect(card.locator(".check.ok[data-version='1.0']")).to_contain_text("valid")
    expect(card.locator(".check.ok[data-version='0.2/0.3']")).to_contain_text("valid")
    expect(card.locator(".signature")).to_contain_text("not signed")
    rows = card.locator("table.interfaces tr")
    expect(rows).to_have_count(5)  # a header, JSON-RPC and HTTP+JSON in 1.0 and 0.3
    expect(card.locator("table.interfaces")).to_contain_text("HTTP+JSON")
    expect(card.locator(".skill")).to_contain_text("Short story")


def test_the_views_are_an_aria_tab_list(page, story):
    tabs = page.get_by_role("tablist", name="Views").get_by_role("tab")
    expect(tabs).to_have_count(6)
    card, chat = page.get_by_role("tab", name="Card"), page.get_by_role("tab", name="Chat")
    expect(card).to_have_attribute("aria-selected", "true")
    expect(page.get_by_role("tabpanel", name="Card")).to_be_visible()
    chat.click()
    expect(chat).to_have_attribute("aria-selected", "true")
    expect(card).to_have_attribute("aria-selected", "false")
    expect(page.get_by_role("tabpanel", name="Chat")).to_be_visible()
    expect(page.locator("#view-card")).to_be_hidden()
    # the keyboard moves along the list, and only the selected tab is in the Tab order
    chat.focus()
    page.keyboard.press("ArrowRight")
    timeline = page.get_by_role("tab", name="Timeline")
    expect(timeline).to_be_focused()
    expect(timeline).to_have_attribute("aria-selected", "true")
    expect(timeline).to_have_attribute("tabindex", "0")
    expect(chat).to_have_attribute("tabindex", "-1")
    page.keyboard.press("Home")
    expect(card).to_be_focused()
    expect(page.get_by_role("tabpanel", name="Card")).to_be_visible()


def test_a_card_without_skills_is_shown_valid_with_a_warning(page, gappy):
    # an interlingua agent always lists a skill: this one's card is another server's
    connect(page, gappy.url)
    card = page.locator("#view-card")
    expect(card.locator("#card-name")).to_contain_text("Gappy")
    check = card.locator(".check.ok[data-version='0.2/0.3']")
    expect(check).to_contain_text("valid, 1 warning")
    expect(check.locator("li.warning")).to_contain_text("skills is empty")


def test_a_grpc_interface_is_shown_as_an_address(page):
    from interlingua import Agent
    from tests.live import live_grpc_agent

    async def quiet(text: str) -> str:
        return text

    with live_grpc_agent(Agent("Quiet", "Lists no skills.", quiet)) as (url, target):
        connect(page, url)
        card = page.locator("#view-card")
        expect(card.locator("#card-name")).to_contain_text("Quiet")
        # the skill made from its name and description: nothing to warn of
        check = card.locator(".check.ok[data-version='1.0']")
        expect(check).to_contain_text("valid")
        expect(check).not_to_contain_text("warning")
        # a gRPC interface is an address of its own, not a path below the card's URL
        expect(card.locator("table.interfaces")).to_contain_text(f"grpc://{target}")
        expect(card.locator("table.interfaces")).not_to_contain_text(".well-known/")


def test_an_agent_named_in_the_address_is_connected_to_at_once(page, inspector, story):
    page.goto(f"{inspector.url}/?url={story.url}")
    expect(page.locator("#card-name")).to_contain_text("Storyteller")
    page.reload()  # once: the session is connected already
    expect(page.locator("#card-name")).to_contain_text("Storyteller")
    page.click("#tabs button[data-view=frames]")
    expect(page.locator("details.frame")).to_have_count(1)  # one card read, not two


def test_the_dialect_and_binding_chosen_in_the_page_are_spoken(page, story):
    connect(page, story.url, binding="rest")
    expect(page.locator("#status")).to_contain_text("A2A 1.0 over HTTP+JSON")
    page.select_option("#binding", "")
    page.select_option("#dialect", "0.1")
    connect(page, story.url + "/")
    expect(page.locator("#status")).to_contain_text("A2A 0.1 over JSONRPC")
    say(page, "a story")
    expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    page.click("#tabs button[data-view=frames]")
    expect(page.locator("details.frame .request-body").first).to_contain_text("tasks/sendSubscribe")


def test_a_page_of_another_port_cannot_frame_the_inspector(browser, inspector):
    """Before: framed by a page of another port of this host, the inspector showed the
    user's session (the cookie is sent to a frame) and took the user's clicks; by
    another site, loaded with ?url=, it connected at once to the URL given."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    from .servers import Served

    async def framing(request: Any) -> HTMLResponse:
        return HTMLResponse(f'<h1>win a prize</h1><iframe id="f" src="{inspector.url}/'
                            f'?url=http://127.0.0.1:9/"></iframe>')

    other = Served(Starlette(routes=[Route("/", framing)]))
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(inspector.url + "/")  # the user's session, whose cookie a frame is sent
        page.wait_for_selector("body[data-ready=true]")
        with page.expect_response(lambda r: r.url.startswith(inspector.url)) as framed:
            page.goto(other.url + "/")
        assert framed.value.status == 200  # the browser asked, and would not show it
        # (goto waits for the frame's load): in its place, the browser's error page
        framed_page = page.frame(name="f")
        assert framed_page is not None
        assert not framed_page.url.startswith(inspector.url), framed_page.url
        assert page.frame_locator("#f").locator("#connect").count() == 0
    finally:
        context.close()
        other.stop()


def test_an_unreachable_agent_is_a_clear_message(page, inspector):
    connect(page, "http://127.0.0.1:9/")
    expect(page.locator("#status .error")).to_contain_text("cannot reach")
    expect(page.locator("#status")).not_to_contain_text("Traceback")


def test_a_streamed_story_assembles_chunk_by_chunk(page, story):
    connect(page, story.url)
    # every state the story's artifact goes through on the page, as it happens
    page.evaluate("""() => {
      window.seen = [];
      new MutationObserver(() => {
        const a = document.querySelector("#chat-log .artifact[data-name='MarsStory.txt']");
        if (!a) return;
        const text = a.querySelector(".artifact-text")?.textContent || "";
        const last = window.seen[window.seen.length - 1];
        const now = [Number(a.dataset.chunks), text, a.classList.contains("complete")];
        if (!last || last[0] !== now[0] || last[2] !== now[2]) window.seen.push(now);
      }).observe(document.getElementById("chat-log"),
                 {subtree: true, childList: true, attributes: true, characterData: true});
    }""")
    say(page, "Write a very short story about a curious robot exploring Mars.")
    chunks = example("story").STORY
    artifact = page.locator("#chat-log .artifact[data-name='MarsStory.txt']")
    expect(artifact).to_have_class(re.compile("complete"))
    expect(artifact).to_have_attribute("data-chunks", str(len(chunks)))
    assert artifact.locator(".artifact-text").inner_text().strip() == "".join(chunks).strip()
    # it grew a chunk at a time, each state the chunks so far, complete only at the end
    seen = page.evaluate("window.seen")
    assert [n for n, _, _ in seen] == list(range(1, len(chunks) + 1)), seen
    for n, text, complete in seen:
        assert text == "".join(chunks[:n])
        assert complete == (n == len(chunks))
    expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    expect(page.locator("#chat-log")).to_contain_text("The story is complete!")

    page.click("#tabs button[data-view=timeline]")
    group = page.locator(".task-group")
    expect(group.locator("tr.ev")).to_have_count(len(chunks) + 3)  # task, working, chunks, completed
    seqs = [int(s) for s in group.locator("tr.ev td.seq").all_inner_texts()]
    assert seqs == list(range(1, len(chunks) + 4))
    expect(group.locator("tr.gap")).to_have_count(0)
    expect(group.locator(".assembled-artifact.complete")).to_contain_text(
        f"{len(chunks)} chunks assembled")

    page.click("#tabs button[data-view=frames]")
    sse = page.locator("details.frame.sse").first
    sse.locator("summary").click()
    expect(sse.locator(".response-body")).to_contain_text("id: 1")
    expect(sse.locator(".request-body")).to_contain_text("SendStreamingMessage")
    expect(sse.locator(".curl-text")).to_contain_text("curl -N -X POST")

    # the session is the server's: a page loaded again replays it
    page.reload()
    page.click("#tabs button[data-view=timeline]")
    expect(page.locator(".task-group tr.ev")).to_have_count(len(chunks) + 3)
    expect(page.locator("#status")).to_contain_text("Connected to Storyteller")
    page.click("#tabs button[data-view=chat]")
    expect(page.locator("#chat-log .artifact.complete .artifact-text")).to_have_text(
        "".join(chunks))


def test_a_sequence_number_missing_from_a_stream_is_shown_as_a_gap(page, gappy):
    connect(page, gappy.url)
    expect(page.locator("#status")).to_contain_text("A2A 0.3 over JSONRPC")
    say(page, "anything")
    expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    page.click("#tabs button[data-view=timeline]")
    rows = page.locator(".task-group tbody tr")
    expect(rows).to_have_count(5)
    expect(rows.nth(2)).to_have_class(re.compile("gap"))
    expect(rows.nth(2)).to_contain_text("1 event (seq 3) not received")
    assert page.locator(".task-group td.seq").all_inner_texts() == ["1", "2", "4", "5"]


def test_an_agent_question_is_answered_in_the_same_task(page, flights):
    connect(page, flights.url)
    say(page, "I'd like to book a flight.")
    prompt = page.locator("#chat-prompt")
    expect(prompt).to_be_visible()
    expect(prompt).to_contain_text("Where would you like to fly to")
    expect(page.locator("#chat-target")).to_contain_text("answering task")
    say(page, "From JFK to LHR on October 10th")
    last = page.locator("#chat-log .turn").nth(1)
    expect(last.locator(".turn-state")).to_have_text("completed")
    # the itinerary is a data part, shown as JSON
    expect(last.locator(".artifact .part-data")).to_contain_text('"confirmationId": "XYZ123"')
    expect(prompt).to_be_hidden()
    # both turns were one task
    page.click("#tabs button[data-view=timeline]")
    expect(page.locator(".task-group")).to_have_count(1)
    expect(page.locator(".task-group tr.gap")).to_have_count(0)


def test_a_next_turn_in_the_v0_1_dialect_is_no_gap(page, flights):
    """In v0.1 the answer's stream begins with a status update, not a task snapshot:
    the number the user's message took (seq 3) was shown as a gap on every next turn."""
    page.select_option("#dialect", "0.1")
    connect(page, flights.url + "/")
    expect(page.locator("#status")).to_contain_text("A2A 0.1 over JSONRPC")
    say(page, "I'd like to book a flight.")
    expect(page.locator("#chat-prompt")).to_be_visible()
    say(page, "From JFK to LHR on October 10th")
    expect(page.locator("#chat-log .turn").nth(1).locator(".turn-state")).to_have_text(
        "completed")
    page.click("#tabs button[data-view=timeline]")
    group = page.locator(".task-group")
    expect(group).to_have_count(1)
    seqs = [int(s) for s in group.locator("tr.ev td.seq").all_inner_texts()]
    assert len(seqs) >= 4 and seqs == sorted(seqs), seqs
    assert [b for a, b in itertools.pairwise(seqs) if b > a + 1], seqs  # the jump
    expect(group.locator("tr.gap")).to_have_count(0)


def test_a_task_is_listed_and_canceled_from_the_task_browser(page, flights):
    connect(page, flights.url)
    say(page, "I'd like to book a flight.")
    expect(page.locator("#chat-prompt")).to_be_visible()
    page.click("#tabs button[data-view=tasks]")
    page.select_option("#tasks-status", "input-required")
    page.click("#tasks-list")
    row = page.locator("tr.task-row").first
    expect(row).to_contain_text("input-required")
    row.click()
    expect(page.locator("#task-detail")).to_contain_text("input-required")
    page.click("#task-cancel")
    expect(page.locator("#task-detail h3")).to_contain_text("canceled")
    page.click("#task-get")
    expect(page.locator("#task-detail h3 .state")).to_have_text("canceled")


def test_another_agent_does_not_show_the_last_ones_tasks(page, flights, story):
    """(The list, the tasks seen and the task id stayed: a click then asked the new
    agent for a task it never had.)"""
    connect(page, flights.url)
    say(page, "I'd like to book a flight.")
    expect(page.locator("#chat-prompt")).to_be_visible()
    page.click("#tabs button[data-view=tasks]")
    page.click("#tasks-list")
    expect(page.locator("tr.task-row").first).to_be_visible()  # (the agent's tasks so far)
    expect(page.locator("#tasks-known .chip")).to_have_count(1)
    page.locator("tr.task-row").first.click()
    expect(page.locator("#task-id")).not_to_have_value("")
    connect(page, story.url)
    expect(page.locator("#card-name")).to_contain_text("Storyteller")
    expect(page.locator("tr.task-row")).to_have_count(0)
    expect(page.locator("#tasks-known .chip")).to_have_count(0)
    expect(page.locator("#task-id")).to_have_value("")


def test_a_waiting_task_is_canceled_from_the_chat(page, flights):
    connect(page, flights.url)
    say(page, "I'd like to book a flight.")
    expect(page.locator("#chat-prompt")).to_be_visible()
    page.click("#chat-cancel")
    expect(page.locator("#chat-log .turn-state")).to_have_text("canceled")
    expect(page.locator("#chat-prompt")).to_be_hidden()
    expect(page.locator("#chat-cancel")).to_be_hidden()
    expect(page.locator("#chat-target")).to_contain_text("in conversation")


def test_a_finished_task_is_followed_again_from_a_last_event_id(page, story):
    connect(page, story.url)
    say(page, "a story")
    expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    page.click("#tabs button[data-view=tasks]")
    page.locator("#tasks-known button.chip").first.click()
    expect(page.locator("#task-detail h3 .state")).to_have_text("completed")
    page.fill("#task-last-event", "5")
    page.click("#task-subscribe")
    expect(page.locator("#task-detail")).to_contain_text("Subscribed")
    page.click("#tabs button[data-view=timeline]")
    group = page.locator(".task-group")
    expect(group.locator("tr.connection")).to_contain_text("Last-Event-ID 5")
    # the first stream's eight events, then the three after event 5 once more
    expect(group.locator("tr.ev")).to_have_count(11)
    assert group.locator("td.seq").all_inner_texts()[8:] == ["6", "7", "8"]
    expect(group.locator("tr.gap")).to_have_count(0)
    # the chunks sent again are not put together again (they were: the story's end twice)
    chunks = example("story").STORY
    expect(group.locator(".assembled-artifact.complete")).to_contain_text(
        f"{len(chunks)} chunks assembled")
    assert group.locator(".assembled-text").inner_text() == "".join(chunks).strip()
    expect(group.locator("tr.ev").nth(8)).to_contain_text("received before")
    page.click("#tabs button[data-view=chat]")
    expect(page.locator("#chat-log .bubble.user").last).to_contain_text("after event 5")


def test_a_file_goes_up_and_the_answer_comes_down(page, files_agent, tmp_path):
    connect(page, files_agent.url)
    upload = tmp_path / "note.txt"
    upload.write_bytes(b"hello, inspector")
    page.click("#tabs button[data-view=chat]")
    page.click("#chat-extra summary")
    page.fill("#chat-data", "{not json")
    page.fill("#chat-text", "process this")
    page.click("#chat-send")
    expect(page.locator("#chat-log .error")).to_contain_text("the data part is not JSON")
    page.fill("#chat-data", '{"note": "keep"}')
    page.set_input_files("#chat-files", str(upload))
    page.click("#chat-send")
    # what went out: the text, the data part (as JSON) and the file
    mine = page.locator("#chat-log .bubble.user").last
    expect(mine.locator(".part-data")).to_contain_text('"note": "keep"')
    expect(mine.locator("a.part-file")).to_contain_text("note.txt")
    link = page.locator("#chat-log .artifact a.part-file")
    expect(link).to_contain_text("processed_note.txt")
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == "processed_note.txt"
    with open(download.path(), "rb") as f:
        assert f.read() == b"hello, inspector"[::-1]


def test_a_file_uri_from_an_agent_is_a_link_only_when_it_is_http(page):
    from interlingua import Agent, create_app, file_part

    from .servers import Served

    async def links(text: str) -> list[Any]:
        return ["two files",
                file_part(uri="javascript:document.title='owned'", filename="evil.txt"),
                file_part(uri="https://example.com/report.pdf", filename="report.pdf",
                          media_type="application/pdf")]

    agent = Served(create_app(Agent("Links", "Answers with file links.", links),
                              freeze_gc=False))
    try:
        connect(page, agent.url)
        say(page, "files?")
        expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    finally:
        agent.stop()
    log = page.locator("#chat-log")
    expect(log.locator("span.part-file")).to_contain_text("javascript:document.title")
    expect(log.locator("a.part-file")).to_have_count(1)
    assert log.locator("a.part-file").get_attribute("href") == "https://example.com/report.pdf"


def test_a_push_notification_is_captured_with_its_signature_verified(page, reports):
    connect(page, reports.url)
    page.click("#tabs button[data-view=chat]")
    page.click("#chat-extra summary")
    page.check("#chat-push")
    page.fill("#chat-text", "Generate the Q1 sales report.")
    page.click("#chat-send")
    page.click("#tabs button[data-view=push]")
    done = page.locator("#push-log details.push[data-state=completed]")
    expect(done).to_have_count(1, timeout=15_000)
    expect(done.locator(".sig")).to_have_text("signature verified")
    done.locator("> summary").click()
    expect(done).to_contain_text("sales report generated successfully")
    # the chat, which sent without waiting, learns the task's end from the notifications
    page.click("#tabs button[data-view=chat]")
    expect(page.locator("#chat-log .turn-state")).to_have_text("completed")
    expect(page.locator("#chat-log .push-line[data-state=completed]")).to_have_count(1)


def test_an_auth_failure_is_rendered_and_the_right_key_gets_in(page, secure):
    connect(page, secure.url)
    # the card is public, signed, and names the API key it wants
    expect(page.locator(".signature")).to_contain_text("Signed")
    expect(page.locator("#auth-name")).to_have_value("X-API-Key")
    say(page, "show my calendar")
    expect(page.locator("#chat-log .error")).to_contain_text("AuthenticationRequired")

    connect(page, secure.url, kind="apikey", value="not-the-key")
    say(page, "show my calendar")
    expect(page.locator("#chat-log .error")).to_contain_text("AuthenticationRequired")

    connect(page, secure.url, kind="apikey", value=API_KEY)
    say(page, "show my calendar")
    # in: the agent now asks for a calendar token, a data part shown as JSON
    expect(page.locator("#chat-prompt")).to_contain_text("calendar token")
    expect(page.locator("#chat-log .part-data").last).to_contain_text("authenticationRequired")
    # the key never reaches the page, not even in the frames
    page.click("#tabs button[data-view=frames]")
    assert API_KEY not in page.content()
