"""A web inspector for A2A agents: card, chat, event timeline, raw frames,
tasks and push notifications, through interlingua's own client
(docs/inspector.md)."""

from __future__ import annotations

from .app import inspector_app

__all__ = ["inspector_app"]
