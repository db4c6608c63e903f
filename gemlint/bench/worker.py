"""``python -m gemlint.bench.worker CODE --device D [--quick]``: runs one pair, prints its results as JSON.

Pairs marked ``isolated`` run here, in a fresh interpreter, because their variants
change process-wide state (environment variables read at CUDA start-up, logging).
"""

from __future__ import annotations

import argparse
import json
import sys

from gemlint.bench.registry import pair_for
from gemlint.bench.runner import measure_pair


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gemlint.bench.worker")
    parser.add_argument("code")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    pair = pair_for(args.code)
    if pair is None:
        print(f"no benchmark pair for {args.code}", file=sys.stderr)
        return 2
    results = measure_pair(pair, args.device, args.quick)
    sys.stdout.write(json.dumps([result.to_json() for result in results]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
