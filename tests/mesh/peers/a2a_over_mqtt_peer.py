"""Run in the a2a-over-mqtt venv (``.interop/py-a2a-over-mqtt-0.1.0``), never
imported by the suite: that package's requester or responder, for
tests/mesh/test_emqx_interop.py.

    python a2a_over_mqtt_peer.py request PORT ORG UNIT AGENT PAYLOAD
        one request through the package's Requester.stream; each (kind, content)
        it yields is printed as a JSON line
    python a2a_over_mqtt_peer.py respond PORT ORG UNIT AGENT
        the package's Responder: "slow" works until canceled; "boom" fails;
        anything else says "thinking" and answers "echo: <text>"
"""

import asyncio
import json
import sys
import uuid

from a2a_over_mqtt import MqttConfig, Requester, Responder, TopicSpace, build_card


async def request(port: int, org: str, unit: str, agent: str, payload: str) -> None:
    requester = Requester(MqttConfig(host="127.0.0.1", port=port), TopicSpace(org, unit),
                          requester_id="peer", first_reply_timeout=5.0,
                          stream_idle_timeout=5.0, max_attempts=1)
    async for kind, content in requester.stream(agent, payload, uuid.uuid4().hex):
        print(json.dumps([kind, content]), flush=True)


class Peer(Responder):
    async def on_request(self, request, stream):
        if request.text == "slow":
            await stream("working")
            await asyncio.sleep(60)
        if request.text == "boom":
            raise RuntimeError("boom")
        await stream("thinking")
        return f"echo: {request.text}"


async def respond(port: int, org: str, unit: str, agent: str) -> None:
    card = build_card(name="Peer Echo", description="The package's responder.",
                      url=f"mqtt://127.0.0.1:{port}")
    await Peer(agent_id=agent, mqtt=MqttConfig(host="127.0.0.1", port=port),
               topics=TopicSpace(org, unit), card=card).run()


if __name__ == "__main__":
    command, port, org, unit, agent, *rest = sys.argv[1:]
    if command == "request":
        asyncio.run(request(int(port), org, unit, agent, rest[0]))
    else:
        asyncio.run(respond(int(port), org, unit, agent))
