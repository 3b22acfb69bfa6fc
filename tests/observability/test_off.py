"""Off means not there: an app built without tracing, metrics or JSON logs
registers nothing on its hook points, so its request path passes over empty
lists. With OpenTelemetry installed but no SDK set up (this test session),
tracing stays off."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

from interlingua import Agent, create_app
from interlingua.core import trace_context as propagation
from tests.observability.spans import memory_provider


async def _echo(text: str) -> str:
    return text


def _registered(app) -> dict[str, int]:
    """How many hooks each hook point of the app holds (only those that hold any)."""
    hooks = app.state.hooks
    return {name: len(getattr(hooks, name)) for name in hooks.__slots__
            if getattr(hooks, name)}


def test_nothing_is_registered_when_nothing_is_asked_for():
    assert propagation.AVAILABLE and not propagation.sdk_configured()
    app = create_app(Agent("Echo", "Echoes.", _echo))
    assert app.state.hooks.empty
    # the parts hold the app's hook lists: nothing on any of them either
    engine = app.state.engine
    assert engine.hooks is app.state.hooks and app.state.door.hooks is app.state.hooks
    assert engine.writer.on_commit == []


def _called_during_a_call(app) -> set[str]:
    """The functions of interlingua's hooks and observability run by one call."""
    from interlingua.core.calls import GetTask
    from interlingua.core.dialects import get_codec
    from interlingua.core.errors import TaskNotFound
    from interlingua.server.dispatch import Inbound

    door = app.state.door
    seen: set[str] = set()

    def note(frame, event, arg):  # type: ignore[no-untyped-def]
        path = frame.f_code.co_filename
        if event == "call" and ("observability" in path or path.endswith("hooks.py")
                                or frame.f_code.co_name == "_hooked"):
            seen.add(frame.f_code.co_name)

    async def main() -> None:
        await door.ensure_started()
        sys.setprofile(note)
        try:
            # through the entry every binding takes
            await door.enter(Inbound(binding="test", scope={}, headers={},
                                     codec=get_codec("1.0"), call=GetTask(id="no-such-task")))
        except TaskNotFound:
            pass
        finally:
            sys.setprofile(None)
            await door.engine.stop()

    asyncio.run(main())
    return seen


def test_with_nothing_registered_nothing_of_the_hooks_runs():
    assert _called_during_a_call(create_app(Agent("Echo", "Echoes.", _echo))) == set()
    counted = _called_during_a_call(create_app(Agent("Echo", "Echoes.", _echo), metrics=True))
    assert {"_hooked", "started", "ended", "_counted", "end", "request"} <= counted


def test_metrics_register_counting_only_and_tracing_registers_spans():
    counted = _registered(create_app(Agent("Echo", "Echoes.", _echo), metrics=True))
    assert counted == {"requests": 1, "commits": 1, "streams": 1, "renewals": 1,
                       "attempts": 1}
    provider, _ = memory_provider()
    traced = _registered(create_app(Agent("Echo", "Echoes.", _echo), tracing=provider))
    assert traced == {"requests": 1, "turns": 1, "commits": 1, "deliveries": 1,
                      "webhook_headers": 1, "attempts": 1}


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
        print(bool(before.state.hooks.turns), bool(after.state.hooks.turns))
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
