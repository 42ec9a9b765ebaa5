// SPDX-License-Identifier: Apache-2.0
// ISA detection, the max-ISA cap from the API and from BLOCKDNN_MAX_ISA, and dispatch by cap.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include <stdlib.h>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/cpu_caches.hpp"
#include "core/isa_assume.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;

TEST(Isa, NamesRoundTrip) {
    for (isa i : {isa::scalar, isa::avx2, isa::avx512_core}) EXPECT_EQ(isa_from_string(to_string(i)), i);
    EXPECT_EQ(isa_from_string("AVX512"), isa::avx512_core);
    EXPECT_EQ(isa_from_string("Avx2"), isa::avx2);
}

TEST(Isa, UnknownNameIsAnErrorNamingIt) {
    expect_error(status::invalid_arguments, {"sse9"}, [] { isa_from_string("sse9"); });
    expect_error(status::invalid_arguments, {"''"}, [] { isa_from_string(""); });
}

TEST(Isa, DetectionIsConsistentWithFeatures) {
    const cpu_features &f = cpu();
    EXPECT_GE(f.physical_cores, 1);
    EXPECT_GE(f.logical_processors, f.physical_cores);
    const isa d = detected_isa();
    if (d >= isa::avx2) {
        EXPECT_TRUE(f.avx2 && f.fma);
    }
    if (d == isa::avx512_core) {
        EXPECT_TRUE(f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl);
    }
    if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl) {
        EXPECT_EQ(d, isa::avx512_core);
    }
}

namespace {

// A directory of fake cache entries, like /sys/devices/system/cpu/cpu0/cache, of its own in
// the temporary directory, removed at the end of the test.
struct fake_caches_t {
    std::filesystem::path dir;
    fake_caches_t() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "blockdnn_caches_XXXXXX").string();
        if (::mkdtemp(tmpl.data())) dir = tmpl;
    }
    ~fake_caches_t() {
        std::error_code ec;
        if (!dir.empty()) std::filesystem::remove_all(dir, ec);
    }
    // indexN with the given files; an empty text leaves that file out.
    void add(int n, const std::string &level, const std::string &type, const std::string &size,
            const std::string &cpus = "") const {
        const std::filesystem::path d = dir / ("index" + std::to_string(n));
        std::filesystem::create_directories(d);
        for (const auto &[file, text] :
                {std::pair {"level", level}, {"type", type}, {"size", size}, {"shared_cpu_list", cpus}})
            if (!text.empty()) std::ofstream(d / file) << text << "\n";
    }
};

} // namespace

// Cache sizes read as Linux lists them: L1 data (not instruction) or unified, L2 and L3
// unified, the K, M and G suffixes, and the processors an L3 lists as sharing it; entries that
// are not caches, or do not parse or overflow, leave their level unknown.
TEST(Isa, SysfsCachesAreReadAsLinuxListsThem) {
    {
        const fake_caches_t f;
        ASSERT_FALSE(f.dir.empty());
        f.add(0, "1", "Data", "48K");
        f.add(1, "1", "Instruction", "32K");
        f.add(2, "2", "Unified", "1024K");
        f.add(3, "3", "Unified", "32M", "0-7,64-71");
        std::ofstream(f.dir / "uevent") << "\n";
        const impl::cache_sizes_t s = impl::read_sysfs_caches(f.dir.string());
        EXPECT_EQ(s.l1d_bytes, 48L << 10);
        EXPECT_EQ(s.l2_bytes, 1L << 20);
        EXPECT_EQ(s.l3_bytes, 32L << 20);
        EXPECT_EQ(s.l3_processors, 16);
    }
    // The processor lists Linux writes, and ones that do not parse (no count); "" leaves the
    // file out.
    for (const auto &[list, count] : {std::pair {"0", 1}, {"3", 1}, {"0-1", 2}, {"0,2,4-5", 4}, {"8-15,24-31", 16},
                 {"", 0}, {"0-", 0}, {"-3", 0}, {"5-2", 0}, {"0,,1", 0}, {"0-3,", 0}, {"a-b", 0}, {"0-99999999", 0},
                 {"0-9999999,0-9999999", 0}}) {
        const fake_caches_t f;
        ASSERT_FALSE(f.dir.empty());
        f.add(0, "3", "Unified", "16M", list);
        const impl::cache_sizes_t s = impl::read_sysfs_caches(f.dir.string());
        EXPECT_EQ(s.l3_bytes, 16L << 20) << list;
        EXPECT_EQ(s.l3_processors, count) << '"' << list << '"';
    }
    {
        // A unified L1, no L3, a size in G, and broken or overflowing entries.
        const fake_caches_t f;
        ASSERT_FALSE(f.dir.empty());
        f.add(0, "1", "Unified", "64K");
        f.add(1, "2", "Unified", "2G");
        f.add(2, "3", "Unified", "32 MB");
        f.add(3, "3", "Unified", "");
        f.add(4, "", "Unified", "8M");
        f.add(5, "3", "Unified", "99999999999999G");
        const impl::cache_sizes_t s = impl::read_sysfs_caches(f.dir.string());
        EXPECT_EQ(s.l1d_bytes, 64L << 10);
        EXPECT_EQ(s.l2_bytes, 2L << 30);
        EXPECT_EQ(s.l3_bytes, 0);
    }
    {
        // An instruction cache alone at L1.
        const fake_caches_t f;
        ASSERT_FALSE(f.dir.empty());
        f.add(0, "1", "Instruction", "32K");
        EXPECT_EQ(impl::read_sysfs_caches(f.dir.string()).l1d_bytes, 0);
    }
    const impl::cache_sizes_t none = impl::read_sysfs_caches("/nonexistent/blockdnn/cache");
    EXPECT_EQ(none.l1d_bytes, 0);
    EXPECT_EQ(none.l2_bytes, 0);
    EXPECT_EQ(none.l3_bytes, 0);
    EXPECT_EQ(none.l3_processors, 0);
}

TEST(Isa, ApiCapLowersEffectiveIsa) {
    isa_guard g;
    for (isa cap : {isa::scalar, isa::avx2, isa::avx512_core}) {
        set_max_isa(cap);
        EXPECT_EQ(max_isa(), cap);
        EXPECT_EQ(effective_isa(), std::min(cap, detected_isa()));
        EXPECT_TRUE(isa_usable(isa::scalar));
        EXPECT_EQ(isa_usable(isa::avx512_core), cap == isa::avx512_core && detected_isa() == isa::avx512_core);
    }
}

TEST(Isa, EnvironmentCapAndItsErrors) {
    isa_guard g;
    reset_max_isa();
    env_guard e("BLOCKDNN_MAX_ISA", "avx2");
    EXPECT_EQ(max_isa(), isa::avx2);
    EXPECT_LE(effective_isa(), isa::avx2);
    setenv("BLOCKDNN_MAX_ISA", "scalar", 1);
    EXPECT_EQ(effective_isa(), isa::scalar);
    setenv("BLOCKDNN_MAX_ISA", "avx1024", 1);
    expect_error(status::invalid_arguments, {"BLOCKDNN_MAX_ISA", "avx1024"}, [] { max_isa(); });
    // The API cap takes precedence over a bad variable.
    set_max_isa(isa::avx2);
    EXPECT_EQ(max_isa(), isa::avx2);
    // A cast integer outside the enumeration is refused, and the cap stays.
    expect_error(status::invalid_arguments, {"set_max_isa", "isa = 7"}, [] { set_max_isa(static_cast<isa>(7)); });
    EXPECT_EQ(max_isa(), isa::avx2);
}

TEST(Isa, DispatchFollowsTheCap) {
    isa_guard g;
    const tensor_desc plain({2, 16, 5, 5}, format_tag::nchw), blocked({2, 16, 5, 5}, format_tag::nChw16c);
    set_max_isa(isa::scalar);
    EXPECT_EQ(reorder_impl_name(plain, blocked), "scalar:act");
    if (detected_isa() >= isa::avx2) {
        set_max_isa(isa::avx2);
        EXPECT_EQ(reorder_impl_name(plain, blocked), "simd:avx2:act");
    }
    if (detected_isa() >= isa::avx512_core) {
        set_max_isa(isa::avx512_core);
        EXPECT_EQ(reorder_impl_name(plain, blocked), "simd:avx512_core:act");
    }
}

// kernelgen's assumption: dispatch as if the CPU had a given ISA (kernels generated, not run).
TEST(Isa, AssumedCpuIsaReplacesTheDetectedOne) {
    // Resets the assumption however the test leaves, so that later tests see the real CPU.
    struct reset_assumed_isa_t {
        ~reset_assumed_isa_t() { impl::reset_assumed_cpu_isa(); }
    } reset_at_exit;
    {
        const reset_assumed_isa_t reset;
        impl::assume_cpu_isa(isa::avx2);
        EXPECT_EQ(effective_isa(), std::min(isa::avx2, max_isa()));
        impl::assume_cpu_isa(isa::avx512_core);
        EXPECT_EQ(effective_isa(), max_isa()); // above the CPU's when it lacks AVX-512
    }
    EXPECT_EQ(effective_isa(), std::min(detected_isa(), max_isa()));
    try {
        impl::assume_cpu_isa(static_cast<isa>(7));
        FAIL() << "no error";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find("assume_cpu_isa: isa = 7"), std::string::npos) << e.what();
    }
}
