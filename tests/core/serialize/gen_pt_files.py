#!/usr/bin/env python3
"""Writes the .pt files of pt_format_test.cpp with Python's torch.save
(Debian's python3-torch 1.13); the files are committed, CI does not need
torch. Values are arange-based so that the test can rebuild them."""
import io
import os
import pickle
import zipfile

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pt")
os.makedirs(OUT, exist_ok=True)


def save(obj, name):
    torch.save(obj, os.path.join(OUT, name))


x = torch.arange(12, dtype=torch.float32).view(3, 4)
save(x, "tensor.pt")
# Views of one storage, a double tensor, a 0-dim and an empty tensor.
save([x, x[1], x.t(), torch.arange(3, dtype=torch.float64) / 4, torch.tensor(7.5), torch.zeros(0, 3)],
     "list.pt")
# A state_dict of Linear(3, 2) + BatchNorm1d(2), with known values.
net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
with torch.no_grad():
    net[0].weight.copy_(torch.arange(6, dtype=torch.float32).view(2, 3) / 10)
    net[0].bias.copy_(torch.tensor([0.5, -0.5]))
    net[1].running_mean.copy_(torch.tensor([1.0, 2.0]))
    net[1].num_batches_tracked.fill_(3)
save(net.state_dict(), "state_dict.pt")
# Every dtype.
save({name: (torch.arange(4) * 3 - 4).to(dt) for name, dt in [
    ("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float64", torch.float64),
    ("int8", torch.int8), ("uint8", torch.uint8), ("int16", torch.int16), ("int32", torch.int32),
    ("int64", torch.int64), ("bool", torch.bool)]}, "dtypes.pt")
save(torch.nn.Parameter(torch.ones(2, 2)), "parameter.pt")
save({"step": 3}, "int_dict.pt")


# A file that asks the unpickler to run os.system: torch.save's layout with a
# hostile data.pkl.
class Evil:
    def __reduce__(self):
        return (os.system, ("echo this should never run",))


buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
    z.writestr("evil/data.pkl", pickle.dumps(Evil(), protocol=2))
    z.writestr("evil/version", "3\n")
with open(os.path.join(OUT, "evil.pt"), "wb") as f:
    f.write(buf.getvalue())
print("wrote", sorted(os.listdir(OUT)))
