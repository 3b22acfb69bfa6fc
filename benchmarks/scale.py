"""Scale-out side by side with the official SDK: PostgreSQL stores, replicas, a load balancer.

    .venv/bin/python benchmarks/scale.py [--quick] [--rounds R] [--duration S] [--out DIR]

Three cases, in one run, each on a fresh PostgreSQL database of its own (made and dropped
here; 127.0.0.1:5432, trust auth) and, for interlingua's replicas, a fresh Redis prefix:

* ``cross``: two replicas of each implementation on one database, a turn running on
  replica B and a stream following it, held on B itself (same) or on A (cross).
  interlingua: ``interlingua serve --store postgresql://… --bus redis://…``; a2a-sdk 1.3:
  its cluster mode (``VersionedDatabaseTaskStore`` + ``DatabaseTaskEventStream``,
  ``servers/a2a_sdk_db_echo.py``). Latency: from the executor's emit (the chunk's text
  is the wall-clock time, one chunk every 2 ms) to the client reading the event, p50 and
  p99; throughput: events/s of a stream of chunks emitted back to back, and the CPU per
  event of both replicas and of the database's backends meanwhile.
* ``store``: one server process per store, pinned to CPU 0 (the load generators to CPU
  1), as ``run.py`` runs them: interlingua on PostgreSQL and on SQLite
  (``servers/interlingua_echo.py``), a2a-sdk 1.3 with ``DatabaseTaskStore`` on PostgreSQL.
  Unary ``SendMessage`` with wrk at concurrency 1 and 16, and streams of 1,000 chunks
  (``stream.py``, one at a time): req/s, events/s, server CPU per request or event, and
  the CPU of the PostgreSQL backends serving the database per request or event.
* ``lb``: 1, 2 and 3 ``interlingua serve`` replicas (PostgreSQL + Redis) behind HAProxy
  with the configuration of ``docs/deployment.md`` (plus a check timeout of 5 s); wrk
  at concurrency 16 through it:
  req/s, and CPU per request of the replicas, of HAProxy and of the database backends.

PostgreSQL CPU is the utime + stime of the backend processes whose title names the case's
database (``/proc/<pid>/cmdline``), before and after: the server-wide processes (WAL
writer, checkpointer) are shared with whatever else uses the server and are left out.
The report goes to stdout and to ``benchmarks/results/scale.md`` and ``scale.json``
(``--out DIR`` writes both to ``DIR``); progress to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import datetime as dt
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import msgspec
import redis

import launch
import load
import procstat
import stream
from payloads import V1_0, stream_text, verify_unary
from targets import BENCH_DIR, PROJECT_PYTHON, ROOT, SDK_ENV, SDK_VENV, SERVERS_DIR, Target

RESULTS = BENCH_DIR / "results"
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
PG_BASE = "postgresql://postgres@127.0.0.1:5432/"
REDIS = "redis://127.0.0.1:6379/0"
SDK_PYTHON = SDK_VENV / "bin" / "python"
SCALE_AGENT = SERVERS_DIR / "interlingua_scale_agent.py"
HEADERS = {"A2A-Version": "1.0"}
#: seconds until every backend has reported what it did (see pg_counters)
SETTLE = 10.5


def log(text: str) -> None:
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {text}\n")
    sys.stderr.flush()


# --------------------------------------------------------------------- PostgreSQL


@contextlib.contextmanager
def database(tag: str, synchronous_commit: str = "on") -> Iterator[str]:
    """A fresh database for one case (its name), dropped afterwards; its sessions'
    ``synchronous_commit`` is ``synchronous_commit`` (the server's default: on)."""
    name = f"bench_{tag}_{uuid.uuid4().hex[:8]}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(PG_ADMIN)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    if synchronous_commit != "on":
        asyncio.run(run(f'ALTER DATABASE "{name}" SET synchronous_commit = {synchronous_commit}'))
    try:
        yield name
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def commit_latency(synchronous_commit: str) -> tuple[float, float]:
    """p50 and p99 (ms) of a one-row INSERT committed on its own, 300 times, in a
    database of its own: what one durable commit costs on this machine now."""

    async def run(dsn: str) -> list[float]:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("CREATE TABLE probe (a integer)")
            times = []
            for _ in range(300):
                t = time.perf_counter()
                await conn.execute("INSERT INTO probe VALUES (1)")
                times.append((time.perf_counter() - t) * 1000)
            return times
        finally:
            await conn.close()

    with database("commit", synchronous_commit) as db:
        times = asyncio.run(run(PG_BASE + db))
    return pct(times, 0.5), pct(times, 0.99)


def pg_cpu(dbname: str) -> float:
    """CPU seconds of the PostgreSQL backends serving ``dbname`` (live ones)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            title = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if title.startswith("postgres:") and dbname in title.split():
            stat = procstat.read_stat(int(entry.name))
            if stat is not None:
                total += (stat.utime + stat.stime) / procstat.CLOCK_TICKS
    return total


def pg_counters(dbname: str) -> tuple[int, int]:
    """(transactions committed in ``dbname``, WAL flushes of the whole server).

    Backends report their counts at most once a second while busy; what one did
    in its last second before it went idle is reported only after ten seconds
    idle (PostgreSQL 15's ``PGSTAT_IDLE_INTERVAL``). ``measure_rate`` therefore
    reads them SETTLE seconds after its load stopped. ``measure_unary`` reads
    them a second and a half after: the warm-up's last second, reported late,
    falls into its window as the window's own last second falls out, both at
    the same saturating rate, so the count per request holds (it matched the
    statements PostgreSQL logged per request)."""

    async def run() -> tuple[int, int]:
        conn = await asyncpg.connect(PG_ADMIN)
        try:
            commits = await conn.fetchval(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = $1", dbname)
            syncs = await conn.fetchval("SELECT wal_sync FROM pg_stat_wal")
            return int(commits or 0), int(syncs or 0)
        finally:
            await conn.close()

    return asyncio.run(run())


class Cpu:
    """CPU seconds of some process trees and of a database's backends since creation."""

    def __init__(self, pids: list[int], dbname: str | None) -> None:
        self.pids, self.dbname = pids, dbname
        self.start = self._now()

    def _now(self) -> tuple[float, float]:
        servers = sum(procstat.cpu_seconds(p) for p in self.pids)
        return servers, pg_cpu(self.dbname) if self.dbname else 0.0

    def read(self) -> tuple[float, float]:
        now = self._now()
        return now[0] - self.start[0], now[1] - self.start[1]


# ----------------------------------------------------------------------- processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclasses.dataclass
class Proc:
    proc: subprocess.Popen[bytes]
    url: str
    log_path: Path

    @property
    def pid(self) -> int:
        return self.proc.pid


def wait_http(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: exited while starting:\n{log_path.read_text()[-2000:]}")
        try:
            httpx.get(url + "/healthz", timeout=0.5)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url}: did not answer within 60 s")


def spawn(cmd: list[str], env: dict[str, str], workdir: Path, name: str, port: int,
          cpu: int | None = None) -> Proc:
    log_path = workdir / f"{name}.log"
    if cpu is not None:
        cmd = ["taskset", "-c", str(cpu), *cmd]
    with log_path.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                                start_new_session=True)
    p = Proc(proc, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_http(proc, p.url, log_path)
    except BaseException:
        stop(p)
        raise
    return p


def stop(p: Proc) -> None:
    if p.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.proc.pid, signal.SIGTERM)
        try:
            p.proc.wait(15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.proc.pid, signal.SIGKILL)
            p.proc.wait(10)


def interlingua_replica(store: str, bus: str, workdir: Path, name: str) -> Proc:
    port = free_port()
    cmd = [str(PROJECT_PYTHON), "-m", "interlingua.cli.main", "serve", str(SCALE_AGENT),
           "--port", str(port), "--store", store, "--bus", bus, "--log-level", "warning",
           "--drain-seconds", "0", "--public-url", f"http://127.0.0.1:{port}/"]
    return spawn(cmd, dict(os.environ, PYTHONUNBUFFERED="1"), workdir, name, port)


def sdk_replica(store: str, mode: str, workdir: Path, name: str, cpu: int | None = None) -> Proc:
    port = free_port()
    target = SDK_DB_TARGET
    env = dict(os.environ, **SDK_ENV, PYTHONUNBUFFERED="1", BENCH_STORE_URL=store,
               BENCH_SDK_MODE=mode, BENCH_PUBLIC_URL=f"http://127.0.0.1:{port}/")
    return spawn(launch.uvicorn_command(target, port), env, workdir, name, port, cpu)


SDK_DB_TARGET = Target(
    name="a2a-sdk-postgres", description="a2a-sdk 1.x, DatabaseTaskStore on PostgreSQL",
    python=SDK_PYTHON, module="a2a_sdk_db_echo", attr="create", factory=True, dialect=V1_0)
IL_ECHO_TARGET = Target(
    name="interlingua", description="interlingua (servers/interlingua_echo.py)",
    python=PROJECT_PYTHON, module="interlingua_echo", attr="create", factory=True, dialect=V1_0)


def echo_server(store: str, workdir: Path, name: str, cpu: int | None) -> Proc:
    port = free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1", BENCH_STORE_URL=store,
               BENCH_PUBLIC_URL=f"http://127.0.0.1:{port}/")
    return spawn(launch.uvicorn_command(IL_ECHO_TARGET, port), env, workdir, name, port, cpu)


# ---------------------------------------------------------------- cross-replica case


def rpc(method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def follow(runner: str, reader: str, n: int, pause: float) -> tuple[list[float], float]:
    """Start a ``ts`` turn on ``runner``, follow it on ``reader``: (latencies s, events/s)."""
    async with httpx.AsyncClient(timeout=300) as client:
        sent = await client.post(runner + "/", headers=HEADERS, json=rpc("SendMessage", {
            "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": f"ts {n} {pause}"}]},
            "configuration": {"returnImmediately": True}}))
        task_id = sent.json()["result"]["task"]["id"]
        latencies: list[float] = []
        first = last = 0.0
        buffer = b""
        final = False
        seen: list[str] = []
        async with client.stream("POST", reader + "/", headers=HEADERS,
                                 json=rpc("SubscribeToTask", {"id": task_id})) as resp:
            if resp.status_code != 200:
                raise RuntimeError(f"SubscribeToTask: HTTP {resp.status_code}")
            async for chunk in resp.aiter_raw():
                buffer = (buffer + chunk).replace(b"\r\n", b"\n")
                *frames, buffer = buffer.split(b"\n\n")
                now = time.time()
                for frame in frames:
                    for line in frame.split(b"\n"):
                        if not line.startswith(b"data:"):
                            continue
                        msg = msgspec.json.decode(line[5:])
                        if "error" in msg:
                            raise RuntimeError(f"stream error: {msg['error']}")
                        result = msg["result"]
                        update = result.get("artifactUpdate")
                        if update is None:
                            status = result.get("statusUpdate") or result.get("task") or {}
                            state = status.get("status", {}).get("state")
                            final = final or state == "TASK_STATE_COMPLETED"
                            # chunks emitted before the subscription: in its snapshot
                            seen += [p.get("text", "")
                                     for a in result.get("task", {}).get("artifacts", ())
                                     for p in a.get("parts", ())]
                            continue
                        text = update["artifact"]["parts"][0]["text"]
                        seen.append(text)
                        latencies.append(now - float(text.split()[0]))
                        first = first or now
                        last = now
    # every chunk, in the snapshot the subscription starts with or after it (a2a-sdk
    # may send one in both at the start: a repeat, not a loss)
    if not final or len(set(seen)) != n:
        raise RuntimeError(f"stream of {n}: {len(set(seen))} distinct chunks, "
                           f"completed={final}")
    rate = (len(latencies) - 1) / (last - first) if last > first else 0.0
    return latencies, rate


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cross_case(impl: str, args: argparse.Namespace, workdir: Path,
               synchronous_commit: str = "on") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with database(f"cross_{impl.replace('-', '_')}", synchronous_commit) as db:
        if impl == "interlingua":
            bus = f"{REDIS}?prefix=bench-{uuid.uuid4().hex[:8]}"
            a = interlingua_replica(PG_BASE + db, bus, workdir, f"{impl}-a")
            b = interlingua_replica(PG_BASE + db, bus, workdir, f"{impl}-b")
            events = args.events
        else:
            store = "postgresql+asyncpg://postgres@127.0.0.1:5432/" + db
            a = sdk_replica(store, "cluster", workdir, f"{impl}-a")
            b = sdk_replica(store, "cluster", workdir, f"{impl}-b")
            events = args.sdk_events
        try:
            for label, reader in (("same", b), ("cross", a)):
                lat: list[float] = []
                rates, cpu_ev, pg_ev = [], [], []
                # unmeasured: the first stream of a fresh process pays for code paths
                # run for the first time and for new connections (pools, bus)
                asyncio.run(follow(b.url, reader.url, 300, 0.002))
                for _ in range(args.runs):
                    got, _ = asyncio.run(follow(b.url, reader.url, 300, 0.002))
                    lat += got[10:]  # the first events race the subscription
                    meter = Cpu([a.pid, b.pid], db)
                    got, rate = asyncio.run(follow(b.url, reader.url, events, 0))
                    servers, pg = meter.read()
                    rates.append(rate)
                    cpu_ev.append(servers / len(got) * 1e6)
                    pg_ev.append(pg / len(got) * 1e6)
                row = {"impl": impl, "synchronous_commit": synchronous_commit,
                       "held_on": label, "p50_ms": pct(lat, 0.5) * 1000,
                       "p99_ms": pct(lat, 0.99) * 1000, "events_per_s": statistics.median(rates),
                       "cpu_us_per_event": statistics.median(cpu_ev),
                       "pg_us_per_event": statistics.median(pg_ev), "events": events,
                       "samples": {"rates": rates, "cpu_us_per_event": cpu_ev,
                                   "pg_us_per_event": pg_ev, "latencies": len(lat)}}
                log(f"cross {impl} {synchronous_commit} {label}: p50 {row['p50_ms']:.2f} ms p99 {row['p99_ms']:.2f} ms "
                    f"{row['events_per_s']:,.0f} ev/s")
                rows.append(row)
        finally:
            stop(a)
            stop(b)
    return rows


# ------------------------------------------------------------------------ store case


def unary_script(workdir: Path) -> Path:
    return load.write_script(workdir, "unary.lua", load.lua_script(
        V1_0.body_template(), V1_0.headers, V1_0.completed_marker))


def check_unary(url: str) -> None:
    resp = httpx.post(url + "/", content=V1_0.body(1), headers=V1_0.headers, timeout=30)
    verify_unary(V1_0, 1, resp.status_code, resp.content)


def redis_commands() -> int:
    """Commands the Redis of the benchmark has served since it started, all kinds."""
    client = redis.Redis.from_url(REDIS)
    try:
        stats: dict[str, Any] = client.info("commandstats")  # type: ignore[assignment]
    finally:
        client.close()
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


def measure_unary(p: Proc, db: str | None, script: Path, conc: int, duration: float,
                  load_cpu: int | None, *, also: dict[str, list[int]] | None = None,
                  count_redis: bool = False) -> dict[str, Any]:
    """wrk on ``p`` after a 1 s warm-up; CPU of ``p``'s tree and of ``db``'s backends
    (and of each group of processes in ``also``, as ``<name>_ms_per_req``)."""
    load.run_wrk(p.url + "/", script, conc, 1, load_cpu)  # warm-up
    if db:
        time.sleep(1.5)  # the warm-up's counts reported (pg_counters)
        counted = pg_counters(db)
    groups = {name: Cpu(pids, None) for name, pids in (also or {}).items()}
    commands = redis_commands() if count_redis else 0
    meter = Cpu([p.pid], db)
    result = load.run_wrk(p.url + "/", script, conc, duration, load_cpu)
    server, pg = meter.read()
    spent = {name: group.read()[0] for name, group in groups.items()}
    if count_redis:
        commands = redis_commands() - commands
    n = max(result.requests, 1)
    row = {"concurrency": conc, "req_per_s": result.requests_per_s, "p50_ms": result.p50_ms,
           "p99_ms": result.p99_ms, "errors": result.errors, "requests": result.requests,
           "server_ms_per_req": server / n * 1000, "pg_ms_per_req": pg / n * 1000}
    for name, seconds in spent.items():
        row[f"{name}_ms_per_req"] = seconds / n * 1000
    if count_redis:
        row["redis_commands_per_req"] = commands / n
    if db:
        time.sleep(1.5)
        commits, syncs = (b - a for a, b in zip(counted, pg_counters(db), strict=True))
        # PostgreSQL flushes the WAL once for all the commits waiting at that moment:
        # fewer flushes than commits is group commit done by the database itself
        row["commits_per_req"] = commits / n
        row["wal_flushes_per_commit"] = syncs / max(commits, 1)
    return row


def measure_stream(p: Proc, db: str | None, duration: float, load_cpu: int | None
                   ) -> dict[str, Any]:
    port = int(p.url.rsplit(":", 1)[1])
    template = V1_0.body_template(V1_0.stream_method, text=stream_text(1000))
    meter = Cpu([p.pid], db)
    result = stream.run_client("127.0.0.1", port, "/", template, V1_0.headers, 1, duration,
                               1002, load_cpu, str(PROJECT_PYTHON))
    server, pg = meter.read()
    n = max(result.events, 1)
    return {"events_per_s": result.events_per_s, "streams": result.streams,
            "ttfe_p50_ms": result.ttfe_p50_ms, "errors": result.errors,
            "server_us_per_event": server / n * 1e6, "pg_us_per_event": pg / n * 1e6}


STORE_SERVERS = ("interlingua-postgres", "interlingua-sqlite", "a2a-sdk-postgres")


def store_case(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    script = unary_script(workdir)
    for rnd in range(args.rounds):
        order = STORE_SERVERS if rnd % 2 == 0 else tuple(reversed(STORE_SERVERS))
        for name in order:
            db_ctx = database(name.replace("-", "_"), args.synchronous_commit) \
                if "postgres" in name else \
                contextlib.nullcontext(None)
            with db_ctx as db:
                here = workdir / f"{name}-{rnd}"
                here.mkdir()
                if name == "interlingua-postgres":
                    p = echo_server(PG_BASE + str(db), here, name, args.server_cpu)
                elif name == "interlingua-sqlite":
                    p = echo_server(f"sqlite:///{here}/tasks.db", here, name, args.server_cpu)
                else:
                    p = sdk_replica("postgresql+asyncpg://postgres@127.0.0.1:5432/" + str(db),
                                    "store", here, name, args.server_cpu)
                try:
                    check_unary(p.url)
                    for conc in args.concurrency:
                        row = measure_unary(p, db, script, conc, args.duration, args.load_cpu)
                        samples.append({"server": name, "round": rnd, "case": "unary", **row})
                        log(f"store {name} c={conc}: {row['req_per_s']:,.0f} req/s "
                            f"{row['server_ms_per_req']:.3f} + pg {row['pg_ms_per_req']:.3f} ms/req")
                    row = measure_stream(p, db, args.duration, args.load_cpu)
                    samples.append({"server": name, "round": rnd, "case": "stream", **row})
                    log(f"store {name} stream: {row['events_per_s']:,.0f} ev/s "
                        f"{row['server_us_per_event']:.1f} + pg {row['pg_us_per_event']:.1f} us/ev")
                finally:
                    stop(p)
    return samples


# --------------------------------------------------------------- load balancer case

HAPROXY_CFG = """global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    # not in docs/deployment.md: a health check otherwise times out after its
    # interval (500 ms), which a replica queueing requests on a loaded machine
    # exceeds, and HAProxy takes it out (fall 1) and answers 503
    timeout check 5s
    option http-buffer-request
    retry-on conn-failure empty-response 503
    retries 3
    option redispatch

frontend a2a
    bind 127.0.0.1:{port}
    default_backend replicas
    http-response set-header X-Served-By %s

backend replicas
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    default-server check inter 500ms fall 1 rise 2
{servers}
"""


def haproxy(replicas: list[Proc], workdir: Path) -> Proc:
    port = free_port()
    servers = "\n".join(f"    server r{i} {r.url.removeprefix('http://')}"
                        for i, r in enumerate(replicas))
    cfg = workdir / f"haproxy-{len(replicas)}.cfg"
    cfg.write_text(HAPROXY_CFG.format(port=port, servers=servers))
    exe = "haproxy" if subprocess.run(["which", "haproxy"], capture_output=True).returncode == 0 \
        else "/usr/sbin/haproxy"
    p = spawn([exe, "-db", "-f", str(cfg)], dict(os.environ), workdir,
              f"haproxy-{len(replicas)}", port)
    time.sleep(1.5)  # every server's first health checks (rise 2, 500 ms apart)
    return p


async def _at_rate(url: str, rate: float, duration: float) -> tuple[int, int]:
    """Unary sends to ``url`` at ``rate`` a second for ``duration`` seconds, each
    at its time whether or not the ones before it were answered (an open loop:
    the load does not depend on how fast the servers are). (answered, wrong)."""
    nonce = time.time_ns()
    total = int(rate * duration)
    answered = wrong = 0
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:

        async def one(n: int) -> None:
            nonlocal answered, wrong
            body = V1_0.body(n).replace(b'-%d"' % n, b'-%d-%d"' % (nonce, n))
            try:
                reply = await client.post(url + "/", content=body, headers=V1_0.headers)
                ok = reply.status_code == 200 and V1_0.completed_marker.encode() in reply.content
            except httpx.HTTPError:
                ok = False
            answered += ok
            wrong += not ok

        start = time.monotonic()
        pending = []
        for n in range(total):
            delay = start + n / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            pending.append(asyncio.ensure_future(one(n)))
        await asyncio.gather(*pending)
    return answered, wrong


def measure_rate(front: Proc, db: str, rate: float, duration: float,
                 groups: dict[str, list[int]]) -> dict[str, Any]:
    """A fixed request rate through ``front``; CPU per request of each group."""
    asyncio.run(_at_rate(front.url, rate, 1.0))  # warm-up
    time.sleep(SETTLE)  # the warm-up's counts reported (pg_counters)
    counted = pg_counters(db)
    meters = {name: Cpu(pids, None) for name, pids in groups.items()}
    pg_meter = Cpu([], db)
    commands = redis_commands()
    answered, wrong = asyncio.run(_at_rate(front.url, rate, duration))
    spent = {name: m.read()[0] for name, m in meters.items()}
    pg = pg_meter.read()[1]
    commands = redis_commands() - commands
    time.sleep(SETTLE)
    commits = pg_counters(db)[0] - counted[0]
    n = max(answered, 1)
    row: dict[str, Any] = {"rate": rate, "requests": answered, "errors": wrong,
                           "pg_ms_per_req": pg / n * 1000, "commits_per_req": commits / n,
                           "redis_commands_per_req": commands / n}
    for name, seconds in spent.items():
        row[f"{name}_ms_per_req"] = seconds / n * 1000
    return row


def lb_case(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    samples: list[dict[str, Any]] = []
    script = unary_script(workdir)
    with database("lb", args.synchronous_commit) as db:
        bus = f"{REDIS}?prefix=bench-{uuid.uuid4().hex[:8]}"
        replicas = [interlingua_replica(PG_BASE + db, bus, workdir, f"lb-{i}") for i in range(3)]
        try:
            for rnd in range(args.rounds):
                counts = (1, 2, 3) if rnd % 2 == 0 else (3, 2, 1)
                for n in counts:
                    front = haproxy(replicas[:n], workdir)
                    try:
                        check_unary(front.url)
                        for conc in args.lb_concurrency:
                            # measure_unary's own meter reads the HAProxy process;
                            # the replicas out of the rotation still run, and still
                            # hear of the others' writes if anything is sent to them
                            row = measure_unary(front, db, script, conc, args.duration, None,
                                                also={"replicas": [r.pid for r in replicas[:n]],
                                                      "idle": [r.pid for r in replicas[n:]]},
                                                count_redis=True)
                            row["haproxy_ms_per_req"] = row.pop("server_ms_per_req")
                            row["load"] = "closed"
                            samples.append({"replicas": n, "round": rnd, **row})
                            log(f"lb {n} replicas c={conc}: {row['req_per_s']:,.0f} req/s "
                                f"{row['replicas_ms_per_req']:.3f} + pg {row['pg_ms_per_req']:.3f}"
                                f" + haproxy {row['haproxy_ms_per_req']:.3f} ms/req")
                        # a fixed total rate, then the same rate for each replica
                        rates = [("rate", r) for r in args.lb_rate]
                        rates += [("per-replica", r * n) for r in args.lb_rate_per_replica]
                        for kind, rate in rates:
                            row = measure_rate(front, db, rate, args.duration, {
                                "replicas": [r.pid for r in replicas[:n]],
                                "idle": [r.pid for r in replicas[n:]],
                                "haproxy": [front.pid]})
                            row["load"] = kind
                            row["per_replica"] = rate / n
                            samples.append({"replicas": n, "round": rnd, **row})
                            log(f"lb {n} replicas {rate:g} req/s: {row['errors']} errors, "
                                f"{row['replicas_ms_per_req']:.3f} + pg {row['pg_ms_per_req']:.3f}"
                                f" + haproxy {row['haproxy_ms_per_req']:.3f} ms/req")
                    finally:
                        stop(front)
        finally:
            for r in replicas:
                stop(r)
    return samples


# ----------------------------------------------------------------------------- report


def med(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def report(args: argparse.Namespace, cross: list[dict[str, Any]], store: list[dict[str, Any]],
           lb: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    out = ["# Scale-out: PostgreSQL, replicas, a load balancer", "",
           f"Run {meta['date']} on {meta['machine']}: `{meta['command']}`.", "",
           meta["note"], "",
           "PostgreSQL 127.0.0.1:5432, `synchronous_commit` "
           f"{meta['synchronous_commit']} in the databases of the cases. One durable commit "
           "(a one-row INSERT on its own) took p50 / p99 "
           f"{meta['commit_ms']['before'][0]:.2f} / {meta['commit_ms']['before'][1]:.2f} ms "
           "before the run and "
           f"{meta['commit_ms']['after'][0]:.2f} / {meta['commit_ms']['after'][1]:.2f} ms after "
           "it: every figure below that waits for a commit carries it.", ""]
    if cross:
        by = {(r["impl"], r["held_on"]): r for r in cross}
        out += ["## Cross-replica streaming", "",
                "Two replicas on one PostgreSQL database; the turn runs on B, the stream is "
                "held on B (same) or A (cross). interlingua: `interlingua serve` with a Redis "
                "bus; a2a-sdk 1.3.0: cluster mode (`VersionedDatabaseTaskStore` + "
                "`DatabaseTaskEventStream`, polling every 0.5 s). Latency from the executor's "
                f"emit to the client's read, one chunk every 2 ms, 290 per run, {args.runs} "
                "runs after one unmeasured run (a fresh process's first stream). Events/s: a stream of chunks emitted back to back "
                f"(interlingua {args.events:,}, a2a-sdk {args.sdk_events:,}), median of "
                f"{args.runs} runs; CPU per event of both replicas together and of the "
                "database's backends over that stream.", "",
                "| implementation | stream held on | latency p50 (ms) | latency p99 (ms) "
                "| events/s | replicas CPU µs/event | PostgreSQL CPU µs/event |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
        for r in cross:
            out.append(f"| {r['impl']} | {r['held_on']} replica | {r['p50_ms']:.2f} | "
                       f"{r['p99_ms']:.2f} | {fmt(r['events_per_s'])} | "
                       f"{r['cpu_us_per_event']:.1f} | {r['pg_us_per_event']:.1f} |")
        il, sdk = by.get(("interlingua", "cross")), by.get(("a2a-sdk", "cross"))
        if il and sdk:
            out += ["", f"Cross replica, interlingua / a2a-sdk: events/s "
                    f"{il['events_per_s'] / sdk['events_per_s']:.1f}x, latency p50 "
                    f"{sdk['p50_ms'] / il['p50_ms']:.0f}x lower, p99 "
                    f"{sdk['p99_ms'] / il['p99_ms']:.0f}x lower."]
        same = by.get(("interlingua", "same"))
        if il and same:
            out += [f"interlingua, cross / same replica: events/s "
                    f"{il['events_per_s'] / same['events_per_s']:.2f}, CPU per event (replicas "
                    f"+ PostgreSQL) {(il['cpu_us_per_event'] + il['pg_us_per_event']) / (same['cpu_us_per_event'] + same['pg_us_per_event']):.2f}."]
        out.append("")
    if store:
        out += ["## One server per store: unary SendMessage and 1,000-chunk streams", "",
                f"Server pinned to CPU {args.server_cpu}, wrk and the stream client to CPU "
                f"{args.load_cpu}; PostgreSQL unpinned. Medians over {args.rounds} rounds of "
                f"{args.duration:g} s per measurement; every server starts afresh each round.",
                "Commits/req: transactions committed in the case's database per request (read-only "
                "ones too: a query outside a transaction is one); "
                "WAL flushes/commit: the server's WAL flushes (`pg_stat_wal.wal_sync`) per "
                "commit. Below 1, PostgreSQL already flushed several transactions' commits at "
                "once (its own group commit).",
                "", "| server | c | req/s | p50 / p99 ms | server CPU ms/req | "
                "PostgreSQL CPU ms/req | commits/req | WAL flushes/commit | errors "
                "| vs a2a-sdk (req/s) |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for conc in args.concurrency:
            base_rows = [s for s in store if s["case"] == "unary" and s["concurrency"] == conc
                         and s["server"] == "a2a-sdk-postgres"]
            base = med(base_rows, "req_per_s") if base_rows else 0.0
            for name in STORE_SERVERS:
                rows = [s for s in store if s["case"] == "unary" and s["server"] == name
                        and s["concurrency"] == conc]
                if not rows:
                    continue
                rps = med(rows, "req_per_s")
                pg = commits = flushes = "-"
                if name != "interlingua-sqlite":
                    pg = f"{med(rows, 'pg_ms_per_req'):.3f}"
                    commits = f"{med(rows, 'commits_per_req'):.2f}"
                    flushes = f"{med(rows, 'wal_flushes_per_commit'):.2f}"
                out.append(f"| {name} | {conc} | {fmt(rps)} | {med(rows, 'p50_ms'):.2f} / "
                           f"{med(rows, 'p99_ms'):.2f} | {med(rows, 'server_ms_per_req'):.3f} | "
                           f"{pg} | {commits} | {flushes} | {sum(r['errors'] for r in rows)} | "
                           f"{rps / base if base else float('nan'):.1f}x |")
        out += ["", "| server | events/s (1 stream) | first event p50 ms | server CPU µs/event "
                "| PostgreSQL CPU µs/event | vs a2a-sdk (events/s) |",
                "| --- | ---: | ---: | ---: | ---: | ---: |"]
        base_rows = [s for s in store if s["case"] == "stream" and s["server"] == "a2a-sdk-postgres"]
        base = med(base_rows, "events_per_s") if base_rows else 0.0
        for name in STORE_SERVERS:
            rows = [s for s in store if s["case"] == "stream" and s["server"] == name]
            if not rows:
                continue
            eps = med(rows, "events_per_s")
            pg = "-" if name == "interlingua-sqlite" else f"{med(rows, 'pg_us_per_event'):.1f}"
            out.append(f"| {name} | {fmt(eps)} | {med(rows, 'ttfe_p50_ms'):.2f} | "
                       f"{med(rows, 'server_us_per_event'):.1f} | {pg} | "
                       f"{eps / base if base else float('nan'):.1f}x |")
        out.append("")
    if lb:
        out += ["## Replicas behind HAProxy", "",
                "1, 2 and 3 `interlingua serve` replicas on one PostgreSQL database and one "
                "Redis, behind HAProxy (the configuration of docs/deployment.md, plus "
                "`timeout check 5s`: with the check timing out after its 500 ms interval, a "
                "replica slowed by a loaded machine is taken out and HAProxy answers 503); "
                "unary "
                "SendMessage through it with wrk. Nothing pinned: replicas, HAProxy, "
                "PostgreSQL, Redis and wrk share the machine's "
                f"{os.cpu_count()} CPUs, so req/s cannot grow with replicas here; the figure "
                f"to watch is CPU per request. Medians over {args.rounds} rounds.", "",
                "wrk's closed loop keeps the two cores busy: with three replicas, "
                "PostgreSQL, HAProxy and wrk on them, each process waits for a core and "
                "finds its caches cold, so there CPU per request grows with the number of "
                "processes, for a reason of the machine. The open-loop tables after it hold "
                "the load fixed, per replica and in all.", "",
                "All three replicas run throughout (so every case serves the store in the "
                "same mode: several processes, each send's task written before its executor "
                "runs); the first 1, 2 or 3 are in HAProxy's rotation. Replicas CPU: those "
                "in the rotation; idle replicas CPU: the others, whose cost per request "
                "shows what a replica pays for traffic it does not serve. c: connections in "
                "all; at 48 every replica of three has as many requests in flight as one "
                "replica has at 16.", "",
                "What a request asks of the shared services is counted too: PostgreSQL "
                "transactions per request (read-only ones too) and Redis commands per "
                "request (`INFO commandstats`, all commands). These are counts of work, "
                "which the machine's load does not move; CPU seconds per request also grow "
                "with the number of processes sharing the two cores (PostgreSQL's own CPU "
                "per request moves with them, for the same statements per request).", "",
                "| replicas | c | req/s | p50 / p99 ms | replicas CPU ms/req | "
                "idle replicas CPU ms/req | PostgreSQL CPU ms/req | HAProxy CPU ms/req "
                "| PostgreSQL transactions/req | Redis commands/req | errors |",
                "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for conc in args.lb_concurrency:
            for n in (1, 2, 3):
                rows = [s for s in lb if s["replicas"] == n and s.get("concurrency") == conc]
                if rows:
                    out.append(
                        f"| {n} | {conc} | {fmt(med(rows, 'req_per_s'))} | "
                        f"{med(rows, 'p50_ms'):.2f} / {med(rows, 'p99_ms'):.2f} | "
                        f"{med(rows, 'replicas_ms_per_req'):.3f} | "
                        + (f"{med(rows, 'idle_ms_per_req'):.3f}" if n < 3 else "-")
                        + f" | {med(rows, 'pg_ms_per_req'):.3f} | "
                        f"{med(rows, 'haproxy_ms_per_req'):.3f} | "
                        f"{med(rows, 'commits_per_req'):.2f} | "
                        f"{med(rows, 'redis_commands_per_req'):.2f} | "
                        f"{sum(r['errors'] for r in rows)} |")
        rate_cols = ("| replicas | req/s offered | per replica | answered | replicas CPU ms/req | "
                     "idle replicas CPU ms/req | PostgreSQL CPU ms/req | HAProxy CPU ms/req "
                     "| PostgreSQL transactions/req | Redis commands/req | errors |")
        rate_align = "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"

        def rate_rows(kind: str, n: int, per: float) -> list[dict[str, Any]]:
            return [s for s in lb if s["replicas"] == n and s.get("load") == kind
                    and s.get("per_replica") == per]

        def rate_table(kind: str, wanted: list[tuple[int, float]]) -> list[str]:
            lines = [rate_cols, rate_align]
            for n, per in wanted:
                rows = rate_rows(kind, n, per)
                if not rows:
                    continue
                idle = f"{med(rows, 'idle_ms_per_req'):.3f}" if n < 3 else "-"
                lines.append(
                    f"| {n} | {per * n:,.0f} | {per:,.0f} | {fmt(med(rows, 'requests'))} | "
                    f"{med(rows, 'replicas_ms_per_req'):.3f} | {idle} | "
                    f"{med(rows, 'pg_ms_per_req'):.3f} | {med(rows, 'haproxy_ms_per_req'):.3f}"
                    f" | {med(rows, 'commits_per_req'):.2f} | "
                    f"{med(rows, 'redis_commands_per_req'):.2f} | "
                    f"{sum(r['errors'] for r in rows)} |")
            return lines

        def cpu(kind: str, n: int, per: float) -> float | None:
            rows = rate_rows(kind, n, per)
            return med(rows, "replicas_ms_per_req") if rows else None

        if args.lb_rate_per_replica:
            out += ["", "### The same load for each replica", "",
                    "Each replica in the rotation is offered the same fixed rate (an open "
                    "loop: each request sent at its time, answered or not, by an asyncio "
                    "client), so 2 and 3 replicas serve 2 and 3 times the requests of one. "
                    "This is the figure that shows what adding a replica costs: a replica "
                    "that paid for the others' traffic (news on the bus, look-ups, timers) "
                    "would spend more per request here as replicas are added. How busy the "
                    "machine was follows from the table (CPU per request times the rate "
                    "offered): the higher the rate, the more three replicas compete for its "
                    "cores.", ""]
            out += rate_table("per-replica", [(n, per) for per in args.lb_rate_per_replica
                                              for n in (1, 2, 3)])
            for per in args.lb_rate_per_replica:
                one = cpu("per-replica", 1, per)
                if one:
                    ratios = [f"{n} / 1 replica {c / one:.2f}" for n in (2, 3)
                              if (c := cpu("per-replica", n, per))]
                    out += ["", f"Replicas CPU per request at {per:,.0f} req/s each: "
                            + ", ".join(ratios) + "."]
        if args.lb_rate:
            out += ["", "### The same total load", "",
                    "The same replicas under one fixed total rate, spread over 1, 2 or 3 of "
                    "them: each replica then serves a half or a third of the requests, with "
                    "more idle time between them.", ""]
            out += rate_table("rate", [(n, rate / n) for rate in args.lb_rate
                                       for n in (1, 2, 3)])
            spaced = meta.get("spaced_work")
            for rate in args.lb_rate:
                one, three = cpu("rate", 1, rate), cpu("rate", 3, rate / 3)
                alone = cpu("per-replica", 1, rate / 3)
                if one and three:
                    line = (f"\nAt {rate:,.0f} req/s in all, replicas CPU per request 3 / 1 "
                            f"replica: {three / one:.2f}.")
                    if alone:
                        line += (f" One replica alone at {rate / 3:,.0f} req/s (above) "
                                 f"against one at {rate:,.0f} req/s: {alone / one:.2f}. The "
                                 "cost follows the load each process carries, not the number "
                                 "of replicas.")
                    out.append(line)
            if spaced:
                out += ["", "The machine alone (`spaced_work_cost` in benchmarks/scale.py, no "
                        "server): the same Python work (encoding and decoding a JSON-RPC "
                        f"reply) cost {spaced['back_to_back_ms']:.3f} ms of CPU run back to "
                        f"back and {spaced['spaced_ms']:.3f} ms run once every "
                        f"{spaced['pause_s'] * 1000:.0f} ms: {spaced['ratio']:.2f}x. A process "
                        "that waits between requests pays more CPU for each, whatever it "
                        "runs."]
        out.append("")
    return "\n".join(out)


def spaced_work_cost(pause: float = 0.01, units: int = 300) -> dict[str, float]:
    """CPU time of one fixed piece of Python work (encoding and decoding a small
    JSON-RPC reply), run back to back and run once every ``pause`` seconds.

    A replica that serves a third of the load runs each request with more idle
    time around it; on a machine where that alone makes the same work cost more
    CPU (caches and branch predictors gone cold, a virtual CPU descheduled),
    CPU per request grows when a fixed load is spread over more processes.
    This measures that effect of the machine, with no server involved."""
    reply = {"jsonrpc": "2.0", "id": 1, "result": {
        "id": "task-1", "contextId": "ctx-1", "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a-1", "parts": [{"text": "hello " * 20}]}],
        "history": [{"messageId": f"m-{i}", "role": "ROLE_USER",
                     "parts": [{"text": "hello"}]} for i in range(8)]}}
    encode, decode = msgspec.json.encode, msgspec.json.decode

    def unit() -> None:  # about as much CPU as a replica spends on one request
        for _ in range(10):
            decode(encode(reply))
            json.loads(json.dumps(reply))

    for _ in range(50):
        unit()
    spent = {"back_to_back": 0.0, "spaced": 0.0}
    for _ in range(3):  # interleaved, so both see the same machine
        start = time.process_time()
        for _ in range(units):
            unit()
        spent["back_to_back"] += time.process_time() - start
        start = time.process_time()
        for _ in range(units):
            unit()
            time.sleep(pause)
        spent["spaced"] += time.process_time() - start
    per = {k: v / (3 * units) * 1000 for k, v in spent.items()}
    return {"back_to_back_ms": per["back_to_back"], "spaced_ms": per["spaced"],
            "pause_s": pause, "ratio": per["spaced"] / per["back_to_back"]}


def machine_note() -> str:
    return f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, 3 s, fewer events")
    parser.add_argument("--only", default="cross,store,lb", help="cases, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="streams per cross-replica case")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--sdk-events", type=int, default=1000)
    parser.add_argument("--concurrency", default="1,16")
    parser.add_argument("--lb-concurrency", default="16,48")
    parser.add_argument("--lb-rate", default="300",
                        help="fixed request rates (req/s) through the balancer, comma-separated")
    parser.add_argument("--lb-rate-per-replica", default="50,100",
                        help="fixed request rates (req/s) for each replica in the rotation "
                        "(so 1, 2 and 3 replicas are offered 1, 2 and 3 times as much), "
                        "comma-separated")
    parser.add_argument("--server-cpu", type=int, default=0)
    parser.add_argument("--load-cpu", type=int, default=1)
    parser.add_argument("--synchronous-commit", default="on", choices=("on", "off"),
                        help="of the PostgreSQL databases made for the cases (default on)")
    parser.add_argument("--shared", default="",
                        help="a note on what else ran on the machine, for the report")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.runs, args.duration = 1, 1, 3.0
        args.events, args.sdk_events = 2000, 500
    args.concurrency = [int(c) for c in str(args.concurrency).split(",")]
    args.lb_concurrency = [int(c) for c in str(args.lb_concurrency).split(",")]
    args.lb_rate = [float(r) for r in str(args.lb_rate).split(",") if r]
    args.lb_rate_per_replica = [float(r) for r in str(args.lb_rate_per_replica).split(",")
                                if r]
    cases = set(args.only.split(","))
    if not SDK_PYTHON.exists():
        sys.stderr.write(f"{SDK_PYTHON} is missing: run `bash benchmarks/setup.sh`\n")
        return 2
    load.wrk_path()
    command = " ".join([".venv/bin/python benchmarks/scale.py", *sys.argv[1:]])
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()[0]
    commit_before = commit_latency(args.synchronous_commit)
    spaced = spaced_work_cost() if "lb" in cases else None
    cross: list[dict[str, Any]] = []
    store: list[dict[str, Any]] = []
    lb: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="interlingua-scale-") as tmp:
        workdir = Path(tmp)
        if "cross" in cases:
            for impl in ("interlingua", "a2a-sdk"):
                cross += cross_case(impl, args, workdir, args.synchronous_commit)
        if "store" in cases:
            store = store_case(args, workdir)
        if "lb" in cases:
            lb = lb_case(args, workdir)
    commit_after = commit_latency(args.synchronous_commit)
    load_start, load_end = load_before, os.getloadavg()[0]
    busy = load_start > 1.0  # at the end, the load includes the run's own
    note = (f"Load average (1 min) {load_start:.2f} at the start, {load_end:.2f} at the end. "
            + ("The machine was shared: other work ran on it during the run, so absolute "
               "figures are depressed and noisy; compare the implementations within this "
               "run. " if busy else "") + args.shared).strip()
    meta = {"date": f"{started:%Y-%m-%d %H:%M} UTC", "machine": machine_note(),
            "command": command, "note": note, "synchronous_commit": args.synchronous_commit,
            "commit_ms": {"before": commit_before, "after": commit_after},
            "spaced_work": spaced}
    text = report(args, cross, store, lb, meta)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scale.md").write_text(text)
    data = {"meta": meta, "cross": cross, "store": store, "lb": lb}
    (args.out / "scale.json").write_text(msgspec.json.format(msgspec.json.encode(data)).decode()
                                         + "\n")
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
