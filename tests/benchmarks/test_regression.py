"""The regression guard's comparison (benchmarks/regression.py): two runs' results, as
``run.py`` writes them, in; a verdict per figure both have, out."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
import regression


def _unary(server: str, c: int, cpu_ms: float, round_no: int = 1) -> dict[str, Any]:
    return {"server": server, "round": round_no, "concurrency": c, "requests": 1000,
            "cpu_s": cpu_ms, "errors": 0}


def _stream(server: str, c: int, cpu_us: float, round_no: int = 1) -> dict[str, Any]:
    return {"server": server, "round": round_no, "concurrency": c, "events": 1_000_000,
            "cpu_s": cpu_us, "errors": 0}


def _run(unary: list[dict[str, Any]], stream: list[dict[str, Any]],
         failed: dict[str, str] | None = None, concurrencies: tuple[int, ...] = (16,),
         stream_concurrencies: tuple[int, ...] = (1,)) -> dict[str, Any]:
    names = dict.fromkeys(s["server"] for s in [*unary, *stream])
    servers = [{"name": n, "skipped": "", "failed": (failed or {}).get(n, "")} for n in names]
    info = {"servers": servers, "concurrencies": list(concurrencies),
            "stream_concurrencies": list(stream_concurrencies)}
    return {"info": info, "unary": unary, "stream": stream}


def _committed() -> dict[str, Any]:
    # A full run: three unary concurrencies and two stream ones, two rounds each.
    unary = [
        sample
        for r in (1, 2)
        for c in (1, 16, 64)
        for sample in (_unary("raw", c, 0.050, r), _unary("interlingua-memory", c, 0.100, r),
                       _unary("a2a-sdk", c, 1.0, r))
    ]
    stream = [
        sample
        for r in (1, 2)
        for c in (1, 4)
        for sample in (_stream("raw", c, 8.0, r), _stream("interlingua-memory", c, 12.0, r))
    ]
    return _run(unary, stream, concurrencies=(1, 16, 64), stream_concurrencies=(1, 4))


def _verdicts(now: dict[str, Any], threshold: float = 0.15) -> dict[str, regression.Verdict]:
    return {v.figure: v for v in regression.compare(_committed(), now, threshold)}


def test_ratios_to_raw_are_compared_per_server_and_concurrency() -> None:
    # A quick run on a slower machine: every CPU time doubled, the ratios unchanged.
    now = _run([_unary("raw", 16, 0.1), _unary("interlingua-memory", 16, 0.2),
                _unary("a2a-sdk", 16, 2.0)],
               [_stream("raw", 1, 16.0), _stream("interlingua-memory", 1, 24.0)])
    verdicts = _verdicts(now)
    assert set(verdicts) == {"CPU/req interlingua-memory c=16", "CPU/req a2a-sdk c=16",
                             "CPU/event interlingua-memory c=1"}
    unary = verdicts["CPU/req interlingua-memory c=16"]
    assert unary.committed == pytest.approx(2.0)
    assert unary.now == pytest.approx(2.0)
    assert unary.change == pytest.approx(0.0)
    assert not any(v.regressed for v in verdicts.values())
    assert verdicts["CPU/event interlingua-memory c=1"].committed == pytest.approx(1.5)


def test_a_ratio_worse_by_more_than_the_threshold_regresses() -> None:
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.117)],
               [_stream("raw", 1, 8.0), _stream("interlingua-memory", 1, 14.0)])
    verdicts = _verdicts(now)
    unary = verdicts["CPU/req interlingua-memory c=16"]
    assert unary.change == pytest.approx(0.17)
    assert unary.regressed
    stream = verdicts["CPU/event interlingua-memory c=1"]  # 1.75x against 1.5x: +17%
    assert stream.regressed
    # the same figures pass a looser threshold
    assert not any(v.regressed for v in _verdicts(now, threshold=0.20).values())


def test_within_the_threshold_or_better_is_ok() -> None:
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.114)],
               [_stream("raw", 1, 8.0), _stream("interlingua-memory", 1, 6.0)])
    verdicts = _verdicts(now)
    assert verdicts["CPU/req interlingua-memory c=16"].change == pytest.approx(0.14)
    assert not verdicts["CPU/req interlingua-memory c=16"].regressed
    assert verdicts["CPU/event interlingua-memory c=1"].change == pytest.approx(-0.5)
    assert not verdicts["CPU/event interlingua-memory c=1"].regressed


def test_only_our_servers_are_judged() -> None:
    # The official SDK's ratio worsened by far more than the threshold: shown, not judged.
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.100),
                _unary("a2a-sdk", 16, 2.0)], [])
    verdicts = _verdicts(now)
    sdk = verdicts["CPU/req a2a-sdk c=16"]
    assert sdk.change == pytest.approx(1.0)
    assert sdk.beyond and not sdk.judged and not sdk.regressed
    assert verdicts["CPU/req interlingua-memory c=16"].judged
    lines = regression.verdict_table(list(verdicts.values()))
    assert any("a2a-sdk" in line and "worse (reference)" in line for line in lines)
    assert not any("REGRESSED" in line for line in lines)


def test_a_cheaper_raw_alone_shows_as_a_regression() -> None:
    # The server's own CPU time did not move; the ceiling beside it got cheaper.
    now = _run([_unary("raw", 16, 0.040), _unary("interlingua-memory", 16, 0.100)], [])
    assert _verdicts(now)["CPU/req interlingua-memory c=16"].regressed


def test_medians_over_rounds_are_compared() -> None:
    # One slow round out of three moves the median not at all.
    now = _run([_unary("raw", 16, 0.05, r) for r in (1, 2, 3)]
               + [_unary("interlingua-memory", 16, ms, r)
                  for r, ms in ((1, 0.1), (2, 0.3), (3, 0.1))], [])
    assert not _verdicts(now)["CPU/req interlingua-memory c=16"].regressed


def test_figures_only_one_run_has_are_not_compared() -> None:
    # No raw stream now, a server the committed run lacks, a failed server, a skipped one.
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.5),
                _unary("interlingua-sqlite", 16, 0.2)],
               [_stream("interlingua-memory", 1, 99.0)],
               failed={"interlingua-memory": "answered wrongly"})
    assert regression.compare(_committed(), now) == []
    missing = regression.not_compared(_committed(), now)
    # a2a-sdk was not chosen for this run: not missing
    assert missing == ["CPU/req interlingua-memory c=16", "CPU/event interlingua-memory c=1"]
    now["info"]["servers"].append({"name": "a2a-sdk", "skipped": "no venv", "failed": ""})
    assert regression.not_compared(_committed(), now) == [
        "CPU/req interlingua-memory c=16", "CPU/req a2a-sdk c=16",
        "CPU/event interlingua-memory c=1"]


def test_the_table_says_each_verdict() -> None:
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.2),
                _unary("a2a-sdk", 16, 1.0)], [])
    now["unary"][0] |= {"other_cpu_s": 1.5, "duration_s": 3.0}  # raw's measurement
    now["unary"][2] |= {"other_cpu_s": 0.3, "duration_s": 3.0}
    lines = regression.verdict_table(regression.compare(_committed(), now))
    assert lines[0] == (
        "| figure (ratio to raw) | committed | now | change | noise now | verdict |")
    assert lines[2] == (
        "| CPU/req interlingua-memory c=16 | 2.00x | 4.00x | +100% | 50% | REGRESSED |")
    assert lines[3] == "| CPU/req a2a-sdk c=16 | 20.00x | 20.00x | +0% | 50% | OK (reference) |"
    assert len(lines) == 4


def test_check_without_committed_results_exits_2_before_measuring(
        monkeypatch: pytest.MonkeyPatch, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    import run

    monkeypatch.setattr(run, "BASELINE", tmp_path / "baseline.json")
    monkeypatch.setattr(run, "run", lambda settings: pytest.fail("measured without results"))
    assert run.main(["--check", "--out", str(tmp_path / "out")]) == 2
    assert "needs the committed baseline" in capsys.readouterr().err


def test_check_never_writes_into_the_committed_results() -> None:
    import run

    with pytest.raises(SystemExit) as exited:
        run.parse_args(["--check", "--out", str(run.RESULTS_DIR)])
    assert exited.value.code == 2


def test_a_figure_is_judged_on_its_lowest_ratio_over_the_tries() -> None:
    # First run: +40% (a slow stretch); retried twice: once still slow, once as committed.
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.14),
                _unary("interlingua-sqlite", 16, 0.14)], [])
    slow = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.13)], [])
    clean = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.10)], [])
    first = {v.figure: v for v in regression.compare(_committed(), now)}
    assert first["CPU/req interlingua-memory c=16"].regressed
    assert regression.suspects(list(first.values())) == ["interlingua-memory"]
    verdicts = {v.figure: v for v in regression.compare(_committed(), now, retries=[slow, clean])}
    memory = verdicts["CPU/req interlingua-memory c=16"]
    assert memory.tries == pytest.approx((2.8, 2.6, 2.0))
    assert memory.now == pytest.approx(2.0)
    assert not memory.regressed
    # a figure no retry measured keeps its one try (sqlite has no committed figure here)
    assert "CPU/req interlingua-sqlite c=16" not in verdicts
    lines = regression.verdict_table(list(verdicts.values()))
    assert lines[0] == ("| figure (ratio to raw) | committed | now | tries | change | noise now "
                        "| verdict |")
    assert lines[2] == ("| CPU/req interlingua-memory c=16 | 2.00x | 2.00x | 2.80x / 2.60x / "
                        "2.00x | +0% | 0% | OK |")


def test_a_figure_beyond_the_threshold_in_every_try_regresses() -> None:
    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.14)], [])
    again = _run([_unary("raw", 16, 0.04), _unary("interlingua-memory", 16, 0.12)], [])
    memory = regression.compare(_committed(), now, retries=[again, again])[0]
    assert memory.tries == pytest.approx((2.8, 3.0, 3.0))
    assert memory.now == pytest.approx(2.8)
    assert memory.regressed


@pytest.fixture
def no_wrk(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without wrk, whether or not this one has it: the check's logic is
    tested with a stand-in harness, which must not reach for the real load generator."""
    import load

    def missing() -> str:
        raise load.LoadError("wrk is not installed")

    monkeypatch.setattr(load, "wrk_path", missing)


def _settings(tmp_path: Any, retries: int) -> Any:
    import run

    settings = run.parse_args(["--check", "--out", str(tmp_path), "--retries", str(retries)])
    return settings


class _Harness:
    """Stands in for ``run.run``: hands out the prepared results, keeps what it was asked."""

    def __init__(self, *results: dict[str, Any]) -> None:
        self.results = list(results)
        self.asked: list[list[str]] = []

    def __call__(self, settings: Any) -> tuple[Any, Any]:
        import run
        from report import Samples, ServerInfo, UnarySample

        self.asked.append([t.name for t in settings.servers])
        result = self.results.pop(0)
        # a stand-in measures nothing with wrk: it names itself as the load generator
        info = run._run_info(settings, "stand-in load")
        for s in result["info"]["servers"]:
            info.servers.append(ServerInfo(name=s["name"], description=s["name"]))
        samples = Samples()
        for u in result["unary"]:
            samples.unary.append(UnarySample(
                server=u["server"], round=1, concurrency=u["concurrency"],
                requests=u["requests"], errors=0, duration_s=3.0, cpu_s=u["cpu_s"],
                requests_per_s=1000.0, p50_ms=1.0, p99_ms=2.0, load_cpu_s=0.0,
                other_cpu_s=0.0, other_load_cpu_s=0.0))
        return info, samples


def test_check_measures_a_suspect_again_beside_raw(
        tmp_path: Any, capsys: pytest.CaptureFixture[str], no_wrk: None) -> None:
    import run

    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.14),
                _unary("a2a-sdk", 16, 2.0)], [])
    harness = _Harness(
        _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.13)], []),
        _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.10)], []))
    assert run.check(_settings(tmp_path, 2), _committed(), now, harness)
    # only the suspect (the SDK's worse ratio is not judged), beside raw, until it passed
    assert harness.asked == [["raw", "interlingua-memory"], ["raw", "interlingua-memory"]]
    out = capsys.readouterr().out
    assert "| CPU/req interlingua-memory c=16 | 2.00x | 2.00x | 2.80x / 2.60x / 2.00x |" in out
    assert (tmp_path / "retry-1.json").exists() and (tmp_path / "retry-2.md").exists()


def test_check_stops_after_its_retries_and_fails(tmp_path: Any, no_wrk: None) -> None:
    import run

    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.14)], [])
    slow = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.13)], [])
    harness = _Harness(slow, slow, slow)
    assert not run.check(_settings(tmp_path, 2), _committed(), now, harness)
    assert len(harness.asked) == 2
    none = _Harness()
    assert not run.check(_settings(tmp_path, 0), _committed(), now, none)
    assert none.asked == []


@pytest.fixture
def baseline(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """The --check baseline in a temporary file, and a harness that measures nothing."""
    import run

    path = tmp_path / "baseline.json"
    monkeypatch.setattr(run, "BASELINE", path)
    monkeypatch.setattr(run, "check_tools", lambda settings: None)
    return path


def _write_json(path: Any, results: dict[str, Any]) -> None:
    path.write_bytes(msgspec.json.encode(results))


def _read_json(path: Any) -> Any:
    return msgspec.json.decode(path.read_bytes())


def test_check_compares_with_the_baseline_not_the_latest_run(
        baseline: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import run

    # The latest full run already had the slower figure (2.8x); the baseline has 2.0x.
    slow = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.14)], [])
    _write_json(baseline, _committed())
    latest = tmp_path / "results" / "latest.json"
    latest.parent.mkdir()
    _write_json(latest, slow)
    monkeypatch.setattr(run, "RESULTS_DIR", latest.parent)
    monkeypatch.setattr(run, "run", _Harness(slow))
    status = run.main(["--check", "--no-pin", "--retries", "0", "--out", str(tmp_path / "out")])
    assert status == run.REGRESSED
    out = capsys.readouterr().out
    assert f"## Regression check against {baseline} (run of ?)" in out
    assert "| CPU/req interlingua-memory c=16 | 2.00x | 2.80x | +40% | 0% | REGRESSED |" in out
    # a run, quick or full, leaves the baseline as it was
    assert _read_json(baseline) == _committed()


def test_a_run_moves_the_baseline_only_when_asked(
        baseline: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import run

    now = _run([_unary("raw", 16, 0.05), _unary("interlingua-memory", 16, 0.12)], [])
    monkeypatch.setattr(run, "run", _Harness(now, now))
    assert run.main(["--quick", "--no-pin", "--only", "unary", "--out", str(tmp_path / "a")]) == 0
    assert not baseline.exists()
    assert run.main(["--quick", "--no-pin", "--only", "unary", "--out", str(tmp_path / "b"),
                     "--write-baseline"]) == 0
    written = _read_json(baseline)
    assert set(written) == {"info", "unary", "stream"}  # what --check compares, no more
    assert regression.ratios(written) == pytest.approx(
        {("unary", "interlingua-memory", 16): 2.4})
    assert _read_json(tmp_path / "b" / "latest.json")["unary"] == written["unary"]


def test_the_baseline_is_written_from_a_results_file_without_measuring(
        baseline: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import run

    monkeypatch.setattr(run, "run", lambda settings: pytest.fail("measured"))
    full = _committed() | {"memory": [{"server": "raw"}]}
    given = tmp_path / "latest.json"
    _write_json(given, full)
    assert run.main(["--write-baseline", str(given)]) == 0
    assert _read_json(baseline) == _committed()
    # results with no ratio to raw would leave --check nothing to compare: refused
    _write_json(given, _run([_unary("interlingua-memory", 16, 0.1)], []))
    assert run.main(["--write-baseline", str(given)]) == 2
    assert "the baseline is left as it is" in capsys.readouterr().err
    assert _read_json(baseline) == _committed()
    assert run.main(["--write-baseline", str(tmp_path / "missing.json")]) == 2


def test_check_and_write_baseline_are_not_taken_together() -> None:
    import run

    with pytest.raises(SystemExit) as exited:
        run.parse_args(["--check", "--write-baseline"])
    assert exited.value.code == 2


def test_the_committed_baseline_has_figures_for_the_check() -> None:
    import run

    committed = _read_json(run.BASELINE)
    judged = {key for key in regression.ratios(committed) if key[1].startswith("interlingua")}
    assert ("unary", "interlingua-memory", 16) in judged
    assert ("stream", "interlingua-memory", 1) in judged
