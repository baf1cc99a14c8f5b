#!/usr/bin/env python3
"""Lists the fields (TORCH_ARG) of every libtorch 1.13 option struct that
Brasa has (from libtorch_names.txt), checks which Brasa's struct offers as
libtorch does — a getter options.f() and a setter options.f(value) — and
writes:
  libtorch_option_fields.txt          every field: struct, field, present or missing
  libtorch_option_fields_present.inc  a compile-time check of every present
                                      field, which libtorch_names_test.cpp
                                      includes (a field that goes missing
                                      breaks the build)
Run from the repository root after building (it compiles against build/):
  python3 tests/compat/gen_libtorch_option_fields.py
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


def read(path):
    with open(path) as f:
        return f.read()


def body_at(text, start):
    """The text between the brace at `start` and its partner."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return ""


def definitions():
    """Per struct name: its own TORCH_ARG fields, its bases, and what it aliases."""
    fields, bases, aliases, templates = {}, {}, {}, set()
    for p in glob.glob(f"{API}/nn/options/*.h"):
        text = re.sub(r"//[^\n]*", "", read(p))
        for m in re.finditer(r"(template\s*<[^>]*>\s*)?(?:struct|class)\s+(?:TORCH_API\s+)?(\w+)\s*"
                             r"(?::\s*public\s+([\w:]+))?[^;{]*\{", text):
            name = m.group(2)
            if m.group(1):
                templates.add(name)
            body = body_at(text, m.end() - 1)
            args = re.findall(r"TORCH_ARG\(((?:[^()]|\([^()]*\))*)\)", body)
            fields.setdefault(name, [])
            for a in args:
                field = a.rsplit(",", 1)[1].strip()
                if field not in fields[name]:
                    fields[name].append(field)
            if m.group(3):
                bases[name] = m.group(3).split("::")[-1]
        for m in re.finditer(r"using\s+(\w+Options)\s*=\s*([\w:]+)", text):
            aliases[m.group(1)] = m.group(2).split("::")[-1]
    return fields, bases, aliases, templates


def all_fields(name, fields, bases, aliases, seen=()):
    if name in seen:
        return []
    if name in aliases and name not in fields:
        return all_fields(aliases[name], fields, bases, aliases, seen + (name,))
    out = list(fields.get(name, []))
    if name in bases:
        out += [f for f in all_fields(bases[name], fields, bases, aliases, seen + (name,))
                if f not in out]
    return out


def structs():
    rows = []
    for line in read(os.path.join(HERE, "libtorch_names.txt")).splitlines():
        if line.startswith("#"):
            continue
        category, ns, name, state = [x.strip() for x in line.split("|")]
        if "option struct" in category and state == "present":
            rows.append((ns, name))
    return rows


def probe(i, ns, struct, field):
    return (f"template <class T> constexpr bool field_{i} = requires(T& o, const T& c) {{ c.{field}(); "
            f"o.{field}(c.{field}()); }};\n"
            f"static_assert(field_{i}<{ns}::{struct}>, \"{struct}::{field}\");\n")


def present(rows):
    todo = list(range(len(rows)))
    for _ in range(30):
        lines = ["#include <brasa/torch.h>\n"]
        where = {}  # source line -> probe
        for i in todo:
            where[len(lines) + 1] = where[len(lines) + 2] = i  # its two lines
            lines += probe(i, *rows[i]).splitlines(keepends=True)
        src = "".join(lines)
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
            if int(m.group(1)) in where:
                bad.add(where[int(m.group(1))])
        if not bad:
            sys.exit("could not attribute the compile errors:\n" + r.stderr[:3000])
        todo = [i for i in todo if i not in bad]
    sys.exit("did not converge")


def main():
    fields, bases, aliases, templates = definitions()
    rows = []
    for ns, struct in structs():
        if struct in templates:
            continue  # probed through its instantiations (Conv2dOptions for ConvOptions<2>)
        for field in all_fields(struct, fields, bases, aliases):
            rows.append((ns, struct, field))
    have = present(rows)
    with open(os.path.join(HERE, "libtorch_option_fields.txt"), "w") as out:
        out.write("# Generated by gen_libtorch_option_fields.py from libtorch 1.13's headers; "
                  "do not edit.\n# struct | field | present or missing\n")
        for i, (ns, struct, field) in enumerate(rows):
            out.write(f"{ns}::{struct} | {field} | {'present' if i in have else 'missing'}\n")
    with open(os.path.join(HERE, "libtorch_option_fields_present.inc"), "w") as out:
        out.write("// Generated by gen_libtorch_option_fields.py; do not edit.\n")
        for i, row in enumerate(rows):
            if i in have:
                out.write(probe(i, *row))
    subprocess.run(["clang-format", "-i", os.path.join(HERE, "libtorch_option_fields_present.inc")],
                   check=True)
    print(f"option fields (getter and setter): {len(have)} of {len(rows)}")


main()
