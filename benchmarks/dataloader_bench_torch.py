# The PyTorch 1.13 anchor of dataloader_bench.cpp: the same dataset, transforms
# and batches with torch.utils.data.DataLoader (worker processes).
import gzip
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

ROOT = "/usr/share/datasets/fashion-mnist"


class Images(Dataset):
    def __init__(self, heavy):
        with gzip.open(f"{ROOT}/train-images-idx3-ubyte.gz", "rb") as f:
            self.bytes = torch.from_numpy(np.frombuffer(f.read(), np.uint8, offset=16).copy()).view(-1, 28, 28)
        with gzip.open(f"{ROOT}/train-labels-idx1-ubyte.gz", "rb") as f:
            self.labels = torch.from_numpy(np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64))
        self.heavy = heavy

    def __len__(self):
        return len(self.bytes)

    def __getitem__(self, i):
        x = (self.bytes[i].float().div(255.0) - 0.2860) / 0.3530
        if self.heavy:
            for _ in range(2):
                x = (x * 0.999 + 0.001).tanh() + x.flip(1) * 0.0001
        return x.unsqueeze(0), self.labels[i]


def main():
    torch.set_num_threads(1)
    for heavy in (False, True):
        ds = Images(heavy)
        t0 = time.perf_counter()
        for i in range(2000):
            ds[i]
        print(f"# {'heavy' if heavy else 'light'} transform: {(time.perf_counter() - t0) / 2000 * 1e6:.1f} us per sample")
        batches = 450 if heavy else 900
        for workers in (0, 1, 2):
            loader = DataLoader(ds, batch_size=64, shuffle=True, num_workers=workers)
            n = 0
            t0 = time.perf_counter()
            for _ in loader:
                n += 1
                if n == 5:
                    t0 = time.perf_counter()
                if n == batches + 5:
                    break
            s = time.perf_counter() - t0
            kind = "processes" if workers else "-"
            print(f"result torch dataloader {'heavy' if heavy else 'light'} {kind} {workers} {batches / s:.1f}", flush=True)


if __name__ == "__main__":
    main()
