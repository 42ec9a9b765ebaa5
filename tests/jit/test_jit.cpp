// SPDX-License-Identifier: Apache-2.0
// The JIT foundation: generator base (W^X pages, prologue, constant pool, errors as status),
// the injector inside a foreign host's register range, the kernel cache (sharing, LRU,
// freeing, threads), and dumps.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "jit/jit_eltwise_injector.hpp"
#include "jit/jit_dump.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "jit_test_util.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;
using namespace Xbyak::util;

namespace {

// Permissions ("r-xp") of the mapping holding p, from /proc/self/maps.
std::string perms_of(const void *p) {
    std::ifstream maps("/proc/self/maps");
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (std::string line; std::getline(maps, line);) {
        std::uintptr_t lo = 0, hi = 0;
        char perms[8] = {};
        if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && a >= lo && a < hi) return perms;
    }
    return "not mapped";
}

bool has_avx512() { return detected_isa() >= isa::avx512_core; }

} // namespace

TEST(JitGenerator, CodePagesAreWritableWhileGeneratingAndExecutableAfterNeverBoth) {
    std::string during;
    lambda_kernel_t k(isa::avx2, [&](lambda_kernel_t &g) {
        g.mov(g.eax, 42);
        during = perms_of(g.getCode());
        g.postamble();
    });
    std::string why;
    ASSERT_EQ(k.create(why), status::success) << why;
    EXPECT_EQ(during, "rw-p");
    EXPECT_EQ(perms_of(k.code()), "r-xp");
    if (detected_isa() >= isa::avx2) {
        EXPECT_EQ(k.entry<int (*)()>()(), 42);
    }
}

TEST(JitGenerator, PreambleSavesExactlyTheCalleeSavedRegistersUsed) {
    lambda_kernel_t k(isa::avx2, [](lambda_kernel_t &g) {
        g.preamble({rax, rbx, rdi, r12, r8, rbx});
        g.mov(rbx, 1);
        g.mov(r12, 2);
        g.postamble();
    });
    std::string why;
    ASSERT_EQ(k.create(why), status::success) << why;
    const std::uint8_t *c = k.code();
    // push rbx; push r12; then mov ebx, 1 (bb 01 00 00 00): nothing else is pushed.
    EXPECT_EQ(c[0], 0x53);
    EXPECT_EQ(c[1], 0x41);
    EXPECT_EQ(c[2], 0x54);
    EXPECT_EQ(c[3], 0xbb);
    // ... pop r12; pop rbx; vzeroupper; ret at the end of the instructions (before alignment).
    const std::uint8_t tail[] = {0x41, 0x5c, 0x5b, 0xc5, 0xf8, 0x77, 0xc3};
    const std::uint8_t *end = std::search(c, c + k.insn_size(), tail, tail + sizeof tail);
    EXPECT_NE(end, c + k.insn_size()) << "postamble pops in reverse, then vzeroupper; ret";
}

TEST(JitGenerator, ConstantPoolIsSharedAndRipRelative) {
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "needs avx2";
    lambda_kernel_t k(isa::avx2, [](lambda_kernel_t &g) {
        g.vmovups(ymm0, g.vconst(1.5f));
        g.vaddps(ymm0, ymm0, g.vconst(2.5f));
        g.vaddps(ymm0, ymm0, g.vconst(1.5f)); // the same entry again
        g.vmovups(g.ptr[rdi], ymm0);
        g.postamble();
    });
    std::string why;
    ASSERT_EQ(k.create(why), status::success) << why;
    EXPECT_EQ(k.code_size() - k.insn_size(), 2u * 32) << "two distinct 32-byte entries";
    float out[8] = {};
    k.entry<void (*)(float *)>()(out);
    for (float v : out) EXPECT_EQ(v, 5.5f);
}

TEST(JitGenerator, XbyakErrorsBecomeAStatusWithTheReason) {
    lambda_kernel_t bad(isa::avx512_core, [](lambda_kernel_t &g) { g.vaddps(zmm0, ymm1, zmm2); });
    std::string why;
    EXPECT_EQ(bad.create(why), status::runtime_error);
    EXPECT_NE(why.find("Xbyak"), std::string::npos) << why;
    EXPECT_NE(why.find("test_kernel"), std::string::npos) << why;
    // An injector asked to use more temporaries than it was lent.
    lambda_kernel_t greedy(isa::avx2, [](lambda_kernel_t &g) {
        jit_eltwise_injector_t<isa::avx2> inj(g, eltwise_alg::gelu_erf, 0.f, 0.f, 4, 6);
        inj.compute(0, 2);
    });
    EXPECT_EQ(greedy.create(why), status::runtime_error);
    EXPECT_NE(why.find("temporary"), std::string::npos) << why;
}

// A host kernel that loads every vector register with its own values, lets the injector work
// on two registers with temporaries lent from the middle of the file, and stores every
// register back: the two values change, registers outside the lent range do not.
template <isa level>
void check_injector_in_foreign_range(eltwise_alg alg) {
    using traits = isa_traits_t<level>;
    using Vmm = typename traits::Vmm;
    constexpr int nregs = traits::n_vregs, w = traits::simd_w;
    const int nt = jit_eltwise_injector_t<level>::n_vtemps(alg);
    const int v0 = nregs - 2, tmp_first = 2; // values at the top, temporaries from 2 up
    ASSERT_LE(tmp_first + 2 * nt, v0);
    lambda_kernel_t k(level, [&](lambda_kernel_t &g) {
        for (int r = 0; r < nregs; ++r) g.vmovups(Vmm(r), g.ptr[rdi + r * w * 4]);
        jit_eltwise_injector_t<level> inj(g, alg, 0.5f, 2.f, tmp_first, 2 * nt);
        inj.compute({v0, v0 + 1});
        for (int r = 0; r < nregs; ++r) g.vmovups(g.ptr[rdi + r * w * 4], Vmm(r));
        g.postamble();
    });
    std::string why;
    ASSERT_EQ(k.create(why), status::success) << why;
    std::vector<float> regs(nregs * w), before;
    for (std::size_t i = 0; i < regs.size(); ++i) regs[i] = 0.37f * static_cast<float>(i % 23) - 3.f;
    before = regs;
    k.entry<void (*)(float *)>()(regs.data());
    for (int r = 0; r < nregs; ++r)
        for (int l = 0; l < w; ++l) {
            const float x = before[r * w + l], y = regs[r * w + l];
            if (r >= v0) {
                const float e = eltwise_ref(alg, x, 0.5f, 2.f);
                if (std::isnan(e)) {
                    EXPECT_TRUE(std::isnan(y)) << to_string(alg) << " reg " << r;
                } else {
                    EXPECT_NEAR(y, e, 2e-5 * std::fabs(e) + 1e-30) << to_string(alg) << " reg " << r;
                }
            } else if (r < tmp_first || r >= tmp_first + 2 * nt) {
                EXPECT_EQ(y, x) << to_string(alg) << ": register " << r << " outside the lent range changed";
            }
        }
}

TEST(EltwiseInjector, WorksInAForeignRegisterRangeAndTouchesNothingElse) {
    for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
        const auto alg = static_cast<eltwise_alg>(a);
        if (detected_isa() >= isa::avx2) check_injector_in_foreign_range<isa::avx2>(alg);
        if (has_avx512()) check_injector_in_foreign_range<isa::avx512_core>(alg);
    }
}

namespace {

// Makes a small real kernel; counts calls.
kernel_cache_t::factory_t counting_factory(std::atomic<int> &calls, int value, int delay_ms = 0) {
    return [&calls, value, delay_ms]() -> std::unique_ptr<jit_generator_t> {
        ++calls;
        if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        return std::make_unique<lambda_kernel_t>(isa::avx2, [value](lambda_kernel_t &g) {
            g.mov(g.eax, value);
            g.postamble();
        });
    };
}

} // namespace

TEST(KernelCache, SameKeySameKernelAndLruEviction) {
    kernel_cache_t cache(2);
    std::atomic<int> calls {0};
    std::string why;
    kernel_ptr a1, a2, b, c, b2;
    ASSERT_EQ(cache.get("a", counting_factory(calls, 1), a1, why), status::success) << why;
    ASSERT_EQ(cache.get("a", counting_factory(calls, 1), a2, why), status::success);
    EXPECT_EQ(a1, a2);
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(cache.get("b", counting_factory(calls, 2), b, why), status::success);
    ASSERT_EQ(cache.get("a", counting_factory(calls, 1), a2, why), status::success); // a is now the most recent
    std::weak_ptr<const jit_generator_t> weak_b = b;
    ASSERT_EQ(cache.get("c", counting_factory(calls, 3), c, why), status::success); // evicts b
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_FALSE(weak_b.expired()) << "an evicted kernel lives while someone holds it";
    if (detected_isa() >= isa::avx2) {
        EXPECT_EQ(b->entry<int (*)()>()(), 2);
    }
    const void *b_code = b->code();
    EXPECT_EQ(perms_of(b_code), "r-xp");
    b.reset();
    EXPECT_TRUE(weak_b.expired()) << "and is freed with its last holder";
    EXPECT_NE(perms_of(b_code), "r-xp") << "its code pages are unmapped";
    ASSERT_EQ(cache.get("b", counting_factory(calls, 2), b2, why), status::success);
    EXPECT_EQ(calls, 4) << "b was generated again";
    EXPECT_EQ(cache.stats().hits, 2u);
    EXPECT_EQ(cache.stats().misses, 4u);
    cache.set_capacity(1);
    EXPECT_EQ(cache.size(), 1u);
}

TEST(KernelCache, CapacityZeroGeneratesEveryTime) {
    kernel_cache_t cache(0);
    std::atomic<int> calls {0};
    std::string why;
    kernel_ptr a, b;
    ASSERT_EQ(cache.get("a", counting_factory(calls, 1), a, why), status::success);
    ASSERT_EQ(cache.get("a", counting_factory(calls, 1), b, why), status::success);
    EXPECT_NE(a, b);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(cache.size(), 0u);
}

TEST(KernelCache, ThreadsAskingForOneKernelGetOne) {
    kernel_cache_t cache(8);
    std::atomic<int> calls {0};
    constexpr int n = 6;
    std::vector<kernel_ptr> got(n);
    std::atomic<int> ready {0};
    std::vector<std::thread> ts;
    for (int i = 0; i < n; ++i)
        ts.emplace_back([&, i] {
            ++ready;
            while (ready < n) std::this_thread::yield();
            std::string why;
            EXPECT_EQ(cache.get("k", counting_factory(calls, 7, 50), got[i], why), status::success) << why;
        });
    for (std::thread &t : ts) t.join();
    EXPECT_EQ(calls, 1);
    for (const kernel_ptr &k : got) EXPECT_EQ(k, got[0]);
}

// Threads asking for more kernels than the cache keeps, so that entries are evicted while
// others are being generated, all get the kernel of their key, and the counts add up (the
// TSan build checks the locking).
TEST(KernelCache, ThreadsEvictingEachOthersKernelsGetTheirOwn) {
    constexpr std::size_t capacity = 3;
    kernel_cache_t cache(capacity);
    std::atomic<int> calls {0};
    constexpr int n_threads = 4, rounds = 10, n_keys = 6;
    std::vector<int> wrong(n_threads, 0);
    std::vector<std::thread> ts;
    for (int t = 0; t < n_threads; ++t)
        ts.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r)
                for (int i = 0; i < n_keys; ++i) {
                    const int key = (i + t) % n_keys;
                    std::string why;
                    kernel_ptr k;
                    const status st = cache.get(std::to_string(key), counting_factory(calls, key), k, why);
                    if (st != status::success || !k || (detected_isa() >= isa::avx2 && k->entry<int (*)()>()() != key))
                        ++wrong[static_cast<std::size_t>(t)];
                }
        });
    for (std::thread &th : ts) th.join();
    for (int t = 0; t < n_threads; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << "thread " << t;
    const kernel_cache_t::stats_t s = cache.stats();
    EXPECT_EQ(s.hits + s.misses, std::size_t {n_threads * rounds * n_keys});
    EXPECT_EQ(s.misses, static_cast<std::size_t>(calls.load()));
    EXPECT_LE(cache.size(), capacity);
    // Every miss added an entry, and only eviction removed one.
    EXPECT_EQ(s.evictions, s.misses - cache.size());
}

TEST(KernelCache, FailuresAreReportedAndNotCached) {
    kernel_cache_t cache(4);
    std::string why;
    kernel_ptr k;
    auto failing = []() -> std::unique_ptr<jit_generator_t> {
        return std::make_unique<lambda_kernel_t>(
                isa::avx512_core, [](lambda_kernel_t &g) { g.vaddps(zmm0, ymm1, zmm2); });
    };
    EXPECT_EQ(cache.get("x", failing, k, why), status::runtime_error);
    EXPECT_EQ(k, nullptr);
    EXPECT_NE(why.find("Xbyak"), std::string::npos) << why;
    EXPECT_EQ(cache.size(), 0u);
    std::atomic<int> calls {0};
    EXPECT_EQ(cache.get("x", counting_factory(calls, 1), k, why), status::success);
    EXPECT_NE(k, nullptr);
}

// A recorder sees what a conv's creation generates, in order and once each, and what a
// second creation of the same problem takes from the cache; nested recorders both record,
// and a recorder that has ended records nothing more.
TEST(KernelCache, RecorderTellsWhatAnOpUses) {
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "no JIT kernels on this CPU";
    conv_desc d;
    d.mb = 1;
    d.ic = 24;
    d.ih = d.iw = 9;
    d.oc = 40;
    d.kh = d.kw = 3;
    d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.infer_dst_dims();
    std::vector<kernel_ptr> first;
    {
        kernel_recorder_t outer;
        {
            kernel_recorder_t rec;
            conv_fwd c(d, format_tag::nChw8c, format_tag::oihw, format_tag::nChw8c);
            ASSERT_EQ(std::string(c.impl_name()).rfind("jit:", 0), 0u) << c.impl_name();
            first = rec.kernels();
            ASSERT_FALSE(first.empty());
            ASSERT_EQ(rec.keys().size(), first.size());
            for (std::size_t i = 0; i < first.size(); ++i)
                for (std::size_t j = i + 1; j < first.size(); ++j) EXPECT_NE(rec.keys()[i], rec.keys()[j]);
            for (const kernel_ptr &k : first) EXPECT_EQ(k->name().rfind("jit_conv_fwd", 0), 0u) << k->name();
        }
        EXPECT_EQ(outer.kernels(), first) << "the outer recorder saw the same kernels";
        const std::size_t cap = kernel_cache().capacity();
        if (cap > 0 && cap < first.size())
            GTEST_SKIP() << "kernel cache capacity " << cap << " (BLOCKDNN_KERNEL_CACHE_CAPACITY) is below the "
                         << first.size() << " kernels of the conv, so a second creation cannot take them all";
        const std::size_t before = kernel_cache().stats().hits;
        kernel_recorder_t again;
        conv_fwd c2(d, format_tag::nChw8c, format_tag::oihw, format_tag::nChw8c);
        if (kernel_cache().capacity() > 0) {
            EXPECT_EQ(again.kernels(), first) << "the second creation takes the same kernels from the cache";
            EXPECT_GE(kernel_cache().stats().hits, before + first.size());
        } else {
            EXPECT_EQ(again.kernels().size(), first.size());
        }
        EXPECT_EQ(outer.kernels().size(), first.size()) << "no duplicates";
    }
    kernel_recorder_t after;
    { kernel_recorder_t gone; }
    kernel_ptr k;
    std::string why;
    std::atomic<int> calls {0};
    kernel_cache_t local(2);
    ASSERT_EQ(local.get("r", counting_factory(calls, 1), k, why), status::success) << why;
    ASSERT_EQ(after.kernels().size(), 1u) << "any cache records, and only live recorders";
    EXPECT_EQ(after.kernels()[0], k);
    EXPECT_EQ(after.keys()[0], "r");
}

TEST(KernelCache, CapacityParsing) {
    std::size_t cap = 0;
    std::string why;
    EXPECT_TRUE(parse_kernel_cache_capacity("16", cap, why));
    EXPECT_EQ(cap, 16u);
    EXPECT_TRUE(parse_kernel_cache_capacity("0", cap, why));
    EXPECT_EQ(cap, 0u);
    for (const char *bad : {"", "-1", "abc", "12k", "99999999999"}) {
        EXPECT_FALSE(parse_kernel_cache_capacity(bad, cap, why)) << bad;
        if (*bad) {
            EXPECT_NE(why.find(bad), std::string::npos) << why;
        }
    }
    const kernel_cache_t broken(0, "BLOCKDNN_KERNEL_CACHE_CAPACITY: 'abc' is not a non-negative decimal integer");
    kernel_ptr k;
    std::atomic<int> calls {0};
    EXPECT_EQ(const_cast<kernel_cache_t &>(broken).get("a", counting_factory(calls, 1), k, why),
            status::invalid_arguments);
    EXPECT_NE(why.find("'abc'"), std::string::npos) << why;
}

TEST(KernelCache, OpsWithOneProblemShareTheirKernel) {
    isa_guard g;
    if (detected_isa() < isa::avx2) GTEST_SKIP() << "no JIT ISA";
    set_max_isa(detected_isa());
    const tensor_desc d({3, 5}, format_tag::nc);
    const auto before = kernel_cache().stats();
    const eltwise_fwd a(eltwise_alg::swish, 0.75f, 0.f, d),
            b(eltwise_alg::swish, 0.75f, 0.f, tensor_desc({99}, format_tag::x));
    const auto after = kernel_cache().stats();
    EXPECT_GE(after.hits, before.hits + 1);
}

// A dump heads the code with the kernel's name, ISA and conf_str, one "; " line each.
TEST(JitDump, FilesHoldTheCodeAndItsDisassembly) {
    auto k = std::make_unique<lambda_kernel_t>(
            isa::avx512_core,
            [](lambda_kernel_t &g) {
                g.vmaxps(zmm0, zmm8, zmm0);
                g.mov(g.eax, 0xff);
                g.kmovw(k1, g.eax);
                g.postamble();
            },
            "dump_test", "conf: isa=avx512_core test=dump\nregisters: rdi=call_args_t*\nvector registers: zmm0 zmm8");
    std::string why;
    ASSERT_EQ(k->create(why), status::success) << why;
    const std::string text = disassemble(*k);
    expect_dump_holds(text,
            {"; kernel: dump_test", "; isa: avx512_core", "; conf: isa=avx512_core test=dump",
                    "; registers: rdi=call_args_t*", "; vector registers: zmm0 zmm8"},
            {"vmaxps zmm0, zmm8, zmm0", "kmovw k1, eax", "vzeroupper"});
    char tmpl[] = "/tmp/blockdnn_dump_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    std::vector<std::string> paths;
    ASSERT_EQ(dump_kernel(*k, tmpl, "k", dump_format::both, paths, why), status::success) << why;
    ASSERT_EQ(paths.size(), 2u);
    std::ifstream bin(paths[0], std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(bin)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.size(), k->code_size());
    EXPECT_EQ(std::memcmp(bytes.data(), k->code(), k->code_size()), 0);
    std::ifstream asm_file(paths[1]);
    std::stringstream ss;
    ss << asm_file.rdbuf();
    EXPECT_EQ(ss.str(), text);
    for (const std::string &p : paths) std::remove(p.c_str());
    rmdir(tmpl);
    EXPECT_EQ(dump_kernel(*k, "/nonexistent/dir", "k", dump_format::bin, paths, why), status::runtime_error);
    EXPECT_NE(why.find("/nonexistent/dir/k.bin"), std::string::npos) << why;
}
