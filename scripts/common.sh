# Shared by scripts/test, scripts/demo and scripts/bench: install what is
# missing (Debian, as root), then configure and build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BRASA_BUILD_DIR:-$ROOT/build}"
JOBS="${BRASA_JOBS:-2}"

# Debian packages this stage needs (DESIGN.md §3).
BRASA_PACKAGES=(cmake g++ make ninja-build ccache git clang-format libgtest-dev libgmock-dev libopenblas-dev libdlpack-dev zlib1g-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin libgloo-dev libdnnl-dev libboost-dev)

ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "brasa: missing packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  echo "brasa: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# configure_and_build [-DOPTION=...]... [--target NAME]
configure_and_build() {
  local opts=() target=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --target) target+=(--target "$2"); shift 2 ;;
      *) opts+=("$1"); shift ;;
    esac
  done
  # A new build directory uses Ninja: it starts compiling a target's objects
  # before the libraries it links are linked (make waits target by target),
  # which keeps both cores busy on a cold build. An existing one keeps its
  # generator (CMake refuses to switch).
  local generator=()
  [ -f "$BUILD/CMakeCache.txt" ] || generator=(-G Ninja)
  cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${opts[@]}" >/dev/null
  cmake --build "$BUILD" -j"$JOBS" "${target[@]}"
}
