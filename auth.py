import asyncio
from interlingua import Client
from interlingua.client import ClientError
from interlingua.core.errors import A2AError
HTTP = "http://127.0.0.1:21014"; GRPC = "grpc://127.0.0.1:21015"
KEY = {"X-API-Key": "dev-only-key-change-me-0123456789"}
BAD = {"X-API-Key": "wrong"}
CONFIGS = [
    ("jsonrpc-1.0", lambda h: Client(HTTP, dialect="1.0", headers=h)),
    ("jsonrpc-0.3", lambda h: Client(HTTP, dialect="0.3", headers=h)),
    ("jsonrpc-0.1", lambda h: Client(HTTP, dialect="0.1", headers=h)),
    ("rest-1.0", lambda h: Client(HTTP, binding="rest", dialect="1.0", headers=h)),
    ("rest-0.3", lambda h: Client(HTTP, binding="rest", dialect="0.3", headers=h)),
    ("grpc-1.0", lambda h: Client(GRPC, dialect="1.0", headers=h)),
    ("grpc-0.3", lambda h: Client(GRPC, dialect="0.3", headers=h)),
    ("card-grpc", lambda h: Client(HTTP, binding="grpc", headers=h)),
]
def short(o):
    if isinstance(o, BaseException):
        tag = "" if isinstance(o, (ClientError, A2AError)) else "RAW "
        return f"{tag}{type(o).__name__}: {str(o)[:140]}"
    return repr(o)[:140]
async def main():
    for name, mk in CONFIGS:
        for hl, h in [("nokey", {}), ("badkey", BAD)]:
            async with mk(h) as c:
                try: print(name, hl, short(await c.send("cal")))
                except BaseException as e: print(name, hl, short(e))
                try: print(name, hl, "stream", short([x async for x in c.stream("cal")]))
                except BaseException as e: print(name, hl, "stream", short(e))
        async with mk(KEY) as c:
            s = c.session()
            a = await s.send("show my calendar")
            b = await s.send({"credential": {"type": "calendar-token", "token": "cal-alice-demo-token"}} and "x", data={"credential": {"type": "calendar-token", "token": "cal-alice-demo-token"}})
            print(name, "auth-required flow:", a.status.state.value, "->", b.status.state.value, a.id == b.id)
            s = c.session()
            evs = [x.state for x in [e async for e in s.stream("show my calendar")]]
            evs2 = [x.state for x in [e async for e in s.stream("x", data={"credential": {"type": "calendar-token", "token": "cal-alice-demo-token"}})]]
            print(name, "auth-required stream flow:", evs[-1], "->", evs2[-1])
asyncio.run(main())
