#!/usr/bin/env bash
# The vector loops of the avx2 and avx512 variants inline the op's element
# lambda (the f of cpu::run): a lambda left out of line is called once per
# element and the loop stays scalar (tanh and sigmoid once ran 4x slower so,
# after an unrelated change grew loops.h). GCC decides this per file, so it
# is checked in the linked program: no call from the variants' code to an
# element lambda of floating-point arguments.
#   inlined_element_lambdas_test.sh PROGRAM
set -uo pipefail
program="$1"
objdump -d --no-show-raw-insn -C "$program" | awk '
  /call/ && /::(avx2|avx512)::/ && /\{lambda\((float|double|brasa::Half|brasa::BFloat16)(, (float|double|brasa::Half|brasa::BFloat16))*\)#[0-9]+\}::operator\(\)/ {
    sub(/^.*call[^<]*</, ""); sub(/>$/, ""); called[$0]++; calls++
  }
  END {
    for (f in called) print "called out of line (" called[f] " sites): " f
    if (calls > 0) { print "FAIL: " calls " calls of element lambdas"; exit 1 }
    print "ok: every element lambda of the variants is inlined"
  }'
