"""Serves an ASGI app with uvicorn on loopback and drives a bounded request load while a probe polls a path.

Everything stays on 127.0.0.1, the number of requests is fixed and every wait has a timeout.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass

import httpx
import uvicorn

START_TIMEOUT_S = 30.0


class LoopbackServer:
    """``with LoopbackServer(app) as base_url:`` runs ``app`` on a free loopback port in a thread."""

    def __init__(self, app) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="gemlint-bench-server", daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the loopback server did not start")
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc_info) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=START_TIMEOUT_S)


@dataclass(frozen=True)
class LoadResult:
    requests: int
    seconds: float
    p95_ms: float
    probes: int

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds


def probed_load(app, model, *, probe_path: str, requests: int, clients: int, probe_period_s: float) -> tuple[LoadResult, int]:
    """Serve ``app`` and POST ``requests`` batches to /predict while ``probe_path`` is polled.

    Also returns the forward passes of ``model`` that the probes ran (all forwards minus one per request).
    """
    import torch

    forwards = [0]
    hook = model.register_forward_hook(lambda *_: forwards.__setitem__(0, forwards[0] + 1))
    try:
        payload = torch.randn(8, 256, generator=torch.Generator().manual_seed(1)).tolist()
        with LoopbackServer(app) as base_url:
            result = drive(
                base_url, path="/predict", payload=payload, requests=requests, clients=clients, probe_path=probe_path, probe_period_s=probe_period_s
            )
    finally:
        hook.remove()
    return result, forwards[0] - result.requests


def load_measurements(
    bad: list[tuple[LoadResult, int]], good: list[tuple[LoadResult, int]], *, requests: int, clients: int, period_s: float, probe: str
):
    """The medians of the runs of each variant (alternated, so drift hits both alike). Every figure here depends
    on timing, the probes' forward count included (how many probes fall within the run): none is deterministic."""
    from gemlint.bench.pair import Measurement

    def runs(results: list[tuple[LoadResult, int]], value) -> tuple[float, ...]:
        return tuple(float(value(result)) for result in results)

    def measurement(metric: str, unit: str, value) -> Measurement:
        bad_runs, good_runs = runs(bad, value), runs(good, value)
        return Measurement(metric, unit, statistics.median(bad_runs), statistics.median(good_runs), bad_runs=bad_runs, good_runs=good_runs)

    period = f"{probe} every {period_s * 1e3:.0f} ms"
    return [
        measurement(f"model forwards run by the probe ({period})", "forwards", lambda result: result[1]),
        measurement(f"/predict throughput, {requests} requests from {clients} clients ({period})", "req/s", lambda result: result[0].throughput),
        measurement(f"/predict p95 latency ({period})", "ms", lambda result: result[0].p95_ms),
    ]


def drive(base_url: str, *, path: str, payload, requests: int, clients: int, probe_path: str, probe_period_s: float) -> LoadResult:
    """``requests`` POSTs to ``path`` from ``clients`` closed-loop clients, while ``probe_path`` is polled every period."""
    latencies: list[float] = []
    lock = threading.Lock()
    remaining = [requests]
    done = threading.Event()
    probes = [0]
    errors: list[BaseException] = []

    def client() -> None:
        try:
            with httpx.Client(base_url=base_url, timeout=60.0) as http:
                while True:
                    with lock:
                        if remaining[0] == 0:
                            return
                        remaining[0] -= 1
                    start = time.perf_counter()
                    http.post(path, json=payload).raise_for_status()
                    elapsed = time.perf_counter() - start
                    with lock:
                        latencies.append(elapsed)
        except BaseException as error:  # reported by the caller
            errors.append(error)

    def prober() -> None:
        try:
            with httpx.Client(base_url=base_url, timeout=60.0) as http:
                while True:  # the first probe goes out with the load: every run sees at least one
                    http.get(probe_path).raise_for_status()
                    probes[0] += 1
                    if done.wait(probe_period_s):
                        return
        except BaseException as error:
            errors.append(error)

    probe_thread = threading.Thread(target=prober, daemon=True)
    probe_thread.start()
    start = time.perf_counter()
    workers = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=600)
    seconds = time.perf_counter() - start
    done.set()
    probe_thread.join(timeout=60)
    if errors:
        raise RuntimeError(f"load failed: {errors[0]!r}")
    p95 = statistics.quantiles(latencies, n=20)[-1] * 1e3
    return LoadResult(len(latencies), seconds, p95, probes[0])
