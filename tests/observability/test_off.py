"""Off means not there: an app built without tracing, metrics or JSON logs has none
of the hooks on its objects, so its request path is the code without them. With
OpenTelemetry installed but no SDK set up (this test session), tracing stays off."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from interlingua import Agent, create_app
from interlingua.core import trace_context as propagation
from tests.observability.spans import memory_provider

HOOKED = {"door": ("request", "call", "stream"), "turns": ("_turn",),
          "writer": ("_write",), "streams": ("open",), "leases": ("renew",)}


async def _echo(text: str) -> str:
    return text


def _hooked(app) -> dict[str, list[str]]:
    """Which methods were replaced on the app's instances (an instance attribute
    shadowing the class's method)."""
    engine = app.state.engine
    objects = {"door": app.state.door, "turns": engine.turns, "writer": engine.writer,
               "streams": engine.streams, "leases": engine.leases}
    return {name: [m for m in methods if m in vars(objects[name])]
            for name, methods in HOOKED.items()}


def test_nothing_is_hooked_when_nothing_is_asked_for():
    assert propagation.AVAILABLE and not propagation.sdk_configured()
    app = create_app(Agent("Echo", "Echoes.", _echo))
    assert _hooked(app) == {name: [] for name in HOOKED}
    assert app.state.engine.writer.on_commit == []


def test_metrics_hook_counting_only_and_tracing_hooks_spans():
    counted = _hooked(create_app(Agent("Echo", "Echoes.", _echo), metrics=True))
    assert counted == {"door": ["request", "call", "stream"], "turns": [], "writer": [],
                       "streams": ["open"], "leases": ["renew"]}
    provider, _ = memory_provider()
    traced = _hooked(create_app(Agent("Echo", "Echoes.", _echo), tracing=provider))
    assert traced == {"door": ["request", "call", "stream"], "turns": ["_turn"],
                      "writer": ["_write"], "streams": [], "leases": []}


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_sdk_set_up_before_the_app_is_built_turns_tracing_on():
    out = _run("""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from interlingua import Agent, create_app

        async def echo(text: str) -> str:
            return text

        before = create_app(Agent("E", "e", echo))
        trace.set_tracer_provider(TracerProvider())
        after = create_app(Agent("E", "e", echo))
        print("call" in vars(before.state.door), "call" in vars(after.state.door))
    """)
    assert out == "False True"


def test_without_opentelemetry_everything_but_tracing_works():
    out = _run("""
        import sys
        sys.modules["opentelemetry"] = None  # as without the otel extra
        from interlingua import Agent, create_app
        from interlingua.core import trace_context as propagation

        async def echo(text: str) -> str:
            return text

        headers = {}
        propagation.inject(headers)  # what every client call does: nothing here
        create_app(Agent("E", "e", echo), metrics=True)
        try:
            create_app(Agent("E", "e", echo), tracing=True)
        except RuntimeError as exc:
            print(propagation.AVAILABLE, headers, exc)
    """)
    assert out == ("False {} tracing needs OpenTelemetry: pip install 'interlingua[otel]'")
