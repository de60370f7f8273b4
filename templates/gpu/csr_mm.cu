// GPU CSR for k vectors (spmm_execute); each row's entries are read once for all k vectors.
// spmvjit_part: SPMVJIT_LANES lanes per row (SPMVJIT_WIDE). Row-major X and Y: groups of VL lanes
// (CSR_MM_VECTOR_LANES), lane j of a group computing W = CSR_MM_LANE_VALUES vectors from jW (the
// row's column index and value are one address for them all, the x loads one coalesced run per
// column, each lane's W values one 16-byte load when X's base and leading dimension are aligned to
// it, else W loads); the groups split the row's nonzeros and a shuffle tree adds them. Column-major: the
// lanes split the nonzeros, each with the k sums in registers, then k shuffle trees. SPMVJIT_VECTORS is k up
// to 8, else a bound (16, 32: k from args.vectors, the rest masked); 0: any k, 32 vectors (row-major) or
// CSR_MM_BLOCK_VECTORS (column-major) per pass.
// Rows longer than n[CSR_MM_N_LONG] get only beta here: spmvjit_long gives each of their chunks a
// warp (all lanes on one chunk, as above) that adds alpha times its sums into Y with atomics.
// Column-major X staged (n[CSR_MM_N_STAGED]): spmvjit_stage_x copies it row-major into the
// scratch first, and the row-major code reads it from there.
// Launch: [ceil(cols * k / CSR_MM_GPU_BLOCK) blocks,] ceil(rows / (CSR_MM_GPU_BLOCK / LANES))
// blocks, then ceil(chunks / warps per block) blocks, of CSR_MM_GPU_BLOCK threads.
#include "../contract/csr_mm.h"
#include "prelude.h"

#ifndef SPMVJIT_VECTORS
#define SPMVJIT_VECTORS 4
#endif
#ifndef SPMVJIT_LAYOUT
#define SPMVJIT_LAYOUT 1
#endif
#if SPMVJIT_LAYOUT
#define SPMVJIT_CSR_MM_VL CSR_MM_VECTOR_LANES(SPMVJIT_VECTORS, sizeof(V))
#define SPMVJIT_CSR_MM_W CSR_MM_LANE_VALUES(SPMVJIT_VECTORS, sizeof(V))
#else
#define SPMVJIT_CSR_MM_VL 1
#define SPMVJIT_CSR_MM_W 1
#endif
#ifndef SPMVJIT_WIDE
#define SPMVJIT_WIDE 0
#endif
// Lanes per row (engine/formats/csr_mm.cpp's row_lanes): WIDE 0 one vector group (row-major) or
// one thread (column-major); WIDE 1 32 or 8.
#if SPMVJIT_WIDE
#define SPMVJIT_LANES (SPMVJIT_LAYOUT ? 32 : 8)
#else
#define SPMVJIT_LANES SPMVJIT_CSR_MM_VL
#endif

namespace csr_mm {

constexpr int kVL = SPMVJIT_CSR_MM_VL;
constexpr int kW = SPMVJIT_CSR_MM_W;  // row-major: vectors per lane
// A lane's kW values of a row of X, loaded as one vector.
struct alignas(kW * sizeof(V)) Pack {
  V v[kW];
};
// VECTORS is k itself (or a bound on it: args.vectors has k; SPMVJIT_BAKED_VECTORS).
constexpr bool kExact = SPMVJIT_VECTORS > 0 && SPMVJIT_VECTORS <= SPMVJIT_EXACT_VECTORS;
// Column-major vectors per pass.
// Column-major with a bound of 16 or 32 vectors: each GPU block takes one slice of
// CSR_MM_BLOCK_VECTORS vectors (kSlices slices, the grid's blocks repeated per slice), so a thread
// keeps 8 sums instead of 32 and the slices run side by side; the matrix is read once per slice.
constexpr bool kSliced = !SPMVJIT_LAYOUT && SPMVJIT_VECTORS > SPMVJIT_EXACT_VECTORS;
constexpr int kSlices = kSliced ? SPMVJIT_VECTORS / CSR_MM_BLOCK_VECTORS : 1;
constexpr int kKB = kSliced || SPMVJIT_VECTORS == 0 ? CSR_MM_BLOCK_VECTORS : SPMVJIT_VECTORS;

// This GPU block's place in its step's grid of `blocks` (n[] slot) and its slice of vectors.
SPMVJIT_DEVICE i64 grid_block(const SpmvArgs& a, int blocks_slot, i64* slice) {
  if (!kSliced) {
    *slice = 0;
    return blockIdx.x;
  }
  const i64 blocks = a.n[blocks_slot];
  *slice = i64(blockIdx.x) / blocks;
  return i64(blockIdx.x) % blocks;
}

// Nonzeros [b, e) of row r times k vectors on L lanes (t: the lane's place among them), then
// `out(at, sum)` for each of the row's k results the lane holds after the shuffle trees (Y's
// element at `at`). Every lane of the warp calls it, `live` or not, so the shuffles see them all.
template <int L, class Out>
SPMVJIT_DEVICE void row_sums(const SpmvArgs& a, i64 r, i64 b, i64 e, int t, bool live, i64 slice, Out out) {
  static_assert(L >= kVL && L <= SPMVJIT_WARP && (L & (L - 1)) == 0, "L: power of two, VL to warp");
  const I* SPMVJIT_RESTRICT ci = (const I*)a.a[CSR_MM_COL_IDX];
  SPMVJIT_DECLARE_VALUES(va, a, CSR_MM_VALUES);
  const i64 ldy = a.ldy;
  const i64 k = kExact ? i64(SPMVJIT_VECTORS) : a.vectors;
#if SPMVJIT_LAYOUT
  (void)slice;
  // X row-major: the caller's, or column-major X staged row-major in the scratch (leading
  // dimension k); Y in the caller's layout.
  const bool staged = a.n[CSR_MM_N_STAGED] != 0;
  const V* SPMVJIT_RESTRICT x = staged ? (const V*)a.scratch : (const V*)a.x;
  const i64 ldx = staged ? k : a.ldx;
  const bool y_row_major = a.layout != 0;
  constexpr int G = L / kVL;
  const int g = t / kVL, j = t % kVL;
  // One load per lane and column index where every lane's run of kW values is aligned to its
  // size (the same for the whole grid, so no lane diverges on it).
  const bool packed =
      kW > 1 && ldx % kW == 0 && (unsigned long long)(const void*)x % (unsigned long long)sizeof(Pack) == 0;
  for (i64 j0 = 0; j0 < k; j0 += kVL * kW) {
    const i64 jv = j0 + i64(j) * kW;  // the lane's first vector
    const bool mine = live && jv < k;
    V s[kW];
#pragma unroll
    for (int w = 0; w < kW; ++w) s[w] = 0;
    if (mine) {
      const V* SPMVJIT_RESTRICT xj = x + jv;
      if (packed && jv + kW <= k) {
#pragma unroll 4
        for (i64 i = b + g; i < e; i += G) {
          const V v = spmvjit_ldg(va + i);
          const Pack p = *reinterpret_cast<const Pack*>(xj + i64(spmvjit_ldg(ci + i)) * ldx);
#pragma unroll
          for (int w = 0; w < kW; ++w) s[w] += v * p.v[w];
        }
      } else {  // kW loads (X unaligned, or the lane reaches past k)
#pragma unroll 4
        for (i64 i = b + g; i < e; i += G) {
          const V v = spmvjit_ldg(va + i);
          const V* SPMVJIT_RESTRICT xc = xj + i64(spmvjit_ldg(ci + i)) * ldx;
#pragma unroll
          for (int w = 0; w < kW; ++w)
            if (kW == 1 || jv + w < k) s[w] += v * spmvjit_ldg(xc + w);
        }
      }
    }
#pragma unroll
    for (int w = 0; w < kW; ++w)
      for (int d = L / 2; d >= kVL; d >>= 1) s[w] += spmvjit_shfl_down(s[w], d);
    if (g == 0 && mine) {
#pragma unroll
      for (int w = 0; w < kW; ++w)
        if (kW == 1 || jv + w < k) out(y_row_major ? r * ldy + jv + w : (jv + w) * ldy + r, s[w]);
    }
  }
#else
  const V* SPMVJIT_RESTRICT x = (const V*)a.x;
  const i64 ldx = a.ldx;
  if (kSliced && slice * kKB >= k) return;  // past k (VECTORS is a bound): the whole block leaves
  const i64 j_end = kSliced ? (slice + 1) * kKB : k;
  for (i64 j0 = slice * kKB; j0 < j_end; j0 += kKB) {
    V s[kKB];
#pragma unroll
    for (int jj = 0; jj < kKB; ++jj) s[jj] = 0;
    if (live)
      for (i64 i = b + t; i < e; i += L) {
        const V v = spmvjit_ldg(va + i);
        const V* SPMVJIT_RESTRICT xc = x + i64(spmvjit_ldg(ci + i)) + j0 * ldx;
#pragma unroll
        for (int jj = 0; jj < kKB; ++jj)
          if (kExact || j0 + jj < k) s[jj] += v * spmvjit_ldg(xc + jj * ldx);
      }
#pragma unroll
    for (int jj = 0; jj < kKB; ++jj)
      for (int d = L / 2; d > 0; d >>= 1) s[jj] += spmvjit_shfl_down(s[jj], d);
    if (t == 0 && live) {
#pragma unroll
      for (int jj = 0; jj < kKB; ++jj)
        if (kExact || j0 + jj < k) out((j0 + jj) * ldy + r, s[jj]);
    }
  }
#endif
}

}  // namespace csr_mm

template <int E>
SPMVJIT_DEVICE void csr_mm_part(const SpmvArgs& a) {
  constexpr int L = SPMVJIT_LANES;
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_MM_ROW_PTR];
  V* SPMVJIT_RESTRICT y = (V*)a.y;
  i64 slice;
  const i64 r = csr_mm::grid_block(a, CSR_MM_N_ROW_BLOCKS, &slice) * (CSR_MM_GPU_BLOCK / L) + threadIdx.x / L;
  const bool live = r < a.rows;
  i64 b = 0, e = 0;
  if (live) b = spmvjit_ldg(rp + r), e = spmvjit_ldg(rp + r + 1);
  // A chunked row gets only beta here (spmvjit_long adds its products); one call for every row, so
  // that the lanes of a warp reach the shuffles together.
  const bool chunked = e - b > a.n[CSR_MM_N_LONG];
  if (chunked) b = e;
  const V alpha = spmvjit_alpha(a), beta = spmvjit_beta(a);
  csr_mm::row_sums<L>(a, r, b, e, int(threadIdx.x) % L, live, slice, [&](i64 at, V s) {
    y[at] = !chunked                     ? spmvjit_epilogue<E>(s, y, at, alpha, beta)
            : spmvjit_beta_zero<E>(beta) ? V(0)
                                         : beta * y[at];
  });
}

template <int E>
SPMVJIT_DEVICE void csr_mm_long(const SpmvArgs& a) {
  const I* SPMVJIT_RESTRICT rp = (const I*)a.a[CSR_MM_ROW_PTR];
  const I* SPMVJIT_RESTRICT crow = (const I*)a.a[CSR_MM_CHUNK_ROW];
  const I* SPMVJIT_RESTRICT cstart = (const I*)a.a[CSR_MM_CHUNK_START];
  V* y = (V*)a.y;
  i64 slice;
  const i64 c = csr_mm::grid_block(a, CSR_MM_N_CHUNK_BLOCKS, &slice) * (CSR_MM_GPU_BLOCK / SPMVJIT_WARP) +
                threadIdx.x / SPMVJIT_WARP;
  const bool live = c < a.n[CSR_MM_N_CHUNKS];
  i64 r = 0, b = 0, e = 0;
  if (live) {
    r = spmvjit_ldg(crow + c), b = spmvjit_ldg(cstart + c);
    const i64 re = spmvjit_ldg(rp + r + 1);
    e = b + a.n[CSR_MM_N_CHUNK] < re ? b + a.n[CSR_MM_N_CHUNK] : re;
  }
  const V alpha = spmvjit_alpha(a);
  csr_mm::row_sums<SPMVJIT_WARP>(a, r, b, e, spmvjit_lane(), live, slice, [&](i64 at, V s) {
    spmvjit_atomic_add(y + at, spmvjit_alpha_one<E>(alpha) ? s : alpha * s);
  });
}

// Staged X (contract): thread t copies X's element (i, j) = (t / k, t % k) to the scratch's t, so
// the writes are one contiguous run and a warp's reads take k columns' runs of 32 / k rows.
template <int E>
SPMVJIT_DEVICE void csr_mm_stage_x(const SpmvArgs& a) {
  const i64 k = a.vectors, t = i64(blockIdx.x) * CSR_MM_GPU_BLOCK + i64(threadIdx.x);
  if (t >= a.cols * k) return;
  const i64 i = t / k, j = t - i * k;
  ((V*)a.scratch)[t] = spmvjit_ldg((const V*)a.x + j * a.ldx + i);
}

SPMVJIT_EXPORT_KERNEL(csr_mm_part, spmvjit_part, CSR_MM_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(csr_mm_long, spmvjit_long, CSR_MM_GPU_BLOCK)
SPMVJIT_EXPORT_KERNEL(csr_mm_stage_x, spmvjit_stage_x, CSR_MM_GPU_BLOCK)
