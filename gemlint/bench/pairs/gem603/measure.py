"""Serves one model as Triton would under each config.pbtxt, on loopback, under the same concurrent load.

Triton itself needs a GPU build and its own process, so a small scheduler plays the server's role:
a FastAPI app (uvicorn on 127.0.0.1) hands each request to one model instance (a thread, as
`instance_group { count: 1 }` gives); without a batcher the instance executes requests one at a time
(Triton's default scheduler), with `dynamic_batching` it takes every queued request up to
`max_batch_size`, waiting at most `max_queue_delay_microseconds` for more, and executes them as one batch.
"""

from __future__ import annotations

import asyncio
import queue
import statistics
import threading
from contextlib import ExitStack
from concurrent.futures import Future

import torch
from fastapi import FastAPI

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import mlp, prepare
from gemlint.bench.pairs._service import LoopbackServer, drive
from gemlint.frontends.triton_config import parse_text


class ModelInstance:
    """One execution instance with Triton's scheduling: per request, or dynamic batches."""

    def __init__(self, model: torch.nn.Module, max_batch: int, delay_s: float) -> None:
        self.model, self.max_batch, self.delay_s = model, max_batch, delay_s
        self.requests: queue.Queue = queue.Queue()
        self.executions = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def submit(self, rows: torch.Tensor) -> Future:
        future: Future = Future()
        self.requests.put((rows, future))
        return future

    def close(self) -> None:
        self.requests.put(None)
        self.thread.join(timeout=60)

    def _run(self) -> None:
        while True:
            first = self.requests.get()
            if first is None:
                return
            batch = [first]
            if self.max_batch > 1:
                deadline = threading.Event()
                timer = threading.Timer(self.delay_s, deadline.set)
                timer.start()
                while len(batch) < self.max_batch:
                    try:
                        item = self.requests.get(timeout=self.delay_s) if not deadline.is_set() else self.requests.get_nowait()
                    except queue.Empty:
                        break
                    if item is None:
                        self.requests.put(None)
                        break
                    batch.append(item)
                timer.cancel()
            with torch.inference_mode():
                outputs = self.model(torch.cat([rows for rows, _ in batch]))
            self.executions += 1
            start = 0
            for rows, future in batch:
                future.set_result(outputs[start : start + len(rows)].sum().item())
                start += len(rows)


def serve(instance: ModelInstance) -> FastAPI:
    app = FastAPI()

    @app.post("/infer")
    async def infer(rows: list[list[float]]) -> float:
        return await asyncio.wrap_future(instance.submit(torch.tensor(rows)))

    @app.get("/live")
    async def live() -> dict:
        return {"status": "ok"}

    return app


def measure(ctx: PairContext) -> list[Measurement]:
    prepare(ctx.device)
    model = mlp(hidden=1024, layers=6).eval()
    payload = torch.randn(1, 256, generator=torch.Generator().manual_seed(1)).tolist()
    requests, clients = ctx.scale(160, 2000), ctx.scale(16, 32)
    runs: dict[str, list[tuple[float, float, float]]] = {"bad": [], "good": []}
    with ExitStack() as stack:
        instances, bases = {}, {}
        for variant in ("bad", "good"):
            path = ctx.pair.variant_path(variant)
            config = parse_text(path, path.read_text(encoding="utf-8")).message
            batching = config.WhichOneof("scheduling_choice") == "dynamic_batching"
            delay_s = config.dynamic_batching.max_queue_delay_microseconds / 1e6 if batching else 0.0
            instances[variant] = ModelInstance(model, config.max_batch_size if batching else 1, delay_s)
            stack.callback(instances[variant].close)
            bases[variant] = stack.enter_context(LoopbackServer(serve(instances[variant])))
            drive(bases[variant], path="/infer", payload=payload, requests=clients, clients=clients, probe_path="/live", probe_period_s=60)
        for _ in range(ctx.scale(1, 3)):  # alternated runs: drift hits both variants alike
            for variant in ("bad", "good"):
                instances[variant].executions = 0
                load = drive(bases[variant], path="/infer", payload=payload, requests=requests, clients=clients, probe_path="/live", probe_period_s=60)
                runs[variant].append((float(instances[variant].executions), load.throughput, load.p95_ms))
    load = f"{requests} requests of 1 row from {clients} concurrent clients"

    def measurement(metric: str, unit: str, index: int) -> Measurement:
        bad_runs = tuple(run[index] for run in runs["bad"])
        good_runs = tuple(run[index] for run in runs["good"])
        return Measurement(metric, unit, statistics.median(bad_runs), statistics.median(good_runs), bad_runs=bad_runs, good_runs=good_runs)

    # The executions depend on when requests arrive (how many a batcher's window collects): a timing too.
    return [
        measurement(f"model executions for {load}", "executions", 0),
        measurement(f"throughput, {load}", "req/s", 1),
        measurement(f"p95 latency, {load}", "ms", 2),
    ]
