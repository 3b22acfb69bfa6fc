"""The A2A-over-MQTT profile (EMQX's ``mqtt-for-ai``, spec 0.1) beside the SAM layout.

Topics ``$a2a/v1/{request|reply|discovery|event}/{org}/{unit}/{agent}``; v1.0
JSON-RPC payloads; every answer on the request's MQTT 5 Response Topic with its
Correlation Data; the task id chosen by the requester; presence by a retained
card and a last will (docs/mesh.md, "The A2A-over-MQTT profile").

``topics`` and ``wire`` are pure; ``agent``, ``requester``, ``client``,
``presence`` and ``link`` (the gateway's side) do the I/O.
"""
