// sell_diag's device build (engine/formats/sell_diag.cpp, convert_device). Choosing a slice's
// diagonals needs all its entries, so that pass runs one thread per slice (a warp per slice on a
// device whose lanes cooperate): it chooses them as the host does (the contract's
// sell_diag_table; a slice with more distinct offsets than the table sorts them) once, and leaves
// them in scratch at the slice's first entry. Everything else runs one thread per row, so
// neighbouring threads read neighbouring rows and write neighbouring slots of the column-major
// slice: the remainder widths (an atomic max per slice; the warp kernel finds them itself), then
// after the scans the diagonals and the remainder. Grid-stride with no cooperation inside a block
// but in the warp kernel: any grid works, and the emulation prelude runs the threads one after
// another. The count also marks a slice full when all its rows hold its diagonals in order and
// nothing else (a stencil's or a band's interior): the later passes skip it and a group of
// threads per full slice places its contiguous entries slot by slot instead
// (spmvjit_build_diagonals_full). The value arrays receive CODE8 codes instead of values where the
// plan passes a table (contract/sell_diag.h).
#include "../contract/device_plan.h"
#include "../contract/sell_diag.h"
#include "heap_sort.cuh"
#include "prelude.h"
#include "value_gather.cuh"

namespace sd {

// A slice's kept offsets as the passes read them: through the read-only cache (spmvjit_ldg) when
// an earlier kernel wrote them, or a plain `const I*` when the reading kernel wrote them itself
// (spmvjit_build_count_warp's widths: the read-only path may not see a write of the same kernel).
struct Ldg {
  const I* p;
  __device__ __forceinline__ I operator[](i64 k) const { return spmvjit_ldg(p + k); }
};

// The first place in the ascending v[lo, n) not below x. Rows in column order search from their
// last entry's place and mostly find x there or just after it (consecutive diagonals).
template <class K>
SPMVJIT_DEVICE i64 lower_bound(K v, i64 lo, i64 n, i64 x) {
  for (const i64 probe = lo + 2 < n ? lo + 2 : n; lo < probe; ++lo)
    if (i64(v[lo]) >= x) return lo;
  i64 hi = n;
  while (lo < hi) {
    const i64 mid = (lo + hi) >> 1;
    if (i64(v[mid]) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

constexpr int kBatch = 8;  // loads a thread issues before it uses any (one at a time waits on each)
// The warp count's: 64 registers a lane keep 32 one-warp blocks on a multiprocessor.
constexpr int kCountBatch = 4;

struct Ascending {
  __device__ __forceinline__ bool operator()(I x, I y) const { return x < y; }
};

// One slice of the input: rows [r0, r1) of row_ptr / col_idx with index base `base`.
struct Slice {
  const I* rp;
  const I* ci;
  i64 base, r0, r1;

  __device__ __forceinline__ i64 begin(i64 r) const { return i64(spmvjit_ldg(rp + r)) - base; }
  // Calls f(offset) for each entry until f returns false: the walk sell_diag_table takes (a
  // functor, as NVRTC gives generic lambdas no execution space).
  template <class F>
  __device__ __forceinline__ void operator()(F&& f) const {
    for (i64 r = r0; r < r1; ++r)
      for (i64 k = begin(r), e = begin(r + 1); k < e; ++k)
        if (!f(i64(spmvjit_ldg(ci + k)) - base - r)) return;
  }
  // Whether entry k is the first of row [b, e) with its column: a repeated column goes to the
  // remainder, as on the host. Rows in column order answer from the neighbour; others look back.
  __device__ __forceinline__ bool first(i64 b, i64 k, bool in_order) const {
    const I col = spmvjit_ldg(ci + k);
    if (in_order) return k == b || spmvjit_ldg(ci + k - 1) != col;
    for (i64 q = b; q < k; ++q)
      if (spmvjit_ldg(ci + q) == col) return false;
    return true;
  }
  __device__ __forceinline__ bool ordered(i64 b, i64 e) const {
    for (i64 k = b + 1; k < e; ++k)
      if (spmvjit_ldg(ci + k) < spmvjit_ldg(ci + k - 1)) return false;
    return true;
  }
  // The kept offsets of a slice whose table overflowed: its offsets sorted in sc (its own entry
  // range of scratch), runs of at least min_count compacted to the front. Returns how many.
  __device__ i64 sorted_kept(I* sc, i64 min_count) const {
    i64 n = 0;
    (*this)([&](i64 d) {
      sc[n++] = I(d);
      return true;
    });
    build_heap_sort(sc, n, Ascending{});
    i64 kept = 0;
    for (i64 i = 0; i < n;) {
      i64 j = i;
      while (j < n && sc[j] == sc[i]) ++j;
      if (j - i >= min_count) sc[kept++] = sc[i];
      i = j;
    }
    return kept;
  }
};

// Writes a value slot: the value's bits (as wide as V), or its CODE8 code where the build writes
// codes (SpmvArgs::values_table), counting the values the table lacks into SpmvArgs::scratch.
struct Put {
  const vg::Code* table;
  int n;
  long long bad;

  SPMVJIT_METHOD explicit Put(const SpmvArgs& a)
      : table((const vg::Code*)a.values_table), n(int(a.n[SELL_DIAG_BUILD_N_TABLE])), bad(0) {}
  SPMVJIT_METHOD void operator()(void* out, i64 slot, vg::Code v) {
    if (!table)
      ((vg::Code*)out)[slot] = v;
    else
      vg::put_code(out, slot, v, table, n, bad);
  }
  SPMVJIT_METHOD void finish(const SpmvArgs& a) const {
    if (bad) spmvjit_atomic_add_u64((unsigned long long*)a.scratch, (unsigned long long)bad);
  }
};

// Whether slice s is full (SpmvArgs::y, see contract/sell_diag.h): the per-row passes skip it.
SPMVJIT_DEVICE bool full_slice(const SpmvArgs& a, i64 s) {
  return a.y && spmvjit_ldg((const unsigned char*)a.y + s) != 0;
}

SPMVJIT_DEVICE Slice slice_of(const SpmvArgs& a, i64 s, i64 c) {
  const i64 r0 = s * c;
  return Slice{(const I*)a.a[SELL_DIAG_BUILD_ROW_PTR], (const I*)a.a[SELL_DIAG_BUILD_COL_IDX_IN],
               a.n[DP_N_BASE], r0, r0 + c < a.rows ? r0 + c : a.rows};
}

// Whether row r's offsets are exactly kept[0, nk) in order (a stencil's or a band's interior row):
// then its entry k lies on diagonal k, with no search. kBatch entries' loads at a time.
template <class K>
SPMVJIT_DEVICE bool matches_kept(const Slice& sl, i64 r, K kept, i64 nk) {
  const i64 b = sl.begin(r);
  if (sl.begin(r + 1) - b != nk) return false;
  for (i64 k0 = 0; k0 < nk; k0 += kBatch) {
    I col[kBatch], off[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const i64 k = k0 + u < nk ? k0 + u : nk - 1;  // the row's last entry again past its end
      col[u] = spmvjit_ldg(sl.ci + b + k);
      off[u] = kept[k];
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (i64(col[u]) - sl.base - r != i64(off[u])) return false;
  }
  return true;
}

// Calls f(k, j) for each entry k of row r in the row's order, with j its kept diagonal (index into
// kept[0, nk)), or -1 when it goes to the remainder (off the kept diagonals, or a repeated column).
template <class K, class F>
SPMVJIT_DEVICE void place_row(const Slice& sl, i64 r, K kept, i64 nk, F&& f) {
  const i64 b = sl.begin(r), e = sl.begin(r + 1);
  const bool ord = sl.ordered(b, e);
  i64 at = 0;  // in a row in column order the offsets ascend: each search starts at the last place
  for (i64 k = b; k < e; ++k) {
    const i64 d = i64(spmvjit_ldg(sl.ci + k)) - sl.base - r;
    const i64 j = lower_bound(kept, ord ? at : 0, nk, d);
    if (ord) at = j;
    f(k, j < nk && i64(kept[j]) == d && sl.first(b, k, ord) ? j : -1);
  }
}

}  // namespace sd

// Pass 1, one thread per slice: its kept offsets (ascending) into scratch at its first entry
// (they are at most its entries), their number into diag_ptr[s], and rem_ptr[s] = 0 for pass 2.
// The table is of index type: half the local memory of the host's for 32-bit indices (it holds
// offsets col - row and counts of one slice's entries, which fit).
namespace sd {

// Pass 1 for slice s by one thread.
SPMVJIT_DEVICE void count_slice(const SpmvArgs& a, i64 s) {
  const sd::Slice sl = sd::slice_of(a, s, a.n[SELL_DIAG_BUILD_N_C]);
  const i64 min_count = a.n[SELL_DIAG_BUILD_N_MIN_COUNT];
  I* kept = (I*)a.a[SELL_DIAG_BUILD_SCRATCH] + sl.begin(sl.r0);
  I off[SELL_DIAG_TABLE], count[SELL_DIAG_TABLE];
  i64 nk = sell_diag_table(sl, min_count, off, count);
  if (nk >= 0)
    for (i64 j = 0; j < nk; ++j) kept[j] = off[j];
  else
    nk = sl.sorted_kept(kept, min_count);
  ((i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR])[s] = nk;
  ((i64*)a.a[SELL_DIAG_BUILD_REM_PTR])[s] = 0;
  if (a.y) {  // full: every row of the slice (none past the matrix) on the kept diagonals, in order
    bool full = nk > 0 && sl.r1 - sl.r0 == a.n[SELL_DIAG_BUILD_N_C];
    for (i64 r = sl.r0; full && r < sl.r1; ++r) full = matches_kept(sl, r, kept, nk);
    ((unsigned char*)a.y)[s] = full ? 1 : 0;
  }
}

}  // namespace sd

extern "C" __global__ void spmvjit_build_count(const SpmvArgs a) {
  const i64 slices = a.n[SELL_DIAG_BUILD_N_SLICES];
  for (i64 s = i64(blockIdx.x) * blockDim.x + threadIdx.x; s < slices; s += i64(gridDim.x) * blockDim.x)
    sd::count_slice(a, s);
}

#ifndef SPMVJIT_EMULATED  // a warp's lanes cooperate: the CPU emulation runs threads one by one
namespace sd {

typedef unsigned long long u64;
constexpr int kHash = 256;            // slots of a warp's offset table in shared memory
constexpr int kHashFill = kHash / 2;  // more distinct offsets than this: one lane counts the slice
constexpr int kMaxC = 64;             // rows of a slice the warp kernel takes (sell_diag's C: 8, 32, 64)
constexpr u64 kFree = ~0ull;          // no offset maps to it (see key_of)
constexpr u64 kSign = 1ull << 63;

// An offset as a table key: the sign bit flipped, so -1 is not kFree (offsets are far from 2^63).
SPMVJIT_DEVICE u64 key_of(i64 d) { return u64(d) ^ kSign; }
SPMVJIT_DEVICE i64 offset_of(u64 k) { return i64(k ^ kSign); }

// Pass 1 for a slice by its warp, sl's entries [b0, end): every entry's offset counted in a shared
// hash table, the offsets of at least min_count entries ranked and written ascending to kept. The
// table's choice, as the host makes it (sell_diag_table counts every entry, repeated columns
// included), with each entry read once by one lane. Returns how many were kept, or -1 (nothing
// written) when the slice has more than kHashFill distinct offsets.
SPMVJIT_DEVICE i64 count_hashed(const Slice& sl, i64 b0, i64 min_count, I* kept, u64* keys, unsigned* counts,
                                i64* begins, i64* cand, unsigned* distinct) {
  const int lane = spmvjit_lane();
  const i64 n = sl.r1 - sl.r0;
  for (int h = lane; h < kHash; h += SPMVJIT_WARP) keys[h] = kFree, counts[h] = 0;
  for (i64 i = lane; i <= n; i += SPMVJIT_WARP) begins[i] = sl.begin(sl.r0 + i);
  if (lane == 0) *distinct = 0;
  spmvjit_sync_block();  // the block is this warp
  const i64 end = begins[n];
  bool over = false;
  // kCountBatch entries a lane: their rows and columns first (the loads in flight together), then
  // their offsets into the table.
  for (i64 e0 = b0 + lane; !over && e0 < end; e0 += kCountBatch * SPMVJIT_WARP) {
    u64 key[kCountBatch];
#pragma unroll
    for (int u = 0; u < kCountBatch; ++u) {
      const i64 e = e0 + i64(u) * SPMVJIT_WARP;
      i64 lo = 0, hi = n;  // the entry's row: the last i with begins[i] <= e
      while (hi - lo > 1) {
        const i64 mid = (lo + hi) >> 1;
        if (begins[mid] <= e)
          lo = mid;
        else
          hi = mid;
      }
      key[u] = e < end ? key_of(i64(spmvjit_ldg(sl.ci + e)) - sl.base - (sl.r0 + lo)) : kFree;
    }
#pragma unroll
    for (int u = 0; u < kCountBatch; ++u) {
      if (key[u] == kFree || over) continue;
      unsigned h = unsigned((key[u] * 0x9E3779B97F4A7C15ull) >> 56) & (kHash - 1);
      for (int probe = 0;; ++probe, h = (h + 1) & (kHash - 1)) {
        if (probe == kHash) {
          over = true;
          break;
        }
        const u64 old = spmvjit_atomic_cas_shared_u64(keys + h, kFree, key[u]);
        if (old == kFree && spmvjit_atomic_inc_shared_u32(distinct) >= unsigned(kHashFill)) over = true;
        if (old == kFree || old == key[u]) {
          spmvjit_atomic_inc_shared_u32(counts + h);
          break;
        }
      }
    }
  }
  if (spmvjit_sync_block_or(over)) return -1;
  i64 nk = 0;  // candidates compacted in table order, then ranked
  for (int h0 = 0; h0 < kHash; h0 += SPMVJIT_WARP) {
    const int h = h0 + lane;
    const bool keep = keys[h] != kFree && i64(counts[h]) >= min_count;
    const spmvjit_lanes_t m = spmvjit_ballot(keep);
    if (keep) cand[nk + spmvjit_lane_count(m & ((spmvjit_lanes_t(1) << lane) - 1))] = offset_of(keys[h]);
    nk += spmvjit_lane_count(m);
  }
  spmvjit_sync_block();
  for (i64 j = lane; j < nk; j += SPMVJIT_WARP) {
    const i64 v = cand[j];
    i64 rank = 0;
    for (i64 q = 0; q < nk; ++q) rank += cand[q] < v;
    kept[rank] = I(v);
  }
  return nk;
}

}  // namespace sd

// Pass 1 with a warp per slice (blocks of SPMVJIT_WARP threads). A slice whose rows all hold its
// first row's offsets, in the same order, with that row's columns ascending strictly (a stencil's
// or a band's interior), keeps those offsets when it has min_count rows (each offset counts one
// entry per row), none otherwise: the table's choice, from one coalesced pass over the slice's
// entries, kCountBatch loads a lane in flight. Other slices (a stencil's boundary) count their offsets
// in a shared hash table, the warp's lanes an entry each (sd::count_hashed); a slice with too many
// distinct offsets for it is counted by the first lane, as one thread does. Then pass 2 for the
// slice, its lanes a row each (the slice's entries are in the cache now): the widest row's
// remainder into rem_ptr[s], so spmvjit_build_width does not run after this kernel.
extern "C" __global__ void __launch_bounds__(SPMVJIT_WARP) spmvjit_build_count_warp(const SpmvArgs a) {
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], slices = a.n[SELL_DIAG_BUILD_N_SLICES];
  const i64 min_count = a.n[SELL_DIAG_BUILD_N_MIN_COUNT];
  const int lane = spmvjit_lane();
  SPMVJIT_SHARED sd::u64 keys[sd::kHash];
  SPMVJIT_SHARED unsigned counts[sd::kHash], distinct;
  SPMVJIT_SHARED i64 begins[sd::kMaxC + 1], cand[sd::kHashFill], kept_count;
  for (i64 s = blockIdx.x; s < slices; s += gridDim.x) {
    const sd::Slice sl = sd::slice_of(a, s, c);
    const i64 n = sl.r1 - sl.r0, b0 = sl.begin(sl.r0), len0 = sl.begin(sl.r0 + 1) - b0;
    const i64 total = sl.begin(sl.r1) - b0;
    bool uniform = total == n * len0;
    for (i64 i0 = 0; uniform && i0 < n; i0 += SPMVJIT_WARP) {  // every row of len0 entries
      const i64 i = i0 + lane;
      if (spmvjit_ballot(i < n && sl.begin(sl.r0 + i) != b0 + i * len0)) uniform = false;
    }
    // A 32-bit division where the slice allows: a 64-bit one is a long instruction sequence.
    const bool narrow = total < 0x7fffffffLL;
    for (i64 e0 = 0; uniform && e0 < total;
         e0 += sd::kCountBatch * SPMVJIT_WARP) {  // the same trips every lane
      I col[sd::kCountBatch], col0[sd::kCountBatch], prev[sd::kCountBatch];
      int row[sd::kCountBatch];  // the entry's row in the slice, -1 past the slice's entries, -2 a first-row
                                 // entry after its first (above the one before it)
#pragma unroll
      for (int u = 0; u < sd::kCountBatch; ++u) {
        const i64 e = e0 + i64(u) * SPMVJIT_WARP + lane, ec = e < total ? e : total - 1;
        const i64 i = !len0 ? 0 : narrow ? i64(unsigned(ec) / unsigned(len0)) : ec / len0, k = ec - i * len0;
        row[u] = e >= total ? -1 : i == 0 && k > 0 ? -2 : int(i);
        col[u] = spmvjit_ldg(sl.ci + b0 + ec);
        col0[u] = spmvjit_ldg(sl.ci + b0 + k);  // the first row's, cached
        prev[u] = row[u] == -2 ? spmvjit_ldg(sl.ci + b0 + k - 1) : I(0);
      }
      bool bad = false;
#pragma unroll
      for (int u = 0; u < sd::kCountBatch; ++u)
        bad |= row[u] == -2 ? col0[u] <= prev[u] : row[u] >= 0 && i64(col[u]) - row[u] != i64(col0[u]);
      if (spmvjit_ballot(bad)) uniform = false;
    }
    I* kept = (I*)a.a[SELL_DIAG_BUILD_SCRATCH] + b0;
    i64 nk = -1;
    if (uniform) {
      nk = n >= min_count ? len0 : 0;
      for (i64 k = lane; k < nk; k += SPMVJIT_WARP)
        kept[k] = I(i64(spmvjit_ldg(sl.ci + b0 + k)) - sl.base - sl.r0);
    } else if (c <= sd::kMaxC) {
      nk = sd::count_hashed(sl, b0, min_count, kept, keys, counts, begins, cand, &distinct);
    }
    if (lane == 0) {
      if (nk >= 0) {
        // Full (as count_slice finds it): alike rows holding their kept offsets, none past the matrix.
        if (a.y) ((unsigned char*)a.y)[s] = uniform && n == c && nk == len0 && nk > 0 ? 1 : 0;
        ((i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR])[s] = nk;
      } else {
        sd::count_slice(a, s);
        nk = ((const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR])[s];
      }
      kept_count = nk;
    }
    spmvjit_sync_block();  // kept (global, this block's writes) and kept_count seen by every lane
    nk = kept_count;
    // Pass 2: a uniform slice's rows all hold its kept offsets (no remainder) or, short of min_count
    // rows, none (all len0 entries). Plain loads of kept: this kernel wrote it.
    i64 rem = uniform ? (nk == len0 ? 0 : len0) : 0;
    for (i64 i = lane; !uniform && i < n; i += SPMVJIT_WARP) {
      const i64 r = sl.r0 + i;
      if (sd::matches_kept(sl, r, (const I*)kept, nk)) continue;
      i64 row_rem = 0;
      sd::place_row(sl, r, (const I*)kept, nk, [&](i64, i64 j) { row_rem += j < 0 ? 1 : 0; });
      rem = row_rem > rem ? row_rem : rem;
    }
    for (int d = SPMVJIT_WARP / 2; d > 0; d >>= 1) {
      const i64 other = spmvjit_shfl_xor(rem, d);
      rem = other > rem ? other : rem;
    }
    if (lane == 0) ((i64*)a.a[SELL_DIAG_BUILD_REM_PTR])[s] = rem * c;
    spmvjit_sync_block();  // the shared table and kept_count are the next slice's
  }
}
#endif

// Pass 2, one thread per row: C * the row's remainder entries, maxed into its slice's rem_ptr[s]
// (the slice's remainder slots). Rows with none, all of them on a banded matrix, skip the atomic.
extern "C" __global__ void spmvjit_build_width(const SpmvArgs a) {
  const i64* dcount = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  i64* rcount = (i64*)a.a[SELL_DIAG_BUILD_REM_PTR];
  const I* scratch = (const I*)a.a[SELL_DIAG_BUILD_SCRATCH];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C];
  for (i64 r = i64(blockIdx.x) * blockDim.x + threadIdx.x; r < a.rows; r += i64(gridDim.x) * blockDim.x) {
    const i64 s = r / c;
    if (sd::full_slice(a, s)) continue;  // no remainder
    const sd::Slice sl = sd::slice_of(a, s, c);
    const I* kept = scratch + sl.begin(sl.r0);
    const i64 nk = spmvjit_ldg(dcount + s);
    const sd::Ldg kept_ldg{kept};
    if (sd::matches_kept(sl, r, kept_ldg, nk)) continue;  // no remainder
    i64 rem = 0;
    sd::place_row(sl, r, kept_ldg, nk, [&](i64, i64 j) { rem += j < 0 ? 1 : 0; });
    if (rem) spmvjit_atomic_max_u64((unsigned long long*)(rcount + s), (unsigned long long)(rem * c));
  }
}

// Pass 3, one thread per row position of every slice but the full ones (the last slice's rows
// past the matrix included): the slice's kept offsets (from scratch, every C-th by each row) and
// the row's slots of its diagonals at the scanned diag_ptr, zero where the row has no entry.
extern "C" __global__ void spmvjit_build_diagonals(const SpmvArgs a) {
  const vg::Code* SPMVJIT_RESTRICT va = (const vg::Code*)a.a[SELL_DIAG_BUILD_VALUES_IN];
  const i64* dptr = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  const I* scratch = (const I*)a.a[SELL_DIAG_BUILD_SCRATCH];
  I* doff = (I*)a.a[SELL_DIAG_BUILD_DIAG_OFFSET];
  void* dval = (void*)a.a[SELL_DIAG_BUILD_DIAG_VALUES];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], positions = a.n[SELL_DIAG_BUILD_N_SLICES] * c;
  sd::Put put(a);
  for (i64 p = i64(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += i64(gridDim.x) * blockDim.x) {
    const i64 s = p / c, i = p - s * c;
    if (sd::full_slice(a, s)) continue;  // spmvjit_build_diagonals_full's
    const sd::Slice sl = sd::slice_of(a, s, c);
    const I* kept = scratch + sl.begin(sl.r0);
    const i64 dp = spmvjit_ldg(dptr + s), nd = spmvjit_ldg(dptr + s + 1) - dp;
    for (i64 j = i; j < nd; j += c) doff[dp + j] = spmvjit_ldg(kept + j);
    const i64 row = dp * c + i;                             // the row's slot on the slice's first diagonal
    if (p < a.rows &&
        sd::matches_kept(sl, p, sd::Ldg{kept}, nd)) {  // entry k on diagonal k, every slot filled
      const i64 b = sl.begin(p);
      for (i64 j0 = 0; j0 < nd; j0 += sd::kBatch) {
        vg::Code v[sd::kBatch];
#pragma unroll
        for (int u = 0; u < sd::kBatch; ++u) v[u] = spmvjit_ldg(va + b + (j0 + u < nd ? j0 + u : nd - 1));
#pragma unroll
        for (int u = 0; u < sd::kBatch; ++u)
          if (j0 + u < nd) put(dval, row + (j0 + u) * c, v[u]);
      }
      continue;
    }
    for (i64 j = 0; j < nd; ++j) put(dval, row + j * c, vg::Code(0));
    if (p < a.rows)
      sd::place_row(sl, p, sd::Ldg{kept}, nd, [&](i64 k, i64 j) {
        if (j >= 0) put(dval, row + j * c, spmvjit_ldg(va + k));
      });
  }
  put.finish(a);
}

// Pass 3 for the full slices, a group of SELL_DIAG_FULL_GROUP threads per slice (grid-stride):
// its threads take the slice's C * nd slots in their column-major order, kBatch at a time (their
// loads first): slot o (diagonal j = o / C, row i = o % C) holds entry i * nd + j of the slice's
// contiguous entries. Neighbouring threads write neighbouring slots, and the group's reads of the
// slice's few kilobytes hit the cache after the first. A block per slice left most of a 5-point
// stencil's 128 threads idle with one load each. No cooperation: any block size works, emulated
// too.
extern "C" __global__ void spmvjit_build_diagonals_full(const SpmvArgs a) {
  const vg::Code* SPMVJIT_RESTRICT va = (const vg::Code*)a.a[SELL_DIAG_BUILD_VALUES_IN];
  const I* rp = (const I*)a.a[SELL_DIAG_BUILD_ROW_PTR];
  const i64* dptr = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  const I* scratch = (const I*)a.a[SELL_DIAG_BUILD_SCRATCH];
  I* doff = (I*)a.a[SELL_DIAG_BUILD_DIAG_OFFSET];
  void* dval = (void*)a.a[SELL_DIAG_BUILD_DIAG_VALUES];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], slices = a.n[SELL_DIAG_BUILD_N_SLICES], base = a.n[DP_N_BASE];
  // Groups of g threads (fewer in a smaller block); threads past the block's last whole group idle.
  const unsigned g = blockDim.x < SELL_DIAG_FULL_GROUP ? blockDim.x : SELL_DIAG_FULL_GROUP;
  const unsigned per_block = blockDim.x / g, t = threadIdx.x % g, mine = threadIdx.x / g;
  if (mine >= per_block) return;
  const i64 groups = i64(gridDim.x) * per_block;
  sd::Put put(a);
  for (i64 s = i64(blockIdx.x) * per_block + mine; s < slices; s += groups) {
    if (!sd::full_slice(a, s)) continue;
    const i64 b0 = i64(spmvjit_ldg(rp + s * c)) - base, dp = spmvjit_ldg(dptr + s);
    const i64 nd = spmvjit_ldg(dptr + s + 1) - dp, n = c * nd;
    const I* kept = scratch + b0;
    for (i64 j = t; j < nd; j += g) doff[dp + j] = spmvjit_ldg(kept + j);
    // 32-bit divisions where the slice allows: a 64-bit one is a long instruction sequence.
    const bool narrow = n < 0x7fffffffLL;
    for (i64 o0 = t; o0 < n; o0 += i64(sd::kBatch) * g) {
      vg::Code v[sd::kBatch];
#pragma unroll
      for (int u = 0; u < sd::kBatch; ++u) {
        const i64 o = o0 + i64(u) * g, oc = o < n ? o : n - 1;
        const i64 j = narrow ? i64(unsigned(oc) / unsigned(c)) : oc / c, i = oc - j * c;
        v[u] = spmvjit_ldg(va + b0 + i * nd + j);
      }
#pragma unroll
      for (int u = 0; u < sd::kBatch; ++u) {
        const i64 o = o0 + i64(u) * g;
        if (o < n) put(dval, dp * c + o, v[u]);
      }
    }
  }
  put.finish(a);
}

// Pass 4, one thread per row position: the row's remainder (entries off the kept diagonals, pass
// 3's diag_offset) in its order, then its padding to the slice's width: its last remainder column
// (or its own row) and zeros. A slice of width 0 (none of its rows has a remainder) is skipped.
extern "C" __global__ void spmvjit_build_remainder(const SpmvArgs a) {
  const vg::Code* SPMVJIT_RESTRICT vbits = (const vg::Code*)a.a[SELL_DIAG_BUILD_VALUES_IN];
  const i64* dptr = (const i64*)a.a[SELL_DIAG_BUILD_DIAG_PTR];
  const i64* rptr = (const i64*)a.a[SELL_DIAG_BUILD_REM_PTR];
  const I* doff = (const I*)a.a[SELL_DIAG_BUILD_DIAG_OFFSET];
  I* rcol = (I*)a.a[SELL_DIAG_BUILD_REM_COL];
  void* rval = (void*)a.a[SELL_DIAG_BUILD_REM_VALUES];
  const i64 c = a.n[SELL_DIAG_BUILD_N_C], positions = a.n[SELL_DIAG_BUILD_N_SLICES] * c;
  const i64 last_col = a.cols > 0 ? a.cols - 1 : 0;
  sd::Put put(a);
  for (i64 p = i64(blockIdx.x) * blockDim.x + threadIdx.x; p < positions; p += i64(gridDim.x) * blockDim.x) {
    const i64 s = p / c, i = p - s * c;
    const i64 q0 = spmvjit_ldg(rptr + s), width = (spmvjit_ldg(rptr + s + 1) - q0) / c;
    if (!width) continue;
    const sd::Slice sl = sd::slice_of(a, s, c);
    const i64 dp = spmvjit_ldg(dptr + s);
    I* col = rcol + q0 + i;
    const i64 val = q0 + i;  // the row's first remainder slot
    I pad = I(p < last_col ? p : last_col);
    i64 q = 0;  // the row's remainder slots filled
    if (p < a.rows)
      sd::place_row(sl, p, sd::Ldg{doff + dp}, spmvjit_ldg(dptr + s + 1) - dp, [&](i64 k, i64 j) {
        if (j >= 0) return;
        pad = I(spmvjit_ldg(sl.ci + k) - I(sl.base));
        col[q * c] = pad;
        put(rval, val + q++ * c, spmvjit_ldg(vbits + k));
      });
    for (; q < width; ++q) {
      col[q * c] = pad;
      put(rval, val + q * c, vg::Code(0));
    }
  }
  put.finish(a);
}
