"""The committed gRPC modules are what scripts/gen_grpc makes of the committed
.proto files (run it after changing a proto), and both services' descriptors
load into one process beside each other."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOS = ROOT / "src" / "interlingua" / "grpc_wire" / "protos"


def _gen_grpc():  # scripts/gen_grpc has no .py suffix
    path = ROOT / "scripts" / "gen_grpc"
    loader = importlib.machinery.SourceFileLoader("gen_grpc", str(path))
    spec = importlib.util.spec_from_loader("gen_grpc", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_generated_modules_are_current(tmp_path: Path) -> None:
    made = _gen_grpc().generate(tmp_path)
    assert {p.name for p in made} == {
        p.name for p in PROTOS.iterdir() if p.suffix in (".py", ".pyi") and p.stem != "__init__"}
    stale = [p.name for p in made if p.read_bytes() != (PROTOS / p.name).read_bytes()]
    assert not stale, f"regenerate with scripts/gen_grpc: {stale} differ"


def test_both_services_load_in_one_pool() -> None:
    from interlingua.grpc_wire.protos import interlingua_a2a_v1_pb2 as pb03
    from interlingua.grpc_wire.protos import interlingua_lf_a2a_v1_pb2 as pb1

    assert pb1.DESCRIPTOR.services_by_name["A2AService"].full_name == "lf.a2a.v1.A2AService"
    assert pb03.DESCRIPTOR.services_by_name["A2AService"].full_name == "a2a.v1.A2AService"
    assert not pb1.DESCRIPTOR.name.endswith("a2a.proto")  # not the name other libraries use
    assert {m.name for m in pb1.DESCRIPTOR.services_by_name["A2AService"].methods} == {
        "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask",
        "SubscribeToTask", "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs", "GetExtendedAgentCard",
        "DeleteTaskPushNotificationConfig"}
    assert {m.name for m in pb03.DESCRIPTOR.services_by_name["A2AService"].methods} == {
        "SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "TaskSubscription",
        "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfig", "GetAgentCard", "DeleteTaskPushNotificationConfig"}
