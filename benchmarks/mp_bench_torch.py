# The torch.multiprocessing 1.13 anchor of mp_bench.cpp: the same three
# measurements, printed as `result torch <what> <bytes> <ms>`.
import time

import torch
import torch.multiprocessing as mp


def child(to_child, to_parent):
    while True:
        t = to_child.get()
        if t is None:
            return
        to_parent.put(t.numel())


def main():
    torch.set_num_threads(1)
    to_child, to_parent = mp.Queue(), mp.Queue()
    p = mp.Process(target=child, args=(to_child, to_parent))
    p.start()
    for mib in (1, 64, 1024):
        n = mib * 1024 * 1024 // 4
        reps = 3 if mib >= 1024 else 10
        shared = torch.ones(n)
        shared.share_memory_()
        handoff, unshared, share = [], [], []
        for r in range(reps + 1):
            t0 = time.perf_counter()
            to_child.put(shared)
            to_parent.get()
            if r > 0:
                handoff.append((time.perf_counter() - t0) * 1e3)
        for _ in range(reps):
            fresh = torch.ones(n)
            t0 = time.perf_counter()
            to_child.put(fresh)
            to_parent.get()
            unshared.append((time.perf_counter() - t0) * 1e3)
        for _ in range(reps):
            fresh = torch.ones(n)
            t0 = time.perf_counter()
            fresh.share_memory_()
            share.append((time.perf_counter() - t0) * 1e3)
        b = n * 4
        print(f"result torch handoff_shared {b} {min(handoff):.3f}")
        print(f"result torch handoff_unshared {b} {min(unshared):.3f}")
        print(f"result torch share_memory {b} {min(share):.3f}", flush=True)
    to_child.put(None)
    p.join()


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
