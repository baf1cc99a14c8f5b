#pragma once
// Which vectorized variant of the CPU kernels runs: the best the processor
// supports, chosen once at start-up, or the one BRASA_CPU_CAPABILITY names
// (default, avx2 or avx512; PyTorch's ATEN_CPU_CAPABILITY has the same
// values). One binary runs on any x86-64 machine; the build machine's
// -march does not matter (BRASA_ARCH remains an opt-in for everything else).
#include <string>

namespace brasa {

enum class CpuCapability { kDefault, kAvx2, kAvx512 };

// The variant in use, as PyTorch's torch.backends.cpu.get_cpu_capability()
// names it: "DEFAULT", "AVX2" or "AVX512".
std::string get_cpu_capability();
CpuCapability cpu_capability();
// The best variant this processor runs (AVX2 needs AVX2+FMA+F16C+BMI2;
// AVX512 needs AVX-512 F, BW, DQ, CD and VL).
CpuCapability best_cpu_capability();
const char* cpu_capability_name(CpuCapability c);

namespace detail {
// The variant named by BRASA_CPU_CAPABILITY, or the best one when it is
// unset or "auto"; an unknown name, or a variant the processor lacks, is an
// error that says so.
CpuCapability cpu_capability_from_env();
// Registers the kernels of variant `c` (for tests comparing the variants;
// not to be called while other threads run ops).
void use_cpu_capability(CpuCapability c);
}  // namespace detail

}  // namespace brasa
