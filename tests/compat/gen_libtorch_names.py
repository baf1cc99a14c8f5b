#!/usr/bin/env python3
"""Lists the names of libtorch 1.13's C++ API that libtorch programs use
(from Debian's libtorch-dev headers and python3-torch), checks which of them
Brasa has (a using-declaration of the name compiles against <brasa/torch.h>),
and writes:
  libtorch_names.txt          every name: category, name, present or missing
  libtorch_names_present.inc  a using-declaration of every present name, which
                              libtorch_names_test.cpp compiles (so a name that
                              goes missing breaks the build)
Run from the repository root after building (it compiles against build/):
  python3 tests/compat/gen_libtorch_names.py
CI does not need libtorch: the two files are committed."""
import glob
import os
import re
import subprocess
import sys
import tempfile

API = "/usr/include/torch/csrc/api/include/torch"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INCLUDES = ["build/include", "build/include_parts", "build/include_umbrella"]

# Names that belong to TorchScript, JIT, CUDA graphs, quantization, sparse or
# other back ends Brasa does not have, and implementation details. Brasa's
# tensors are strided only: the sparse-COO functions whose names do not say
# "sparse" (hspmm, smm, sspaddmm, indices_copy, values_copy), the quantized
# int_repr and the named-tensor align_tensors take inputs Brasa cannot make.
EXCLUDE = re.compile(
    r"backward|cudnn|miopen|mkldnn|quantize|quantized|fbgemm|sparse|vulkan|mps|nested|"
    r"^hspmm$|^smm$|^sspaddmm$|^indices_copy$|^values_copy$|^int_repr$|^align_tensors$|"
    r"fake_quant|_out$|^is_vulkan|^to_mkldnn|fused_moving|^q_|qscheme|coalesce|^indices$|"
    r"^values$|^crow|^col_indices|^ccol|^row_indices|^segment_reduce|^batch_norm_(gather|elemt|"
    r"stats|update|backward)|^native_|^choose_qparams|^sym_|^lift")


def read(path):
    with open(path) as f:
        return f.read()


def module_names():
    names = set()
    for p in glob.glob(f"{API}/nn/modules/**/*.h", recursive=True):
        names |= {n for n in re.findall(r"TORCH_MODULE\((\w+)\)", read(p)) if len(n) > 1}
    return sorted(names)


def option_names():
    nn, fn = set(), set()
    for p in glob.glob(f"{API}/nn/options/*.h"):
        text = read(p)
        for n in re.findall(r"(?:struct|class) TORCH_API (\w+Options)\b", text) + \
                re.findall(r"using (\w+Options) =", text) + \
                re.findall(r"struct (\w+Options) \{", text):
            (fn if n.endswith("FuncOptions") else nn).add(n)
    return sorted(nn), sorted(fn)


def functional_names():
    names = set()
    for p in glob.glob(f"{API}/nn/functional/*.h"):
        text = read(p)
        # Public functions follow the detail namespace: drop what is inside it.
        text = re.sub(r"namespace detail \{.*?\n\} // namespace detail", "", text, flags=re.S)
        names |= set(re.findall(r"^inline [^\n(]*?\b(\w+)\(", text, flags=re.M))
    return sorted(n for n in names if not n.startswith("_"))


def optimizer_names():
    names = set()
    for p in glob.glob(f"{API}/optim/*.h"):
        names |= set(re.findall(r"class TORCH_API (\w+) : public Optimizer", read(p)))
    return sorted(names)


def top_level_names():
    import torch
    ops = {os.path.basename(p)[:-2] for p in glob.glob("/usr/include/ATen/ops/*.h")}
    ops = {o for o in ops if not re.search(r"_(ops|native|meta|dispatch|compositeimplicitautograd"
                                           r"|compositeexplicitautograd|cpu|cuda)$", o)}
    public = {n for n in dir(torch) if not n.startswith("_") and callable(getattr(torch, n))}
    return sorted(n for n in ops & public if not EXCLUDE.search(n))


CATEGORIES = [
    ("nn module", "torch::nn", module_names),
    ("nn option struct", "torch::nn", lambda: option_names()[0]),
    ("nn functional option struct", "torch::nn::functional", lambda: option_names()[1]),
    ("nn functional function", "torch::nn::functional", functional_names),
    ("optimizer", "torch::optim", optimizer_names),
    ("top-level function", "torch", top_level_names),
]


def present(names_by_ns):
    """The (namespace, name) pairs whose using-declaration compiles, found by
    compiling all of them and dropping those the compiler reports, until clean."""
    todo = list(names_by_ns)
    for _ in range(20):
        src = "#include <brasa/torch.h>\n" + "".join(
            f"namespace probe_{i} {{ using {ns}::{n}; }}\n" for i, (ns, n) in enumerate(todo))
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
            f.write(src)
        r = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", "-fmax-errors=0"] +
                           [f"-I{ROOT}/{i}" for i in INCLUDES] + [f.name],
                           capture_output=True, text=True)
        os.unlink(f.name)
        if r.returncode == 0:
            return set(todo)
        bad = set()
        for m in re.finditer(r":(\d+):\d+: error", r.stderr):
            line = int(m.group(1)) - 2  # the include is line 1
            if 0 <= line < len(todo):
                bad.add(line)
        if not bad:
            sys.exit("could not attribute the compile errors:\n" + r.stderr[:3000])
        todo = [x for i, x in enumerate(todo) if i not in bad]
    sys.exit("did not converge")


def main():
    rows = []
    for category, ns, names in CATEGORIES:
        for n in names():
            rows.append((category, ns, n))
    have = present([(ns, n) for _, ns, n in rows])
    with open(os.path.join(HERE, "libtorch_names.txt"), "w") as out:
        out.write("# Generated by gen_libtorch_names.py from libtorch 1.13's headers; do not edit.\n")
        out.write("# category | namespace | name | present or missing\n")
        for category, ns, n in rows:
            out.write(f"{category} | {ns} | {n} | {'present' if (ns, n) in have else 'missing'}\n")
    with open(os.path.join(HERE, "libtorch_names_present.inc"), "w") as out:
        out.write("// Generated by gen_libtorch_names.py; do not edit.\n")
        for i, (category, ns, n) in enumerate(rows):
            if (ns, n) in have:
                out.write(f"namespace probe_{i} {{ using {ns}::{n}; }}\n")
    subprocess.run(["clang-format", "-i", os.path.join(HERE, "libtorch_names_present.inc")],
                   check=True)
    for category, _, _ in CATEGORIES:
        total = sum(1 for r in rows if r[0] == category)
        got = sum(1 for r in rows if r[0] == category and (r[1], r[2]) in have)
        print(f"{category}: {got} of {total}")


main()
