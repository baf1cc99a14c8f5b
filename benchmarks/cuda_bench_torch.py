# The PyTorch anchor of cuda_bench.cpp: the same measurements on the same
# GPU, printed as `result torch <what> <value> <unit>`.
import time

import torch


def best_seconds(reps, iters, f, synchronize=True):
    best = float("inf")
    for _ in range(reps):
        if synchronize:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(iters):
            f()
        if synchronize:
            torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def result(what, value, unit):
    print(f"result torch {what} {value:.4f} {unit}")


def main():
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")

    x = torch.ones(1, device=dev)
    for _ in range(100):
        x.add_(1)
    s = best_seconds(5, 10000, lambda: x.add_(1), synchronize=False)
    torch.cuda.synchronize()
    result("tiny_op_host_us", s * 1e6, "us")

    n = 64 << 20
    a, b = torch.ones(n, device=dev), torch.ones(n, device=dev)
    c = torch.empty(n, device=dev)
    add = best_seconds(5, 10, lambda: torch.add(a, b, out=c))
    result("add_256MB_GBps", 3 * 4 * n / add / 1e9, "GB/s")

    m = 4096
    ga, gb = torch.randn(m, m, device=dev), torch.randn(m, m, device=dev)
    gc = torch.empty(m, m, device=dev)
    mm = best_seconds(5, 5, lambda: torch.mm(ga, gb, out=gc))
    result("gemm_4096_TFLOPs", 2 * m**3 / mm / 1e12, "TFLOP/s")

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                              torch.nn.Linear(256, 10)).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    xb = torch.randn(64, 784, device=dev)
    yb = torch.randint(0, 10, (64,), device=dev)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(xb), yb).backward()
        opt.step()

    step()
    step()
    result("mlp_step_ms", best_seconds(5, 50, step) * 1e3, "ms")


if __name__ == "__main__":
    main()
