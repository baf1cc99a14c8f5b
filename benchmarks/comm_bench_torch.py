"""torch.distributed (gloo) on the cases of comm_bench, for scripts/bench.
Run with 2 ranks under brasarun (env://). Rank 0 prints
`result gloo torch <op> <bytes> <microseconds>` (best repetition, as comm_bench)."""
import sys
import time

import torch
import torch.distributed as dist

CASES = [("allreduce", 4 << 10), ("allreduce", 64 << 10), ("allreduce", 1 << 20),
         ("allreduce", 16 << 20), ("allreduce", 64 << 20), ("broadcast", 16 << 20)]


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    for op, nbytes in CASES:
        buf = torch.ones(nbytes // 4)
        iters = max(5, min(2000, (64 << 20) // nbytes) // 8)
        call = (lambda: dist.all_reduce(buf)) if op == "allreduce" else (lambda: dist.broadcast(buf, 0))
        for _ in range(3):
            call()
        times = []
        for _ in range(7):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(iters):
                call()
            times.append((time.perf_counter() - t0) / iters)
        if rank == 0:
            print(f"result gloo torch {op} {nbytes} {min(times) * 1e6:.2f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
