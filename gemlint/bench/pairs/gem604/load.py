"""Loads a checkpoint into a model object the usual way (build the model, ``torch.load`` the state dict,
``load_state_dict``) under a bound on the memory this process may add (RLIMIT_DATA: private memory);
prints whether the load completed and the peak resident memory it added."""

from __future__ import annotations

import argparse
import json
import resource


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--layers", type=int, required=True)
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--budget", type=int, required=True, help="bytes this process may add for the load")
    args = parser.parse_args()

    import torch
    from torch import nn

    torch.set_num_threads(1)
    baseline_rss = _status("VmRSS")
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (_status("VmData") + args.budget, hard))
    loaded, error = True, None
    try:
        model = nn.Sequential(*[nn.Linear(args.width, args.width, bias=False) for _ in range(args.layers)])
        state = torch.load(args.checkpoint, weights_only=True)
        model.load_state_dict(state)
    except (RuntimeError, MemoryError) as failure:  # the allocator could not get the memory
        loaded, error = False, f"{type(failure).__name__}: {str(failure).splitlines()[0][:200]}"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - baseline_rss
    print(json.dumps({"loaded": loaded, "peak_added": peak, "error": error}))


if __name__ == "__main__":
    main()
