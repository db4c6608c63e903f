"""Run inside a private mount namespace whose /dev/shm is a tmpfs of the size under test: a producer
process hands tensors to a consumer through torch.multiprocessing (shared memory in /dev/shm), several
in flight as tensor-parallel workers keep them; prints the transfers that arrived and the time taken."""

from __future__ import annotations

import argparse
import json
import time

import torch
import torch.multiprocessing as mp


def producer(tensors: int, mib: int, channel, done) -> None:
    for index in range(tensors):
        try:
            channel.put(torch.full((mib * 2**20 // 4,), float(index)))
        except Exception as error:  # the shared-memory segment could not be created
            channel.put(f"{type(error).__name__}: {error}")
    done.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tensors", type=int, required=True)
    parser.add_argument("--mib", type=int, required=True)
    args = parser.parse_args()
    context = mp.get_context("spawn")
    channel, done = context.Queue(maxsize=4), context.Event()
    worker = context.Process(target=producer, args=(args.tensors, args.mib, channel, done), daemon=True)
    start = time.perf_counter()
    worker.start()
    arrived, errors = 0, []
    received = []
    for _ in range(args.tensors):
        try:
            item = channel.get(timeout=15)
        except Exception as error:
            errors.append(f"{type(error).__name__}: {error}")
            break
        if isinstance(item, str):
            errors.append(item)
            continue
        received.append(item)  # held, as a worker holds activations until the step completes
        if len(received) > 3:
            received.pop(0)
        arrived += 1
    seconds = time.perf_counter() - start
    done.set()
    worker.join(timeout=60)
    if worker.is_alive():
        worker.kill()
    print(json.dumps({"arrived": arrived, "seconds": seconds, "error": errors[0] if errors else None, "exitcode": worker.exitcode}))


if __name__ == "__main__":
    main()
