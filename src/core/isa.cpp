// SPDX-License-Identifier: Apache-2.0
// CPU detection through cpuinfo (the caches from Linux where cpuinfo reads none), and the
// max-ISA cap (set_max_isa / BLOCKDNN_MAX_ISA).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>

#include <cpuinfo.h>

#include "blockdnn/isa.hpp"
#include "core/cpu_caches.hpp"
#include "core/isa_assume.hpp"
#include "core/utils.hpp"

namespace blockdnn {

const char *to_string(isa i) {
    switch (i) {
    case isa::scalar: return "scalar";
    case isa::avx2: return "avx2";
    case isa::avx512_core: return "avx512_core";
    }
    return "unknown";
}

isa isa_from_string(std::string_view name) {
    std::string s(name);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "scalar") return isa::scalar;
    if (s == "avx2") return isa::avx2;
    if (s == "avx512_core" || s == "avx512") return isa::avx512_core;
    impl::fail(status::invalid_arguments, "isa: unknown ISA name '", name,
            "'; expected one of scalar, avx2, avx512_core (or avx512)");
}

namespace {

cpu_features detect() {
    cpu_features f;
    if (!cpuinfo_initialize()) return f; // unknown CPU: scalar only
    f.avx2 = cpuinfo_has_x86_avx2();
    f.fma = cpuinfo_has_x86_fma3();
    f.avx512f = cpuinfo_has_x86_avx512f();
    f.avx512bw = cpuinfo_has_x86_avx512bw();
    f.avx512dq = cpuinfo_has_x86_avx512dq();
    f.avx512vl = cpuinfo_has_x86_avx512vl();
    f.avx512_vnni = cpuinfo_has_x86_avx512vnni();
    f.avx512_bf16 = cpuinfo_has_x86_avx512bf16();
    if (const cpuinfo_package *p = cpuinfo_get_package(0)) f.name = p->name;
    f.physical_cores = std::max<int>(1, static_cast<int>(cpuinfo_get_cores_count()));
    f.logical_processors = std::max<int>(1, static_cast<int>(cpuinfo_get_processors_count()));
    if (const cpuinfo_cache *c = cpuinfo_get_l1d_cache(0)) f.l1d_bytes = c->size;
    if (const cpuinfo_cache *c = cpuinfo_get_l2_cache(0)) f.l2_bytes = c->size;
    if (const cpuinfo_cache *c = cpuinfo_get_l3_cache(0)) {
        f.l3_bytes = c->size;
        f.l3_processors = static_cast<int>(c->processor_count);
    }
    // A cpuinfo too old for the CPU reads no caches, or no processors behind its L3; Linux
    // lists both, for the same cpu0.
    if (f.l1d_bytes <= 0 || f.l2_bytes <= 0 || f.l3_bytes <= 0 || f.l3_processors <= 0) {
        const impl::cache_sizes_t s = impl::read_sysfs_caches("/sys/devices/system/cpu/cpu0/cache");
        if (f.l1d_bytes <= 0) f.l1d_bytes = s.l1d_bytes;
        if (f.l2_bytes <= 0) f.l2_bytes = s.l2_bytes;
        if (f.l3_bytes <= 0) f.l3_bytes = s.l3_bytes;
        if (f.l3_processors <= 0) f.l3_processors = s.l3_processors;
    }
    return f;
}

// -1: no cap set through the API; otherwise the isa value.
std::atomic<int> api_cap {-1};
// -1: dispatch follows the CPU; otherwise the isa value assume_cpu_isa set.
std::atomic<int> assumed_cpu {-1};

isa checked(const char *fn, isa level) {
    const int m = static_cast<int>(level);
    if (m < static_cast<int>(isa::scalar) || m > static_cast<int>(isa::avx512_core))
        impl::fail(status::invalid_arguments, fn, ": isa = ", m, " is not an isa (scalar, avx2, avx512_core)");
    return level;
}

} // namespace

const cpu_features &cpu() {
    static const cpu_features f = detect();
    return f;
}

isa detected_isa() {
    const cpu_features &f = cpu();
    if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl) return isa::avx512_core;
    if (f.avx2 && f.fma) return isa::avx2;
    return isa::scalar;
}

void set_max_isa(isa max) { api_cap.store(static_cast<int>(checked("set_max_isa", max)), std::memory_order_relaxed); }

void reset_max_isa() { api_cap.store(-1, std::memory_order_relaxed); }

isa max_isa() {
    const int cap = api_cap.load(std::memory_order_relaxed);
    if (cap >= 0) return static_cast<isa>(cap);
    // Read on every call (it is a short scan of the environment) so that a test or a tool
    // can change the variable between calls; set_max_isa is the thread-safe way.
    if (const char *env = std::getenv("BLOCKDNN_MAX_ISA"); env && *env) {
        try {
            return isa_from_string(env);
        } catch (const error &e) {
            impl::fail(status::invalid_arguments, "BLOCKDNN_MAX_ISA: ", e.what());
        }
    }
    return isa::avx512_core;
}

isa effective_isa() {
    const int assumed = assumed_cpu.load(std::memory_order_relaxed);
    return std::min(assumed >= 0 ? static_cast<isa>(assumed) : detected_isa(), max_isa());
}

bool isa_usable(isa level) { return level >= isa::scalar && level <= effective_isa(); }

} // namespace blockdnn

namespace blockdnn::impl {

void assume_cpu_isa(isa level) {
    assumed_cpu.store(static_cast<int>(checked("assume_cpu_isa", level)), std::memory_order_relaxed);
}

void reset_assumed_cpu_isa() { assumed_cpu.store(-1, std::memory_order_relaxed); }

} // namespace blockdnn::impl
