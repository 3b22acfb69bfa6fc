import asyncio, time
from interlingua import Client
from interlingua.client import ClientError, TaskGenerationMismatch, GenerationsNotSupported
from interlingua.core.errors import A2AError
HTTP = "http://127.0.0.1:21012"; GRPC = "grpc://127.0.0.1:21013"
CONFIGS = [
    ("card-jsonrpc", lambda: Client(HTTP, binding="jsonrpc")),
    ("card-rest", lambda: Client(HTTP, binding="rest")),
    ("card-grpc", lambda: Client(HTTP, binding="grpc")),
    ("forced-jsonrpc-1.1", lambda: Client(HTTP, dialect="1.1")),
    ("forced-rest-1.1", lambda: Client(HTTP, binding="rest", dialect="1.1")),
    ("forced-grpc-1.1", lambda: Client(GRPC, dialect="1.1")),
    ("grpc-addr", lambda: Client(GRPC)),
]
def short(o):
    if isinstance(o, BaseException):
        tag = "" if isinstance(o, (ClientError, A2AError)) else "RAW "
        return f"{tag}{type(o).__name__}: {str(o)[:140]}"
    return repr(o)[:140]
async def main():
    for name, mk in CONFIGS:
        async with mk() as c:
            async def run(label, coro):
                try: r = await coro; print(name, label, short(r) if not hasattr(r, "generation") else f"gen={r.generation} state={r.status.state.value}")
                except BaseException as e: print(name, label, short(e))
            t = await c.send("ask")
            print(name, "version", c.version, "gen", t.generation)
            await run("send-ifmatch-wrong", c.send("x", task_id=t.id, if_generation_match=t.generation + 5))
            await run("send-ifmatch-right", c.send("ask", task_id=t.id, if_generation_match=t.generation))
            t2 = await c.send("slow 10", blocking=False)
            t0 = time.monotonic()
            await run("longpoll", c.get_task(t2.id, after_generation=t2.generation, wait=5))
            print(name, f"  took {time.monotonic()-t0:.1f}s")
            evs = [(e.seq, e.generation, e.reconciled) async for e in c.stream("chunks")]
            print(name, "stream gens", evs)
asyncio.run(main())
