#!/usr/bin/env bash
# The instruction-set variants stay apart (core/ops/cpu/variant.h): in a
# linked program, only functions of the avx2 and avx512 variants use 256-bit
# registers, and only the avx512 variant's use AVX-512 registers (zmm, mask
# registers). A helper compiled for AVX-512 that the linker kept for
# everybody would break the program on an AVX2-only processor.
#   isa_isolation_test.sh PROGRAM
set -uo pipefail
program="$1"
objdump -d --no-show-raw-insn -C "$program" | awk '
  /^[0-9a-f]+ <.*>:$/ { fn = $0; next }
  /%zmm|%k[1-7]/ { if (fn !~ /::avx512::/) bad[fn] = "AVX-512" }
  /%ymm/ { if (fn !~ /::avx2::|::avx512::/ && !(fn in bad)) bad[fn] = "256-bit AVX" }
  /%ymm|%zmm/ { if (fn ~ /::avx2::|::avx512::/) vector_fns++ }
  END {
    n = 0
    for (f in bad) { print "outside its variant (" bad[f] "): " f; n++ }
    if (vector_fns == 0) { print "FAIL: no vector code of the variants found"; exit 1 }
    if (n > 0) { print "FAIL: " n " functions"; exit 1 }
    print "ok: vector registers only in the variants (" vector_fns " instructions)"
  }'
