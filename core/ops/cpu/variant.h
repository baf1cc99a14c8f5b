#pragma once
// Brasa's vectorized CPU kernels (the files listed as BRASA_VECTOR_KERNELS in
// core/CMakeLists.txt) are compiled once per instruction-set variant — base
// x86-64, AVX2 and AVX-512 — and the variant the running processor supports
// is registered at start-up (device/cpu_capability.h).
//
// A variant's compilation must not leak into code the other variants share:
// an inline function or template instantiation of a common header (a
// std::vector method, brasa::detail::str) compiled for AVX-512 could be the
// copy the linker keeps for the whole program, and an AVX2-only machine would
// die on it. So this header is the first include of every variant file. It
// includes the common headers those files use first, compiled for the base
// instruction set, and only then switches the rest of the file to the
// variant's instructions (#pragma GCC target, which adds instruction sets
// and keeps arch and tuning, so common inline functions still inline into
// the kernels). The kernels themselves go in an inline namespace named after
// the variant, so the copies are distinct functions (brasa::cpu::avx2::...).
// tests/core/ops/cpu/isa_isolation_test.sh checks a linked program for
// vector instructions outside their variant.
//
// Files outside the set see the base variant.
#include <brasa/ops/copy.h>
#include <brasa/ops/elementwise.h>
#include <brasa/ops/factory.h>
#include <brasa/ops/kernel_table.h>
#include <brasa/ops/kernels/activation.h>
#include <brasa/ops/kernels/conv.h>
#include <brasa/ops/kernels/copy.h>
#include <brasa/ops/kernels/elementwise.h>
#include <brasa/ops/kernels/normalization.h>
#include <brasa/ops/kernels/pooling.h>
#include <brasa/ops/kernels/reduction.h>
#include <brasa/ops/unary_math.h>
#include <brasa/tensor/tensor.h>
#include <brasa/util/error.h>
#include <brasa/util/parallel.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

// The pragma does not define __AVX2__ and the like in C++ (the file is
// tokenized before the pragma applies): the variant files test
// BRASA_CPU_HAS_AVX2 / BRASA_CPU_HAS_AVX512 instead.
#if defined(BRASA_CPU_VARIANT_AVX512)
#define BRASA_CPU_VARIANT avx512
#define BRASA_CPU_HAS_AVX2 1
#define BRASA_CPU_HAS_AVX512 1
// x86-64-v4's instruction sets, with 512-bit vectors for the vectorizer.
#pragma GCC target( \
    "sse3,ssse3,sse4.1,sse4.2,popcnt,avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,prefer-vector-width=512")
#elif defined(BRASA_CPU_VARIANT_AVX2)
#define BRASA_CPU_VARIANT avx2
#define BRASA_CPU_HAS_AVX2 1
// x86-64-v3's instruction sets.
#pragma GCC target("sse3,ssse3,sse4.1,sse4.2,popcnt,avx,avx2,bmi,bmi2,f16c,fma,lzcnt,movbe")
#else
#define BRASA_CPU_VARIANT base
#endif
