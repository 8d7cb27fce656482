// Highway kernels of the activations and gated activations, compiled once per
// SIMD target and dispatched at run time to the best one this CPU supports.
#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "src/core/kernels.h"

#ifndef HETKERN_CPU_ACTIVATION_TABLES_BUILT_
#define HETKERN_CPU_ACTIVATION_TABLES_BUILT_
namespace hetkern {
namespace cpu {
// Activation tables built so far, every target together (tests check that
// threads racing for one table build it once).
inline std::atomic<int64_t>& ActivationTablesBuilt() {
  static std::atomic<int64_t> built{0};
  return built;
}
}  // namespace cpu
}  // namespace hetkern
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/activation.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>

#include "src/cpu/activation-inl.h"
#include "src/cpu/elementwise-inl.h"

HWY_BEFORE_NAMESPACE();
namespace hetkern {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class Fn>
HWY_INLINE void VisitHalfType(DType dtype, Fn&& fn) {
  if (dtype == DType::kFloat16) fn(TypeTag<hwy::float16_t>{});
  if (dtype == DType::kBFloat16) fn(TypeTag<hwy::bfloat16_t>{});
}

// Smallest call (elements) of act (gated: the gated op) that reads a table
// on this target rather than computing, unless the knob in HWY_ONCE below
// overrides it. Tables where 16-lane gathers are fast: AMD Zen 4/5 and Intel
// Sapphire Rapids and later (none has the gather microcode of Intel's
// GDS/Downfall mitigation), from 64K elements on, where building a table
// (65536 evaluations, ~0.1 ms once) is paid back within a call or two.
// Older targets compute: their gathers are emulated (SSE4 and below) or
// microcoded on Intel Skylake to Ice Lake.
int64_t DefaultTableMinElements(DType dtype, Activation act, bool gated) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3_ZEN4
#if HWY_TARGET == HWY_AVX3_ZEN4
  // Zen 4's vpgatherdd is microcoded (~14 cycles per 16 lanes): a lookup
  // costs ~0.40 ns per element (gated: 0.45-0.57), no less than computing
  // exp, sigmoid or float16 silu_and_mul (docs/performance.md), or tanh from
  // its polynomials (TanhTable; 1 thread, 64K / 1M values: bfloat16 36.4 /
  // 578 us by lookup against 25.9 / 413, float16 39.8 / 403 against 25.0 /
  // 347). bfloat16 silu_and_mul reads its table: a row's gates touch fewer
  // entries (128 a binade, against float16's 1024), which stay in L1 (1
  // thread, 128 x 8192 outputs: 448 against 492 us computed; float16 524
  // against 476).
  if (act == Activation::kExp || act == Activation::kSigmoid || act == Activation::kTanh ||
      (gated && act == Activation::kSilu && dtype != DType::kBFloat16)) {
    return INT64_MAX;
  }
#endif
  (void)dtype, (void)act, (void)gated;
  return int64_t{1} << 16;
#else
  (void)dtype, (void)act, (void)gated;
  return INT64_MAX;
#endif
}

// The tables of this target (statics of a function in HWY_NAMESPACE exist once
// per target, and targets may round differently), one per 16-bit dtype and
// activation, built on first use. Entry: uint16_t (act(x) as a 16-bit
// pattern) for the activations, float (act(x) before the product) for the
// gated ones.
constexpr int kActivations = static_cast<int>(Activation::kExp) + 1;
template <class Entry>
struct ActivationTables {
  std::once_flag once[2][kActivations];
  std::unique_ptr<Entry[]> table[2][kActivations];
};

// Runs build() with IEEE subnormals (FTZ/DAZ cleared, then restored): a
// table must never cache a flushed result, whatever mode the thread that
// happens to build it is in.
template <class Build>
HWY_INLINE void WithIeeeSubnormals(const Build& build) {
#if HWY_ARCH_X86
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr & ~0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
  build();
  _mm_setcsr(csr);
#else
  build();
#endif
}

// The table of (dtype, act, Entry) of this target, built by the first caller
// while concurrent callers wait; every bit pattern goes through the kernels
// that compute the activation (MapUnary / MapGated's op), so a lookup gives
// their bits, NaN payloads included.
template <class Entry>
const Entry* ActivationTable(DType dtype, Activation act) {
  static ActivationTables<Entry> tables;
  const int t = dtype == DType::kBFloat16 ? 1 : 0, a = static_cast<int>(act);
  std::call_once(tables.once[t][a], [&]() HWY_ATTR {
    auto table = std::make_unique<Entry[]>(kHalfTableEntries);
    auto patterns = std::make_unique<uint16_t[]>(kHalfTableEntries);
    for (size_t i = 0; i < kHalfTableEntries; ++i) patterns[i] = static_cast<uint16_t>(i);
    VisitHalfType(dtype, [&](auto type) HWY_ATTR {
      using T = typename decltype(type)::type;
      const T* x = reinterpret_cast<const T*>(patterns.get());
      VisitActivation(act, [&](auto kind) HWY_ATTR {
        const ActivationOp<decltype(kind)::value> op;
        WithIeeeSubnormals([&]() HWY_ATTR {
          if constexpr (sizeof(Entry) == 2) {
            MapUnary(x, reinterpret_cast<T*>(table.get()), kHalfPatterns, op);
          } else {
            ForEachVector<float>(kHalfPatterns, [&](auto d, size_t i, auto io) HWY_ATTR {
              io.Store(op(d, io.Load(d, x + i)), d, table.get() + i);
            });
          }
        });
      });
    });
    tables.table[t][a] = std::move(table);
    ActivationTablesBuilt().fetch_add(1);
  });
  return tables.table[t][a].get();
}

// use_table (16-bit dtypes only): read this target's table of act instead of computing.
void ActivateKernel(DType dtype, Activation act, const void* x, void* out, size_t n, bool use_table) {
  if (use_table) {
    LookupHalf(ActivationTable<uint16_t>(dtype, act), static_cast<const uint16_t*>(x),
               static_cast<uint16_t*>(out), n);
    return;
  }
  VisitCpuType(dtype, [&](auto type) HWY_ATTR {
    using T = typename decltype(type)::type;
    VisitActivation(act, [&](auto kind) HWY_ATTR {
      constexpr Activation kAct = decltype(kind)::value;
      // relu is a light loop (kPrefetchLightLoops); the others compute for long enough
      // that their requests ahead pay.
      constexpr bool kPrefetch = kAct != Activation::kRelu || kPrefetchLightLoops;
      MapUnary<kPrefetch>(static_cast<const T*>(x), static_cast<T*>(out), n, ActivationOp<kAct>());
    });
  });
}

// Rows [0, rows) of x (2 * d per row, rows x_stride elements apart) into out
// (d per row, out_stride apart). use_table (16-bit dtypes only): act(gate)
// from this target's float32 table of act.
void GatedKernel(DType dtype, Activation act, const void* x, void* out, size_t rows, size_t d,
                 size_t x_stride, size_t out_stride, bool use_table) {
  if (use_table) {
    const float* act_table = ActivationTable<float>(dtype, act);
    VisitHalfType(dtype, [&](auto type) HWY_ATTR {
      using T = typename decltype(type)::type;
      for (size_t r = 0; r < rows; ++r) {
        const T* row = static_cast<const T*>(x) + r * x_stride;
        MapGatedLookup(act_table, row, row + d, static_cast<T*>(out) + r * out_stride, d);
      }
    });
    return;
  }
  VisitCpuType(dtype, [&](auto type) HWY_ATTR {
    using T = typename decltype(type)::type;
    VisitActivation(act, [&](auto kind) HWY_ATTR {
      const T* in = static_cast<const T*>(x);
      T* result = static_cast<T*>(out);
      for (size_t r = 0; r < rows; ++r) {
        const T* row = in + r * x_stride;
        MapGated(row, row + d, result + r * out_stride, d, ActivationOp<decltype(kind)::value>());
      }
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace hetkern
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <tvm/ffi/function.h>

#include "src/cpu/parallel.h"

namespace hetkern {
namespace cpu {

// Activations that compute cost tens of flops per element (exp, divisions),
// ~0.3-1.2 ns a value on one core: a thread pays off from a few thousand
// values. relu and table lookups cost a tenth of that, so they split later.
// Chunks stay cache-line aligned. A computed call takes a second thread only
// from 8192 values, then 2048 a thread: the first extra thread's wake-up is
// paid once whatever the count, and at 4096 values it cost more than it
// saved (2-core Zen 4, 2 threads, µs, one thread against two: exp float32
// 1.06-1.10 / 1.52, tanh bfloat16 1.26 / 1.57, gelu float16 2.04 / 2.66;
// torch 3.75, 4.10, 2.60), while a 16-core host's calls of 16K values run
// fastest on 8 threads (docs/performance.md, "Stop 33" and "Stop 54").
constexpr int64_t kActivationMinChunk = 1 << 13;
constexpr int64_t kComputedActivationMinChunk = 1 << 11;
constexpr int64_t kComputedActivationMinParallel = 1 << 13;
constexpr int64_t kActivationAlign = 64;

HWY_EXPORT(ActivateKernel);
HWY_EXPORT(GatedKernel);
HWY_EXPORT(DefaultTableMinElements);

namespace {

// Override of the targets' DefaultTableMinElements (tests and benchmarks):
// < 0 keeps each target's own; 0 reads tables on every call (every target).
std::atomic<int64_t> table_min_elements{-1};

// Whether a call over n elements reads a table: 16-bit types, activations
// that compute (relu is a compare: memory-bound already), large enough calls.
bool UseTable(DType dtype, Activation act, bool gated, int64_t n) {
  if ((dtype != DType::kFloat16 && dtype != DType::kBFloat16) || act == Activation::kRelu) return false;
  const int64_t forced = table_min_elements.load(std::memory_order_relaxed);
  return n >= (forced >= 0 ? forced : HWY_DYNAMIC_DISPATCH(DefaultTableMinElements)(dtype, act, gated));
}

// Whether a call computes its values (tens of flops each), rather than
// taking relu's max or reading a table.
bool Computes(Activation act, bool use_table) { return act != Activation::kRelu && !use_table; }

// Smallest share of a call's values worth a thread of its own.
int64_t MinChunk(Activation act, bool use_table) {
  return Computes(act, use_table) ? kComputedActivationMinChunk : kActivationMinChunk;
}

// Fewest values of a call that takes more than one thread (beyond the
// 2 * MinChunk that ParallelFor asks anyway).
int64_t MinParallel(Activation act, bool use_table) {
  return Computes(act, use_table) ? kComputedActivationMinParallel : 0;
}

}  // namespace

void Activate(const UnaryArgs& args, Activation act) {
  const size_t elem = DTypeSizeOf(args.dtype);
  const bool use_table = UseTable(args.dtype, act, /*gated=*/false, args.n);
  const auto run = [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(ActivateKernel)(args.dtype, act,
                                         static_cast<const char*>(args.x) + begin * elem,
                                         static_cast<char*>(args.out) + begin * elem,
                                         static_cast<size_t>(end - begin), use_table);
  };
  ParallelFor(args.n, MinChunk(act, use_table), kActivationAlign, run, MinParallel(act, use_table));
}

void GatedActivate(const GatedArgs& args, Activation act) {
  const size_t elem = DTypeSizeOf(args.dtype);
  const bool use_table = UseTable(args.dtype, act, /*gated=*/true, args.rows * args.d);
  // Whole rows per thread; enough rows that each thread gets ~min_chunk
  // outputs, and enough in all for MinParallel's outputs.
  const int64_t d = std::max<int64_t>(args.d, 1);
  const int64_t min_rows = std::max<int64_t>(1, MinChunk(act, use_table) / d);
  const int64_t min_parallel_rows = (MinParallel(act, use_table) + d - 1) / d;
  const auto run = [&](int64_t begin, int64_t end) {
    HWY_DYNAMIC_DISPATCH(GatedKernel)(args.dtype, act,
                                      static_cast<const char*>(args.x) + begin * args.x_stride * elem,
                                      static_cast<char*>(args.out) + begin * args.out_stride * elem,
                                      static_cast<size_t>(end - begin), static_cast<size_t>(args.d),
                                      static_cast<size_t>(args.x_stride),
                                      static_cast<size_t>(args.out_stride), use_table);
  };
  ParallelFor(args.rows, min_rows, 1, run, min_parallel_rows);
}

// Internal knobs for tests and benchmarks (not part of the API): sets the
// table threshold (see table_min_elements) and returns the previous value;
// counts the tables built.
int64_t SetActivationTableMinElements(int64_t min_elements) {
  return table_min_elements.exchange(min_elements < 0 ? -1 : min_elements);
}
int64_t ActivationTablesBuiltCount() { return ActivationTablesBuilt().load(); }

}  // namespace cpu
}  // namespace hetkern

TVM_FFI_DLL_EXPORT_TYPED_FUNC(_set_activation_table_min_elements,
                              hetkern::cpu::SetActivationTableMinElements);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(_activation_tables_built, hetkern::cpu::ActivationTablesBuiltCount);
#endif  // HWY_ONCE
