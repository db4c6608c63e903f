from __future__ import annotations

from gemlint.bench.native import checked_run
from gemlint.bench.pair import Measurement, PairContext


def measure(ctx: PairContext) -> list[Measurement]:
    requests = ctx.scale(20, 2000)
    runs = {
        variant: checked_run(ctx, variant, [ctx.pair.variant_path(variant), ctx.path("driver.cpp")], [str(requests), "256"], includes=[ctx.pair.folder])
        for variant in ("bad", "good")
    }
    checker = runs["bad"].checker
    return [
        Measurement(
            f"mismatched releases over {requests} requests ({checker})",
            "releases",
            runs["bad"].mismatched_releases,
            runs["good"].mismatched_releases,
            deterministic=True,
        )
    ]
