#include <brasa/device/cpu_capability.h>
#include <brasa/ops/cpu/register.h>
#include <brasa/util/error.h>

#include <cstdlib>
#include <cstring>

namespace brasa {

namespace {
CpuCapability g_capability = CpuCapability::kDefault;
}  // namespace

const char* cpu_capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::kAvx2:
      return "AVX2";
    case CpuCapability::kAvx512:
      return "AVX512";
    default:
      return "DEFAULT";
  }
}

CpuCapability best_cpu_capability() {
  __builtin_cpu_init();
#ifdef __clang__
  // clang 14 does not know "f16c" here; every processor with AVX2 has it.
  const bool f16c = true;
#else
  const bool f16c = __builtin_cpu_supports("f16c");
#endif
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c &&
                    __builtin_cpu_supports("bmi2");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vl");
  return avx512 ? CpuCapability::kAvx512 : avx2 ? CpuCapability::kAvx2 : CpuCapability::kDefault;
}

CpuCapability cpu_capability() {
  detail::register_builtin_kernels();  // chooses the variant
  return g_capability;
}

std::string get_cpu_capability() { return cpu_capability_name(cpu_capability()); }

namespace detail {

CpuCapability cpu_capability_from_env() {
  const CpuCapability best = best_cpu_capability();
  const char* env = std::getenv("BRASA_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0' || std::strcmp(env, "auto") == 0) return best;
  CpuCapability asked;
  if (std::strcmp(env, "default") == 0)
    asked = CpuCapability::kDefault;
  else if (std::strcmp(env, "avx2") == 0)
    asked = CpuCapability::kAvx2;
  else if (std::strcmp(env, "avx512") == 0)
    asked = CpuCapability::kAvx512;
  else
    BRASA_ERROR("BRASA_CPU_CAPABILITY='", env,
                "' is not a CPU capability: expected default, avx2, avx512 or auto");
  BRASA_CHECK(static_cast<int>(asked) <= static_cast<int>(best), "BRASA_CPU_CAPABILITY=", env,
              ": this processor supports at most ", cpu_capability_name(best));
  return asked;
}

void use_cpu_capability(CpuCapability c) {
  BRASA_CHECK(static_cast<int>(c) <= static_cast<int>(best_cpu_capability()),
              "use_cpu_capability: this processor does not run ", cpu_capability_name(c),
              " kernels (it supports at most ", cpu_capability_name(best_cpu_capability()), ")");
  switch (c) {
    case CpuCapability::kAvx512:
      cpu::avx512::register_vector_kernels();
      break;
    case CpuCapability::kAvx2:
      cpu::avx2::register_vector_kernels();
      break;
    default:
      cpu::base::register_vector_kernels();
  }
  g_capability = c;
}

}  // namespace detail
}  // namespace brasa
