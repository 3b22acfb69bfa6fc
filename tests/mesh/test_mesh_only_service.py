"""An agent on the mesh alone is a service with one binding: no HTTP app is
built, ``async with service:`` runs it, and the card it publishes names its mesh
address."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import msgspec
import pytest

from interlingua import Agent, Service, ServiceSettings, client_for
from interlingua.mesh import MeshSettings
from interlingua.mesh.binding import MeshBinding
from tests.mesh.helpers import BROKER

ROOT = Path(__file__).resolve().parents[2]


async def _shout(text: str) -> str:
    return text.upper()


async def test_a_service_with_the_mesh_alone_answers_over_it(ns: str) -> None:
    service = Service(Agent("Shouter", "Shouts.", _shout), ServiceSettings(freeze_gc=False))
    mesh = service.add_binding(MeshBinding(service, MeshSettings(
        url=BROKER, namespace=ns, card_interval=0.5, session_expiry=30, http=False)))
    assert [i.binding for i in service.card.card.interfaces] == ["MQTT"]
    async with service, client_for(mesh.address) as client:
        task = await client.send("hi")
        assert task.artifacts[0].parts[0].text == "HI"  # type: ignore[union-attr]
        card = msgspec.json.decode(mesh.agent.card)
        assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == ["MQTT"]
        # it declares no skill: the mesh card lists the one made from its name, as HTTP's does
        assert card["skills"] == [{"id": "Shouter", "name": "Shouter", "description": "Shouts.",
                                   "tags": ["shouter"]}]
    assert not service.engine.started


async def test_an_agent_on_the_mesh_alone_refuses_push_as_its_card_says(ns: str) -> None:
    """Its card offers no push notifications (the mesh has no calls to set them up),
    so a send carrying a push config is refused with PushNotSupported and no webhook
    is called; before, the task ran and its updates were posted to the URL given."""
    from interlingua.core.calls import SendConfig, SendMessage
    from interlingua.core.errors import PushNotSupported
    from interlingua.core.model import PushConfig
    from interlingua.core.parts import user_message
    from interlingua.server.push.settings import PushSettings

    agent = Agent("Pusher", "Shouts.", _shout, push_notifications=True)
    push = PushSettings(allow_http=True, allow_private_networks=True)
    service = Service(agent, ServiceSettings(freeze_gc=False, push=push))
    mesh = service.add_binding(MeshBinding(service, MeshSettings(
        url=BROKER, namespace=ns, card_interval=0.5, session_expiry=30, http=False)))
    async with service, client_for(mesh.address) as client:
        card = msgspec.json.decode(mesh.agent.card)
        assert card["capabilities"]["pushNotifications"] is False
        config = SendConfig(push_config=PushConfig(url="http://127.0.0.1:9/hook"))
        with pytest.raises(PushNotSupported):
            await client.call(SendMessage(message=user_message("hi"), config=config))
    assert not service.push.enabled


def test_serving_on_the_mesh_alone_builds_no_http_app(ns: str, tmp_path: Path) -> None:
    # every way to build the HTTP host fails here: serving must not need one
    code = textwrap.dedent(f"""
        import os, signal
        import interlingua.host.app as host

        def refuse(*args, **kwargs):
            raise AssertionError("an HTTP app was built")

        host.create_app = host.host_app = refuse
        host.A2AApp.__init__ = refuse
        from interlingua import Agent
        from interlingua.cli.serve import serve
        from interlingua.mesh import MeshSettings

        async def shout(text: str) -> str:
            return text.upper()

        def listening(store, port):
            print("listening", port, flush=True)
            os.kill(os.getpid(), signal.SIGTERM)

        serve(Agent("Shouter", "Shouts.", shout), store="memory://", no_http=True,
              mesh=MeshSettings(url={BROKER!r}, namespace={ns!r}, http=False,
                                session_expiry=30),
              on_listening=listening, drain_seconds=0)
        print("stopped", flush=True)
    """)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["listening", "0", "stopped"]
