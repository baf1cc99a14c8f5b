# The PyTorch 1.13 anchor of ddp_bench (Debian's python3-torch): the same
# models, batches and measurements, printed in the same format with "torch"
# in place of "brasa".
#
#   python3 ddp_bench_torch.py single mlp|cnn
#   brasarun --nproc-per-node 2 python3 ddp_bench_torch.py ddp mlp|cnn gloo [BUCKET_MB]
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 512)
        self.fc2 = nn.Linear(512, 256)
        self.fc3 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x.flatten(1))))))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, 5)
        self.conv2 = nn.Conv2d(10, 20, 5)
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        h = F.relu(F.max_pool2d(self.conv1(x), 2))
        h = F.relu(F.max_pool2d(self.conv2(h), 2))
        return self.fc2(F.relu(self.fc1(h.flatten(1))))


def make_data(model, rank):
    torch.manual_seed(100 + rank)
    b = 128 if model == "mlp" else 64
    x = torch.randn(b, 784) if model == "mlp" else torch.randn(b, 1, 28, 28)
    return x, torch.randint(0, 10, (b,)), b


def time_steps(step, windows, steps):
    for _ in range(5):
        step()
    per = []
    for _ in range(windows):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        per.append((time.perf_counter() - t0) / steps)
    return statistics.median(per)


def main():
    args = sys.argv[1:]
    torch.set_num_threads(1)
    mode, model = args[0], args[1]
    steps = 20 if model == "mlp" else 30
    make = Mlp if model == "mlp" else Cnn
    if mode == "single":
        net = make()
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        x, y, b = make_data(model, 0)

        def step():
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(net(x), y).backward()
            opt.step()

        t = time_steps(step, 7, steps)
        print(f"result torch single {model} - - {b / t:.1f}")
        return
    backend = args[2]
    bucket_mb = float(args[3]) if len(args) > 3 else 25.0
    dist.init_process_group(backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)
    ddp = nn.parallel.DistributedDataParallel(make(), bucket_cap_mb=bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    x, y, b = make_data(model, rank)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(ddp(x), y).backward()
        opt.step()

    t_step = time_steps(step, 7, steps)

    def nosync_step():
        with ddp.no_sync():
            step()

    t_nosync = time_steps(nosync_step, 7, steps)

    def backward_time(sync):
        per = []
        for _ in range(5 * steps):
            opt.zero_grad(set_to_none=True)
            with contextlib.nullcontext() if sync else ddp.no_sync():
                loss = F.cross_entropy(ddp(x), y)
                dist.barrier()
                t0 = time.perf_counter()
                loss.backward()
                per.append(time.perf_counter() - t0)
        return statistics.median(per)

    bwd_sync = backward_time(True)
    bwd_nosync = backward_time(False)
    # The same allreduces alone: DDP's buckets (sizes from its reducer).
    sizes = [p.numel() for p in ddp.parameters()]
    buckets = [torch.ones(sum(sizes))]
    if hasattr(ddp, "_get_ddp_logging_data"):
        data = ddp._get_ddp_logging_data()
        if "bucket_sizes" in data:
            buckets = [torch.ones(int(s) // 4) for s in str(data["bucket_sizes"]).split(", ")]

    def comm():
        for t in buckets:
            t.div_(world)
            dist.all_reduce(t)

    t_comm = time_steps(comm, 7, steps)
    if rank == 0:
        print(f"result torch ddp {model} {backend} {bucket_mb:g} {world * b / t_step:.1f}")
        print(f"detail torch {model} {backend} {bucket_mb:g} nosync_samples_per_s "
              f"{world * b / t_nosync:.1f} backward_sync_ms {bwd_sync * 1e3:.3f} "
              f"backward_nosync_ms {bwd_nosync * 1e3:.3f} comm_alone_ms {t_comm * 1e3:.3f} "
              f"exposed_fraction {(bwd_sync - bwd_nosync) / t_comm:.3f} buckets {len(buckets)}")
    dist.barrier()
    del ddp
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
    # PyTorch 1.13's gloo threads can abort the interpreter's teardown
    # ("terminate called without an active exception") after the results
    # are out, which stopped `scripts/bench ddp` midway: leave at once.
    sys.stdout.flush()
    os._exit(0)
