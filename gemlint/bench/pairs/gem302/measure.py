from __future__ import annotations

from gemlint.bench.native import checked_run
from gemlint.bench.pair import Measurement, PairContext


def measure(ctx: PairContext) -> list[Measurement]:
    requests, features = ctx.scale(40, 4000), 256
    runs = {
        variant: checked_run(ctx, variant, [ctx.pair.variant_path(variant), ctx.path("driver.c")], [str(requests), str(features)], includes=[ctx.pair.folder])
        for variant in ("bad", "good")
    }
    rejected = runs["bad"].value("rejected")
    checker = runs["bad"].checker
    return [
        Measurement(f"bytes leaked after {requests} requests, {rejected} rejected ({checker})", "bytes", runs["bad"].leaked_bytes, runs["good"].leaked_bytes, deterministic=True),
        Measurement(f"blocks leaked after {requests} requests ({checker})", "blocks", runs["bad"].leaked_blocks, runs["good"].leaked_blocks, deterministic=True),
    ]
