#!/usr/bin/env bash
# CI after README's test command: the whole test suite under ASan + UBSan (scripts/sanitize.sh),
# then each libFuzzer target for $SPMVJIT_FUZZ_SECONDS (60) seconds (scripts/fuzz.sh), then the HIP
# backend built for HIP's NVIDIA platform compiling every spec (scripts/hip_nvidia_check.sh). Installs
# clang 19 and its sanitizer/libFuzzer runtimes first, which only the fuzzers need.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang-19 libclang-rt-19-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci_extra: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

start=$SECONDS
bash scripts/sanitize.sh
echo "ci_extra: sanitizer build and tests took $((SECONDS - start)) s"
start=$SECONDS
bash scripts/fuzz.sh "${SPMVJIT_FUZZ_SECONDS:-60}"
echo "ci_extra: fuzzer build and runs took $((SECONDS - start)) s"
start=$SECONDS
bash scripts/hip_nvidia_check.sh
echo "ci_extra: HIP's NVIDIA platform build and compile check took $((SECONDS - start)) s"
