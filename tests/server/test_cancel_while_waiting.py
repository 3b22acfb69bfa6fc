"""A turn waiting for a message with a timeout is canceled even when the cancel
comes in the same loop turn as a message (Python 3.11's ``asyncio.wait_for``
returned the message and lost the cancel)."""

from __future__ import annotations

import asyncio

import pytest

from interlingua import Context, user_message
from interlingua.core.model import Message


async def test_a_cancel_that_comes_with_a_message_ends_the_wait() -> None:
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    ctx = Context(object(), user_message("start"), object(), inbox=inbox)  # type: ignore[arg-type]
    waiting = asyncio.create_task(ctx.next_message(timeout=30))
    await asyncio.sleep(0)  # it waits on the inbox
    inbox.put_nowait(user_message("late"))
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert waiting.cancelled()
    # the message is not taken by the canceled wait: a later reader still gets it
    assert inbox.qsize() == 1


async def test_a_wait_that_times_out_gives_none_and_one_that_is_answered_the_message() -> None:
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    ctx = Context(object(), user_message("start"), object(), inbox=inbox)  # type: ignore[arg-type]
    assert await ctx.next_message(timeout=0.01) is None
    inbox.put_nowait(user_message("here"))
    got = await ctx.next_message(timeout=30)
    assert got is not None and got.parts[0].text == "here"  # type: ignore[union-attr]
