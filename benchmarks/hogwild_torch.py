# The PyTorch 1.13 anchor of examples/hogwild (PyTorch's mnist_hogwild with
# the same network, data, sharding and settings; Fashion-MNIST read from
# Debian's dataset-fashion-mnist without torchvision).
#   python3 hogwild_torch.py [PROCESSES] [THREADS_PER_PROCESS]
import gzip
import sys
import time

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

ROOT = "/usr/share/datasets/fashion-mnist"


def idx(name, offset):
    with gzip.open(f"{ROOT}/{name}", "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = F.relu(self.fc1(x.flatten(1)))
        x = F.dropout(x, training=self.training)
        return F.log_softmax(self.fc2(x), dim=1)


def train(rank, model, images, labels, processes, threads):
    torch.set_num_threads(threads)
    torch.manual_seed(1 + rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    g = torch.Generator()
    g.manual_seed(1)
    order = torch.randperm(len(images), generator=g)[rank::processes]
    for start in range(0, len(order), 64):
        index = order[start:start + 64]
        x = (images[index] - 0.2860) / 0.3530
        opt.zero_grad()
        F.nll_loss(model(x), labels[index]).backward()
        opt.step()


def main():
    processes = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    images = torch.from_numpy(idx("train-images-idx3-ubyte.gz", 16).copy()).float().div(255)
    images = images.view(-1, 1, 28, 28)
    labels = torch.from_numpy(idx("train-labels-idx1-ubyte.gz", 8).astype(np.int64))
    torch.manual_seed(1)
    model = Net()
    model.share_memory()
    t0 = time.perf_counter()
    procs = [mp.Process(target=train, args=(r, model, images, labels, processes, threads))
             for r in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    secs = time.perf_counter() - t0
    print(f"result torch hogwild {processes} {threads} {len(images) / secs:.1f}")


if __name__ == "__main__":
    mp.set_start_method("fork")
    main()
