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


def step_ms(net, input_shape, classes, reps, iters):
    """The best time of a training step (SGD with momentum) on fixed data, in ms."""
    dev = torch.device("cuda")
    net = net.to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(*input_shape, device=dev)
    y = torch.randint(0, classes, (input_shape[0],), device=dev)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()

    step()
    step()
    return best_seconds(reps, iters, step) * 1e3


def phase_ms(what, net, input_shape, classes, iters):
    """The step cut into phases (zero_grad + forward + loss, backward, optimizer step),
    each timed to a synchronisation; the best of `iters` for each."""
    dev = torch.device("cuda")
    net = net.to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(*input_shape, device=dev)
    y = torch.randint(0, classes, (input_shape[0],), device=dev)
    best = [float("inf")] * 3
    for i in range(iters + 2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        loss.backward()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        opt.step()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        if i >= 2:
            best = [min(best[0], t1 - t0), min(best[1], t2 - t1), min(best[2], t3 - t2)]
    # The host's time to issue a whole step, and each phase, the device drained before.
    host = float("inf")
    issue = [float("inf")] * 3
    for i in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        opt.step()
        t5 = time.perf_counter()
        issue = [min(issue[0], t1 - t0), min(issue[1], t3 - t2), min(issue[2], t5 - t4)]
        torch.cuda.synchronize()
        t6 = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        host = min(host, time.perf_counter() - t6)
    for name, b in zip(("forward_issue", "backward_issue", "optimizer_issue"), issue):
        result(f"{what}_{name}_ms", b * 1e3, "ms")
    best.append(host)
    for name, b in zip(("forward", "backward", "optimizer", "host_issue"), best):
        result(f"{what}_{name}_ms", b * 1e3, "ms")


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

    a, w = torch.randn(64, 256, device=dev), torch.randn(10, 256, device=dev)
    bias = torch.randn(10, device=dev)

    def host_us(what, f):
        best = float("inf")
        for _ in range(20):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(100):
                f()
            best = min(best, (time.perf_counter() - t0) / 100)
        result(what, best * 1e6, "us")

    host_us("host_us_add", lambda: torch.add(a, a))
    host_us("host_us_relu", lambda: torch.relu(a))
    host_us("host_us_mm", lambda: torch.mm(a, w.t()))
    host_us("host_us_linear", lambda: torch.nn.functional.linear(a, w, bias))
    host_us("host_us_sum", lambda: a.sum())
    host_us("host_us_log_softmax", lambda: torch.log_softmax(a, 1))
    host_us("host_us_zeros_like", lambda: torch.zeros_like(a))
    host_us("host_us_add_scaled_", lambda: a.add_(a, alpha=0.5))
    img, k5 = torch.randn(64, 1, 28, 28, device=dev), torch.randn(10, 1, 5, 5, device=dev)
    maps, logits = torch.randn(64, 10, 24, 24, device=dev), torch.randn(64, 10, device=dev)
    labels = torch.randint(0, 10, (64,), device=dev)
    g10, b10 = torch.ones(10, device=dev), torch.zeros(10, device=dev)
    rm10, rv10 = torch.zeros(10, device=dev), torch.ones(10, device=dev)
    host_us("host_us_conv2d", lambda: torch.conv2d(img, k5))
    host_us("host_us_max_pool2d", lambda: torch.max_pool2d(maps, 2))
    host_us("host_us_batch_norm",
            lambda: torch.nn.functional.batch_norm(maps, rm10, rv10, g10, b10, training=True))
    host_us("host_us_cross_entropy", lambda: torch.nn.functional.cross_entropy(logits, labels))

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
    phase_ms("mlp", net, (64, 784), 10, 20)

    class PoolRelu(torch.nn.Module):
        def forward(self, t):
            return torch.relu(torch.nn.functional.max_pool2d(t, 2))

    torch.manual_seed(0)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 10, 5), PoolRelu(), torch.nn.Conv2d(10, 20, 5),
                              PoolRelu(), torch.nn.Flatten(), torch.nn.Linear(320, 50),
                              torch.nn.ReLU(), torch.nn.Linear(50, 10))
    result("cnn_step_ms", step_ms(cnn, (64, 1, 28, 28), 10, 5, 50), "ms")
    phase_ms("cnn", cnn, (64, 1, 28, 28), 10, 20)

    def conv_bn_relu(cin, cout, k, stride):
        return torch.nn.Sequential(
            torch.nn.Conv2d(cin, cout, k, stride=stride, padding=k // 2, bias=False),
            torch.nn.BatchNorm2d(cout), torch.nn.ReLU())

    class GlobalMean(torch.nn.Module):
        def forward(self, t):
            return t.mean((2, 3))

    torch.manual_seed(0)
    layers = [conv_bn_relu(3, 64, 7, 2), torch.nn.MaxPool2d(3, 2, 1)]
    width = 64
    for _ in range(3):
        layers += [conv_bn_relu(width, 64, 1, 1), conv_bn_relu(64, 64, 3, 1),
                   conv_bn_relu(64, 256, 1, 1)]
        width = 256
    layers += [GlobalMean(), torch.nn.Linear(256, 1000)]
    stack = torch.nn.Sequential(*layers)
    result("resnet_stack_step_ms", step_ms(stack, (32, 3, 224, 224), 1000, 3, 10), "ms")
    torch.backends.cudnn.benchmark = True
    result("resnet_stack_benchmark_mode_step_ms", step_ms(stack, (32, 3, 224, 224), 1000, 3, 10),
           "ms")
    torch.backends.cudnn.benchmark = False
    phase_ms("resnet_stack", stack, (32, 3, 224, 224), 1000, 10)

    def part(what, x, f):
        x.requires_grad_(True)

        def run():
            f(x).sum().backward()

        run()
        result(what, best_seconds(3, 10, run) * 1e3, "ms")
        result(what[:-3] + "_fwd_ms", best_seconds(3, 10, lambda: f(x)) * 1e3, "ms")

    F = torch.nn.functional
    w7 = torch.randn(64, 3, 7, 7, device=dev, requires_grad=True)
    w3 = torch.randn(64, 64, 3, 3, device=dev, requires_grad=True)
    gamma = torch.ones(64, device=dev, requires_grad=True)
    beta = torch.zeros(64, device=dev, requires_grad=True)
    rm, rv = torch.zeros(64, device=dev), torch.ones(64, device=dev)
    big = lambda: torch.randn(32, 64, 112, 112, device=dev)
    part("part_conv7x7_ms", torch.randn(32, 3, 224, 224, device=dev),
         lambda t: F.conv2d(t, w7, None, 2, 3))
    part("part_conv3x3_56_ms", torch.randn(32, 64, 56, 56, device=dev),
         lambda t: F.conv2d(t, w3, None, 1, 1))
    part("part_batchnorm_112_ms", big(),
         lambda t: F.batch_norm(t, rm, rv, gamma, beta, training=True))
    part("part_relu_112_ms", big(), torch.relu)
    part("part_maxpool_112_ms", big(), lambda t: F.max_pool2d(t, 3, 2, 1))
    w_up = torch.randn(256, 64, 1, 1, device=dev, requires_grad=True)
    w_down = torch.randn(64, 256, 1, 1, device=dev, requires_grad=True)
    g256 = torch.ones(256, device=dev, requires_grad=True)
    b256 = torch.zeros(256, device=dev, requires_grad=True)
    rm256, rv256 = torch.zeros(256, device=dev), torch.ones(256, device=dev)
    part("part_conv1x1_up_56_ms", torch.randn(32, 64, 56, 56, device=dev),
         lambda t: F.conv2d(t, w_up))
    part("part_conv1x1_down_56_ms", torch.randn(32, 256, 56, 56, device=dev),
         lambda t: F.conv2d(t, w_down))
    part("part_batchnorm256_56_ms", torch.randn(32, 256, 56, 56, device=dev),
         lambda t: F.batch_norm(t, rm256, rv256, g256, b256, training=True))
    part("part_relu256_56_ms", torch.randn(32, 256, 56, 56, device=dev), torch.relu)
    part("part_global_mean_56_ms", torch.randn(32, 256, 56, 56, device=dev),
         lambda t: t.mean((2, 3)))
    xb = big()
    result("part_relu_fwd_112_ms", best_seconds(3, 10, lambda: torch.relu(xb)) * 1e3, "ms")
    result("part_sum_112_ms", best_seconds(3, 10, lambda: xb.sum()) * 1e3, "ms")
    result("part_channel_sum_fwd_112_ms", best_seconds(3, 10, lambda: xb.sum((0, 2, 3))) * 1e3, "ms")
    part("part_channel_mean_112_ms", big(), lambda t: t.mean((0, 2, 3)))

    torch.manual_seed(0)
    n = 16 << 20
    v = torch.randn(n, device=dev)
    rows = torch.randn(4096, 1024, device=dev)
    table = torch.randn(1 << 20, 64, device=dev)
    idx = torch.randint(0, 1 << 20, (1 << 20,), device=dev)
    mask = v > 0
    acc = torch.zeros(1 << 20, 64, device=dev)
    ms = lambda reps, iters, f: best_seconds(reps, iters, f) * 1e3
    result("randn_16M_ms", ms(3, 10, lambda: torch.randn(n, device=dev)), "ms")
    result("dropout_16M_ms", ms(3, 10, lambda: F.dropout(v, 0.5, True)), "ms")
    result("sort_16M_ms", ms(3, 5, lambda: torch.sort(v)), "ms")
    result("sort_rows_4096x1024_ms", ms(3, 5, lambda: torch.sort(rows, -1)), "ms")
    result("index_rows_1M_ms", ms(3, 10, lambda: table[idx]), "ms")
    result("index_put_acc_1M_ms", ms(3, 10, lambda: acc.index_put_((idx,), table, True)), "ms")
    result("masked_select_16M_ms", ms(3, 10, lambda: v.masked_select(mask)), "ms")


if __name__ == "__main__":
    main()
