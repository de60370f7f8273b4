// csr_mm device build (engine/formats/csr_mm.cpp, convert_device): the chunks of the rows longer
// than n[CSR_MM_BUILD_N_CHUNK] nonzeros, exactly as the host cuts them: each row's chunk count,
// scanned (DeviceConverter::exclusive_scan) into offsets, then each long row's chunks written at
// its offset. Grid-stride, no cooperation inside a block: any grid works.
#include "../contract/csr_mm.h"
#include "../contract/device_plan.h"
#include "build_rows.cuh"
#include "prelude.h"

// counts[r]: row r's chunks (0 for a row of one chunk or less).
extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_MM_BUILD_ROW_PTR];
  i64* counts = (i64*)a.a[CSR_MM_BUILD_COUNTS];
  const i64 ch = a.n[CSR_MM_BUILD_N_CHUNK];
  for (i64 r = build_first(); r < a.rows; r += build_stride()) {
    const i64 len = build_row_len(rp, r);
    counts[r] = len > ch ? (len + ch - 1) / ch : 0;
  }
}

// After the scan: row r's chunks at counts[r], each its row and zero-based first nonzero.
extern "C" __global__ void spmvjit_build_chunks(const SpmvArgs a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_MM_BUILD_ROW_PTR];
  const i64* SPMVJIT_RESTRICT offsets = (const i64*)a.a[CSR_MM_BUILD_COUNTS];
  I* crow = (I*)a.a[CSR_MM_BUILD_CHUNK_ROW];
  I* cstart = (I*)a.a[CSR_MM_BUILD_CHUNK_START];
  const i64 ch = a.n[CSR_MM_BUILD_N_CHUNK], base = a.n[DP_N_BASE];
  for (i64 r = build_first(); r < a.rows; r += build_stride()) {
    const i64 len = build_row_len(rp, r);
    if (len <= ch) continue;
    const i64 at = offsets[r], b = i64(spmvjit_ldg(rp + r)) - base;
    for (i64 c = 0; c * ch < len; ++c) crow[at + c] = I(r), cstart[at + c] = I(b + c * ch);
  }
}
