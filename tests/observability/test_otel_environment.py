"""OpenTelemetry's ``OTEL_*`` environment variables and the ``interlingua`` console
script: a bad value is one ``error:`` line (exit 2) when ``serve --otel`` sets up
the SDK, and does nothing to a command that traces nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.cli.test_console_script import interlingua, serving

pytestmark = pytest.mark.timeout(120)

BAD = {
    "OTEL_BSP_SCHEDULE_DELAY": "-5",
    "OTEL_BSP_MAX_QUEUE_SIZE": "0",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "99999",
    "OTEL_BSP_EXPORT_TIMEOUT": "abc",
    "OTEL_ATTRIBUTE_COUNT_LIMIT": "abc",
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT": "-1",
    "OTEL_PROPAGATORS": "bogus",
}


@pytest.mark.parametrize(("name", "value"), BAD.items(), ids=list(BAD))
def test_serve_otel_refuses_a_bad_value_in_one_line(name: str, value: str) -> None:
    # (a traceback and exit 1, or for a timeout that is no number a traceback logged at start)
    done = interlingua("serve", "tests/client/agents.py", "--store", "memory://",
                       "--port", "0", "--otel", env={name: value})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert name in done.stderr and value in done.stderr


def test_serve_otel_refuses_a_bad_value_with_several_agents() -> None:
    done = interlingua("serve", "tests/client/agents.py", "examples/report_agent.py",
                       "--store", "memory://", "--port", "0", "--otel",
                       env={"OTEL_BSP_SCHEDULE_DELAY": "-5"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: OTEL_BSP_SCHEDULE_DELAY=-5"), done.stderr


def test_an_unknown_propagator_does_not_break_what_traces_nothing() -> None:
    # (every command, and `import interlingua`, failed with "Propagator bogus not found")
    env = {"OTEL_PROPAGATORS": "bogus"}
    with serving(env=env) as (url, _):
        sent = interlingua("send", url, "hello", env=env)
        assert sent.returncode == 0, sent.stderr
        assert "Traceback" not in sent.stderr


def test_an_unknown_propagator_leaves_the_w3c_traceparent() -> None:
    # a program that sets up its own SDK: its client still sends the caller's trace
    code = textwrap.dedent("""
        import logging
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from interlingua.core import trace_context

        logging.basicConfig(format="%(levelname)s %(message)s")
        trace.set_tracer_provider(TracerProvider())
        headers = {}
        with trace.get_tracer("t").start_as_current_span("s") as span:
            trace_context.inject(headers)
            trace_context.inject({})
        context = trace_context.extract(headers)
        print(trace.get_current_span(context).get_span_context().trace_id
              == span.get_span_context().trace_id)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "OTEL_PROPAGATORS": "bogus"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"
    # said once, naming the variable
    assert done.stderr.count("OTEL_PROPAGATORS=bogus") == 1, done.stderr
