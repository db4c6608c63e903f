"""Serves app.py with uvicorn on loopback and probes the path each manifest's livenessProbe names.

The probe period is compressed (the manifests say 5 s) so that a run of seconds sees several probes.
"""

from __future__ import annotations

import importlib

import yaml

from gemlint.bench.pair import Measurement, PairContext
from gemlint.bench.pairs._models import prepare
from gemlint.bench.pairs._service import load_measurements, probed_load

PROBE_PERIOD_S = 0.05


def liveness_path(manifest: str) -> str:
    for document in yaml.safe_load_all(manifest):
        for container in document["spec"]["template"]["spec"]["containers"]:
            return container["livenessProbe"]["httpGet"]["path"]
    raise ValueError("no livenessProbe in the manifest")


def measure(ctx: PairContext) -> list[Measurement]:
    prepare(ctx.device)
    service = importlib.import_module(f"{ctx.pair.package}.app")
    paths = {variant: liveness_path(ctx.pair.variant_path(variant).read_text(encoding="utf-8")) for variant in ("bad", "good")}
    requests, clients = ctx.scale(20, 1000), ctx.scale(2, 4)
    common = dict(requests=requests, clients=clients, probe_period_s=PROBE_PERIOD_S)
    probed_load(service.app, service.model, probe_path=paths["good"], **{**common, "requests": 2, "clients": 1})  # warm-up
    bad, good = [], []
    for _ in range(ctx.scale(1, 5)):  # alternated runs: drift hits both variants alike
        bad.append(probed_load(service.app, service.model, probe_path=paths["bad"], **common))
        good.append(probed_load(service.app, service.model, probe_path=paths["good"], **common))
    return load_measurements(bad, good, requests=requests, clients=clients, period_s=PROBE_PERIOD_S, probe="liveness probe")
