"""Commands that work on a store (``push …``, ``db upgrade``) say in one line why a store
cannot be used: a path where none is, a folder that cannot be made, a URL no store takes,
a database that cannot be reached. Never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from interlingua.cli.main import main


def _run(*args: str) -> tuple[int, str]:
    done = CliRunner().invoke(main, list(args), prog_name="interlingua")
    assert done.exception is None or isinstance(done.exception, SystemExit), done.exception
    return done.exit_code, done.output


@pytest.mark.parametrize("command", [["push", "outbox"], ["push", "dead"],
                                     ["push", "redrive", "1"], ["push", "rotate-key"]])
def test_a_push_command_on_a_store_that_is_not_there(command: list[str],
                                                     tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "tasks.db"
    code, output = _run(*command, "--store", f"sqlite:///{missing}")
    assert code == 2, output
    assert output.startswith(f"error: no store at {missing}: check the path"), output
    assert not missing.parent.exists()  # nothing made in its place


def test_store_commands_that_cannot_use_their_store_say_why(tmp_path: Path) -> None:
    code, output = _run("push", "outbox", "--store", "bogus://x")
    assert code == 2 and output.startswith("error: unsupported store URL (bogus://)"), output
    # a database that cannot be reached: exit 3 on every command, as serve says it
    for command in (["push", "dead"], ["push", "outbox"], ["db", "upgrade"]):
        code, output = _run(*command, "--store", "postgresql://nobody@127.0.0.1:1/db")
        assert code == 3, (command, output)
        assert "cannot reach PostgreSQL" in output.splitlines()[0], output
    regular = tmp_path / "plain-file"
    regular.write_text("not a folder")
    code, output = _run("db", "upgrade", "--store", f"sqlite:///{regular}/t.db")
    assert code == 2 and f"{regular} is a file, not a folder" in output, output


def test_a_store_path_with_escapes_is_the_file_the_store_opens(tmp_path: Path) -> None:
    # sqlite:///…/my%20tasks.db is the file "my tasks.db": checked there, and nothing
    # made under the escaped name
    url = f"sqlite:///{tmp_path}/my%20tasks.db"
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 0, output
    code, output = _run("push", "outbox", "--store", url)
    assert code == 0 and "pending: 0" in output, output
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db") == ["my tasks.db"]



def _newer(kind: str, tmp_path: Path, pg_url: str) -> str:
    """A store whose schema a later version wrote (version 99)."""
    import asyncio
    import sqlite3

    if kind == "sqlite":
        path = tmp_path / "later.db"
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA user_version = 99")
        conn.close()
        return f"sqlite:///{path}"
    import asyncpg

    from interlingua.stores.postgres import upgrade
    from interlingua.stores.postgres.schema import parse_postgres_url

    async def later() -> None:
        await upgrade(pg_url)
        conn = await asyncpg.connect(pg_url.split("?")[0])
        try:
            await conn.execute(
                f'UPDATE "{parse_postgres_url(pg_url).schema}".schema_version SET version = 99')
        finally:
            await conn.close()

    asyncio.run(later())
    return pg_url


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_store_a_later_version_wrote_is_one_line_on_every_command(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A schema newer than this version reads: ``serve`` said so in one line on
    PostgreSQL and with a traceback on SQLite (where it opened the store only once it
    served); ``push outbox``/``dead``/``redrive`` with a traceback on both."""
    import subprocess
    import sys

    url = _newer(kind, tmp_path, request.getfixturevalue("pg_url") if kind == "postgres"
                 else "")
    said = "the database has schema version 99; this version of interlingua knows"
    # exit 2 on every command, as serve says it (push and db upgrade said 1)
    for command in (["push", "outbox"], ["push", "dead"], ["push", "redrive", "1"]):
        code, output = _run(*command, "--store", url)
        assert code == 2, (command, output)
        assert output.startswith(f"error: cannot use the store: {said}"), output
    # (db upgrade wrote "Error: ..." of its own, where every command writes "error: ...")
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 2 and output.startswith(f"error: {said}"), output
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {said}"), done.stderr
    assert "Traceback" not in done.stderr and "Serving" not in done.stdout


def test_a_file_that_is_no_database_is_one_line_on_every_command(tmp_path: Path) -> None:
    # (serve and db upgrade gave a traceback; push said it in its own words, exit 1)
    import subprocess
    import sys

    text = tmp_path / "notes.db"
    text.write_text("a text file someone named .db, not a database\n" * 40)
    url = f"sqlite:///{text}"
    said = f"error: cannot use the store {url}: file is not a database"
    for command in (["push", "outbox"], ["push", "dead"], ["db", "upgrade"]):
        code, output = _run(*command, "--store", url)
        assert code == 2 and output.startswith(said), (command, output)
    done = subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", url], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.startswith(said), done.stderr


def test_the_gateway_checks_its_store_folder_before_it_serves(tmp_path: Path) -> None:
    # (it served, and every request to an agent was a 500 once it made the agent's file)
    regular = tmp_path / "plain-file"
    regular.write_text("not a folder")
    code, output = _run("gateway", "--mesh", "mqtt://127.0.0.1:1", "--namespace", "x",
                        "--port", "0", "--store", f"sqlite:///{regular}")
    assert code == 2, output
    assert f"{regular} is no folder the gateway can write in (File exists)" in output, output


@pytest.mark.parametrize("command", [["push", "outbox"], ["push", "dead"],
                                     ["push", "redrive", "1"], ["push", "rotate-key"]])
@pytest.mark.parametrize("store", ["memory://", "sqlite:///:memory:"])
def test_a_push_command_refuses_a_store_of_its_own_process(command: list[str],
                                                           store: str) -> None:
    """These commands read a server's store: one in memory is its process's alone. Before,
    each made an empty one and answered from it ("no dead deliveries", exit 0), and
    rotate-key refused memory:// with exit 1."""
    code, output = _run(*command, "--store", store)
    assert code == 2, output
    assert output == (f"error: {store} is a store in one process's memory, which this "
                      "command cannot read: give the server's sqlite:/// or postgresql:// "
                      f"store (see 'interlingua push {command[1]} --help')\n"), output


def test_rotating_the_key_of_a_store_without_a_key_file_names_that_store() -> None:
    # (a PostgreSQL store was called memory://)
    store = "postgresql://nobody@127.0.0.1:1/db"
    code, output = _run("push", "rotate-key", "--store", store)
    assert code == 2, output
    assert output.startswith(f"error: a server on {store} keeps no key file"), output


def _serve(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlingua.cli.main", "serve", "examples/echo.py",
         "--port", "0", "--store", url], capture_output=True, text=True, timeout=60)


def test_a_store_its_database_refuses_is_one_line_on_every_command(pg_url: str) -> None:
    """An option the PostgreSQL server does not know (a misspelt setting): what the
    server said, in one line, exit 2, on serve, db upgrade and push (each was a
    traceback, exit 1)."""
    url = pg_url + ("&" if "?" in pg_url else "?") + "synchronus_commit=off"
    said = "refused the store: UndefinedObjectError: unrecognized configuration parameter"
    for command in (["db", "upgrade"], ["push", "outbox"]):
        code, output = _run(*command, "--store", url)
        assert code == 2 and said in output.splitlines()[0], (command, output)
        assert "Traceback" not in output
    done = _serve(url)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_sqlite_file_of_another_program_or_locked_is_one_line(tmp_path: Path) -> None:
    """A file with a ``tasks`` table of its own: exit 2, what SQLite said; a file whose
    write lock another process holds: exit 3, said so (both were tracebacks on serve and
    db upgrade)."""
    import sqlite3

    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE tasks (what TEXT)")
    url = f"sqlite:///{other}"
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 2 and "cannot be used as the store: table tasks already exists" in output
    done = _serve(url)
    assert done.returncode == 2 and "table tasks already exists" in done.stderr, done.stderr
    locked = tmp_path / "locked.db"
    assert _run("db", "upgrade", "--store", f"sqlite:///{locked}")[0] == 0
    holder = sqlite3.connect(locked, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        url = f"sqlite:///{locked}?busy_timeout=100"
        code, output = _run("db", "upgrade", "--store", url)
        assert code == 3 and "locked by another process's write" in output, output
        done = _serve(url)
        assert done.returncode == 3 and "locked by another process" in done.stderr, done.stderr
    finally:
        holder.close()


def test_db_upgrade_reads_the_file_its_url_names(tmp_path: Path) -> None:
    """A path holding "?" or "#" (escaped in the URL): its version read from that file
    (it said "upgraded from version 0" each time, and left a stray file)."""
    for escaped in ("we%3Fird.db", "h%23ash.db"):
        url = f"sqlite:///{tmp_path}/{escaped}"
        assert _run("db", "upgrade", "--store", url)[1].startswith("Made the schema")
        code, output = _run("db", "upgrade", "--store", url)
        assert code == 0 and output.startswith("The schema is up to date"), output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h#ash.db", "we?ird.db"]


def test_db_upgrade_loads_the_one_file_it_is_given(tmp_path: Path) -> None:
    """One FILE, as several are, is loaded: before, it was passed over, even one that is
    not there, and the store upgraded anyway."""
    from interlingua.stores.sqlite import SCHEMA_VERSION

    url = f"sqlite:///{tmp_path}/tasks.db"
    code, output = _run("db", "upgrade", "--store", url, str(tmp_path / "no_agent.py"))
    assert code == 2, output
    assert output.startswith("error: ") and "no_agent.py" in output, output
    assert len(output.splitlines()) == 1, output
    assert not (tmp_path / "tasks.db").exists()
    # a store made where none was (a mistyped path, or one made before the first
    # rollout) is said to be made, not "upgraded from version 0"
    echo = Path(__file__).resolve().parents[2] / "examples" / "echo.py"
    code, output = _run("db", "upgrade", "--store", url, str(echo))
    assert (code, output) == (0, f"Made the schema, version {SCHEMA_VERSION}: no store was "
                                 "there.\n")
    code, output = _run("db", "upgrade", "--store", url, str(echo))
    assert (code, output) == (0, f"The schema is up to date (version {SCHEMA_VERSION}).\n")


def test_a_push_command_on_a_postgresql_schema_that_is_not_there_makes_none(
        pg_url: str) -> None:
    import asyncio

    import asyncpg

    url = pg_url.split("?")[0] + "?schema=interlinuga_typo"
    for command in (["push", "outbox"], ["push", "dead"]):
        code, output = _run(*command, "--store", url)
        assert code == 2 and output.startswith("error: cannot use the store: no store at"), \
            output

    async def schemas() -> list[str]:
        conn = await asyncpg.connect(pg_url.split("?")[0])
        try:
            return [r[0] for r in await conn.fetch(
                "SELECT schema_name FROM information_schema.schemata")]
        finally:
            await conn.close()

    assert "interlinuga_typo" not in asyncio.run(schemas())


def test_a_password_in_a_store_url_is_never_said(pg_url: str) -> None:
    assert "postgres@" in pg_url, pg_url
    url = pg_url.replace("postgres@", "postgres:S3cretPw@", 1)  # (trust: any password)
    code, output = _run("push", "rotate-key", "--store", url)
    assert code != 0 and "S3cretPw" not in output, output
    from interlingua import Agent
    from interlingua.host.agents import services_for
    from interlingua.server.settings import ServiceSettings

    async def echo(text: str) -> str:
        return text

    with pytest.raises(ValueError) as shared:
        services_for([Agent("Team-A", "a", echo), Agent("Team_A", "b", echo)],
                     ServiceSettings(store=url))
    assert "S3cretPw" not in str(shared.value) and "***" in str(shared.value)


def test_the_gateway_reads_a_store_url_as_serve_does(tmp_path: Path) -> None:
    """``sqlite:///DIR?synchronous=full`` is the folder DIR, each agent's file there with
    the option; ``%20`` a space (a folder named "gw?synchronous=full" was made, and each
    agent's URL then named an option "full/Agent.db": every request a 500)."""
    from interlingua.mesh.gateway import Gateway
    from interlingua.mesh.topics import parse_mesh_url
    from interlingua.stores.sqlite import parse_sqlite_url

    for given, folder in ((f"sqlite:///{tmp_path}/gw?synchronous=full", tmp_path / "gw"),
                          (f"sqlite:///{tmp_path}/gw%20dir", tmp_path / "gw dir")):
        gateway = Gateway(parse_mesh_url("mqtt://127.0.0.1:1/ns"), "ns", store=given)
        url = gateway._store_for("Slow")
        settings = parse_sqlite_url(url)  # (raised on the option's value, before)
        assert settings.path == str(folder / "Slow.db"), url
        assert folder.is_dir()
    assert parse_sqlite_url(Gateway(
        parse_mesh_url("mqtt://127.0.0.1:1/ns"), "ns",
        store=f"sqlite:///{tmp_path}/gw?synchronous=full")._store_for("A")).synchronous == "full"


def test_a_gateway_is_refused_a_store_url_it_cannot_use_when_made(tmp_path: Path) -> None:
    """A bad option, or a store of another kind: a ValueError where the gateway is
    made, not a 500 at the first request to an agent."""
    from interlingua.mesh.gateway import Gateway
    from interlingua.mesh.topics import parse_mesh_url

    for store, said in ((f"sqlite:///{tmp_path}/gw?synchronous=bogus", "synchronous"),
                        ("postgresql://db/tasks", "memory:// or sqlite:///DIR")):
        with pytest.raises(ValueError, match=said):
            Gateway(parse_mesh_url("mqtt://127.0.0.1:1/ns"), "ns", store=store)


@pytest.mark.parametrize("table", [
    # Flyway's (before its 5.0): its version a varchar
    "(installed_rank int, version varchar(50), description text); "
    "INSERT INTO {schema}.schema_version VALUES (1, '1', 'init')",
    "(version integer)",  # emptied: no version at all
], ids=["flyway", "empty"])
def test_a_schema_version_table_of_another_programs_is_one_line(
        table: str, pg_url: str) -> None:
    """(serve and db upgrade died of a TypeError, comparing its version with ours)"""
    import asyncio

    import asyncpg

    from interlingua.stores.postgres.schema import parse_postgres_url

    schema = parse_postgres_url(pg_url).schema

    async def make() -> None:
        conn = await asyncpg.connect(pg_url.split("?")[0])
        try:
            await conn.execute(f"CREATE SCHEMA {schema}; CREATE TABLE "
                               f"{schema}.schema_version " + table.format(schema=schema))
        finally:
            await conn.close()

    asyncio.run(make())
    said = f'the schema "{schema}" of PostgreSQL at '
    foreign = "holds a schema_version table of another program's"
    for command in (["db", "upgrade"], ["push", "outbox"]):
        code, output = _run(*command, "--store", pg_url)
        assert code == 2 and said in output and foreign in output, (command, output)
    done = _serve(pg_url)
    assert done.returncode == 2 and done.stderr.startswith(f"error: {said}"), done.stderr
    assert foreign in done.stderr and "Traceback" not in done.stderr


def _behind(kind: str, tmp_path: Path, pg_url: str) -> str:
    """A store an earlier version wrote: SQLite's schema version 9, PostgreSQL's 3."""
    import asyncio
    import sqlite3

    if kind == "sqlite":
        from interlingua.stores.sqlite.schema import MIGRATIONS as SQLITE_STEPS

        path = tmp_path / "earlier.db"
        with sqlite3.connect(path) as conn:
            for statement in (s for step in SQLITE_STEPS[:9] for s in step):
                conn.execute(statement)
            conn.execute("PRAGMA user_version = 9")
        conn.close()
        return f"sqlite:///{path}"
    import asyncpg

    from interlingua.stores.postgres.schema import MIGRATIONS, parse_postgres_url

    async def earlier() -> None:
        conn = await asyncpg.connect(pg_url.split("?")[0])
        try:
            schema = parse_postgres_url(pg_url).schema
            await conn.execute(f'CREATE SCHEMA "{schema}"; SET search_path TO "{schema}";'
                               " CREATE TABLE schema_version (version integer NOT NULL);"
                               " INSERT INTO schema_version VALUES (3)")
            for statement in (s for step in MIGRATIONS[:3] for s in step):
                await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(earlier())
    return pg_url


def _version_of(url: str) -> int:
    """The schema version a store's database holds, read without the store."""
    import asyncio
    import sqlite3

    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        conn.close()
        return version
    import asyncpg

    from interlingua.stores.postgres.schema import parse_postgres_url

    async def read() -> int:
        conn = await asyncpg.connect(url.split("?")[0])
        try:
            return int(await conn.fetchval(
                f'SELECT version FROM "{parse_postgres_url(url).schema}".schema_version'))
        finally:
            await conn.close()

    return asyncio.run(read())


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_push_command_leaves_a_schema_behind_to_db_upgrade(
        kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """``push outbox``/``dead``/``redrive`` upgraded the schema of the store they read,
    though operators choose when to (``db upgrade``, ``migrate=0``): each refuses it,
    naming the command that upgrades this store, and leaves it as it was."""
    url = _behind(kind, tmp_path, request.getfixturevalue("pg_url") if kind == "postgres"
                  else "")
    was = _version_of(url)
    for command in (["push", "outbox"], ["push", "dead"], ["push", "redrive", "1"]):
        code, output = _run(*command, "--store", url)
        assert code == 2, (command, output)
        assert output.startswith(f"error: cannot use the store: the database's schema is at "
                                 f"version {was},"), output
        assert f"run interlingua db upgrade --store {url}" in output.replace("'", ""), output
        assert "migrate=0" not in output  # (not the operator's to drop: none was given)
        assert _version_of(url) == was, command
    code, output = _run("db", "upgrade", "--store", url)
    assert code == 0 and f"from version {was} to" in output, output
    code, output = _run("push", "outbox", "--store", url)
    assert code == 0 and "pending: 0" in output, output


def test_serve_on_a_store_it_cannot_write_is_one_line_before_serving(pg_url: str) -> None:
    """A PostgreSQL role that may only read the store's tables (``migrate=0``): one line
    naming the store and what PostgreSQL said, exit 3, and no "Serving" (it was the
    banner, then a traceback of the lease's write, exit 3)."""
    import asyncpg

    from interlingua.stores.postgres import upgrade
    from tests.services import new_name, run_async

    run_async(lambda: upgrade(pg_url))
    schema = pg_url.rsplit("schema=", 1)[1]
    role = new_name("reader")
    admin = pg_url.split("?")[0]

    async def grant(*statements: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()

    run_async(lambda: grant(f'CREATE ROLE "{role}" LOGIN',
                            f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"',
                            f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"'))
    try:
        user = admin.split("://", 1)[1].split("@", 1)[0]
        url = pg_url.replace(f"://{user}@", f"://{role}@", 1) + "&migrate=0"
        done = _serve(url)
    finally:
        run_async(lambda: grant(f'DROP OWNED BY "{role}"', f'DROP ROLE "{role}"'))
    assert done.returncode == 3, done.stderr
    assert "Serving" not in done.stdout and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: cannot write to the store postgresql://{role}@"), line
    assert line.endswith(": permission denied for table leases"), line


def test_serve_on_a_sqlite_file_it_cannot_write_is_one_line_before_serving(
        tmp_path: Path) -> None:
    """A store file the server may read but not write (read-only for its user, or,
    for root, immutable): one line, exit 3, no "Serving" (a traceback, exit 3)."""
    import os

    path = tmp_path / "tasks.db"
    url = f"sqlite:///{path}"
    assert _run("db", "upgrade", "--store", url)[0] == 0
    if os.geteuid() == 0:  # root writes a read-only file: an immutable one it cannot
        made = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if made.returncode != 0:
            pytest.skip(f"root, and chattr +i is refused here: {made.stderr!r}")
    else:
        path.chmod(0o444)
    try:
        done = _serve(url)
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    assert done.returncode == 3, done.stderr
    assert "Serving" not in done.stdout and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line == f"error: cannot write to the store {url}: attempt to write a readonly " \
                   "database", line


def test_a_push_command_on_the_url_of_several_agents_names_their_schemas(
        pg_database: str) -> None:
    """Several agents served from one PostgreSQL URL keep their stores in schemas of
    their own, ``{schema}_{name}`` lower-cased: a push command given the URL itself finds
    no store there, and says which schemas of that URL's agents the database holds."""
    from tests.services import new_name

    base = new_name("several")
    url = f"{pg_database}?schema={base}"
    code, output = _run("db", "upgrade", "--store", url, "examples/echo.py",
                        "examples/report_agent.py")
    assert code == 0, output
    code, output = _run("push", "outbox", "--store", url)
    assert code == 2, output
    [line] = output.splitlines()
    assert f"no store at {url}" in line, line
    assert f"{base}_echo, {base}_report_generator" in line, line
    # the schema named there is the agent's store
    code, output = _run("push", "outbox", "--store", f"{pg_database}?schema={base}_report_generator")
    assert code == 0 and "pending: 0" in output, output


@pytest.mark.parametrize("store", ["postgresql://", "postgres://127.0.0.1:5432",
                                   "postgresql://127.0.0.1/?sslmode=disable"])
@pytest.mark.parametrize("command", [
    ["serve", "examples/echo.py", "--port", "0"], ["db", "upgrade"], ["push", "outbox"],
    ["push", "dead"], ["push", "redrive", "1"], ["push", "rotate-key"]])
def test_a_postgresql_store_url_that_names_no_database_is_refused(
        command: list[str], store: str) -> None:
    # (it was taken, and libpq chose the database: the one named after the user, where
    # the store's tables were made unseen)
    import os

    env = {k: v for k, v in os.environ.items() if k != "PGDATABASE"}
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", *command,
                           "--store", store], capture_output=True, text=True, timeout=30,
                          env=env, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert "the PostgreSQL store URL names no database: give it as postgresql://USER@HOST/DB" \
        in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Serving" not in done.stdout, done.stderr


def test_a_postgresql_store_url_may_name_its_database_as_an_option(pg_url: str) -> None:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_url)
    query = "&".join(q for q in (parts.query, f"dbname={parts.path.lstrip('/')}") if q)
    store = urlunsplit((parts.scheme, parts.netloc, "", query, ""))
    done = subprocess.run([sys.executable, "-m", "interlingua.cli.main", "db", "upgrade",
                           "--store", store], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
