#!/usr/bin/env bash
# Fails when a binary needs a CUDA library at load time (a DT_NEEDED entry): the library and the
# command line load the driver, NVRTC and cuSPARSE with dlopen, so they start on machines without
# CUDA. Usage: no_cuda_needed.sh READELF BINARY...
set -euo pipefail
readelf="$1"; shift
status=0
for binary in "$@"; do
  needed=$("$readelf" -d "$binary" | grep '(NEEDED)' || true)
  bad=$(grep -oE '\[lib(cuda|cudart|cusparse|nvrtc|nvrtc-builtins|nvJitLink|cublas|cublasLt)\.so[^]]*\]' \
          <<<"$needed" || true)
  if [ -n "$bad" ]; then
    echo "FAIL: $binary needs CUDA libraries at load time:" $bad
    status=1
  else
    echo "ok: $binary needs no CUDA library ($(grep -c . <<<"$needed") NEEDED entries)"
  fi
done
exit $status
