#!/usr/bin/env python3
"""Prints PyTorch's str() of the tensors that print_test.cpp checks.

Run once with Debian's python3-torch (1.13) when adding a case; the printed
strings are pasted into print_test.cpp. CI never needs PyTorch.
"""
import torch

CASES = [
    "torch.tensor([[1.0, -0.5], [2.0, 3.0]])",
    "torch.tensor([1., 2., 3.])",
    "torch.tensor([1, 2, 3])",
    "torch.tensor([1, 2, 3], dtype=torch.int32)",
    "torch.tensor([1.5, 2.25], dtype=torch.float64)",
    "torch.tensor([True, False])",
    "torch.tensor(3.5)",
    "torch.tensor(7)",
    "torch.tensor([1e-5, 1.0])",
    "torch.tensor([1e10, 1.0])",
    "torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5])",
    "torch.tensor([0., 0.])",
    "torch.zeros(0)",
    "torch.zeros(0, 3)",
    "torch.zeros(0, dtype=torch.int64)",
    "torch.tensor([1., 2.], dtype=torch.float16)",
    "torch.tensor([100., 2.5])",
    "torch.tensor([-1000., 2.])",
    "torch.arange(30.).view(2, 3, 5)",
    "torch.arange(40.) / 3",
    "torch.arange(2000.)",
    "torch.arange(3000).view(100, 30)",
    "torch.arange(6).view(2, 3).t()",
    "torch.ones(2, requires_grad=True)",
]

for case in CASES:
    print(case)
    print(repr(str(eval(case))))
