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
    "OTEL_TRACES_SAMPLER": "sometimes",
}


@pytest.mark.parametrize(("name", "value"), BAD.items(), ids=list(BAD))
def test_serve_otel_refuses_a_bad_value_in_one_line(name: str, value: str) -> None:
    # (a traceback and exit 1, or for a timeout that is no number a traceback logged at start)
    done = interlingua("serve", "tests/client/agents.py", "--store", "memory://",
                       "--port", "0", "--otel", env={name: value})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert name in done.stderr and value in done.stderr


@pytest.mark.parametrize("arg", ["2", "half", "-0.1"])
def test_serve_otel_refuses_a_sampling_ratio_out_of_range(arg: str) -> None:
    # (the SDK logged a warning and sampled every trace)
    done = interlingua("serve", "tests/client/agents.py", "--store", "memory://",
                       "--port", "0", "--otel", env={"OTEL_TRACES_SAMPLER": "traceidratio",
                                                     "OTEL_TRACES_SAMPLER_ARG": arg})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: OTEL_TRACES_SAMPLER_ARG={arg} ")
    assert done.stderr.count("\n") == 1, done.stderr


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


@pytest.mark.parametrize(("name", "arg", "described"), [
    ("", "", "ParentBased{root:AlwaysOnSampler"),
    ("always_off", "", "AlwaysOffSampler"),
    ("TraceIdRatio", "0.25", "TraceIdRatioBased{0.25}"),
    ("parentbased_traceidratio", "", "ParentBased{root:TraceIdRatioBased{1.0}"),
])
def test_the_sampler_is_the_one_the_variables_name(monkeypatch: pytest.MonkeyPatch,
                                                   name: str, arg: str,
                                                   described: str) -> None:
    from interlingua.observability.tracing import _sampler

    monkeypatch.setenv("OTEL_TRACES_SAMPLER", name)
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", arg)
    assert _sampler().get_description().startswith(described)
