// SPDX-License-Identifier: Apache-2.0
// The conv conf memo (init_conf_conv_fwd_memo): it answers what init_conf_conv_fwd answers
// (confs and refusals, every kernel kind, both ISA levels), never the answer for other inputs
// (machine model, ISA level, hint, post-ops, layouts), keeps at most the kernel cache's
// capacity of answers, and serves threads at once; ops created through it run as ops created
// with every cache off.
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "common/test_util.hpp"
#include "core/machine_model.hpp"
#include "jit/jit_kernel_cache.hpp"
#include "ops/conv/conv_conf.hpp"
#include "testing/fill.hpp"

using namespace blockdnn;
using namespace blockdnn::impl;

namespace {

// One set of init_conf inputs.
struct inputs_t {
    conv_desc d;
    format_tag src = format_tag::nChw16c, dst = format_tag::nChw16c;
    post_ops po;
    isa level = isa::avx512_core;
    conv_kernel_kind kind = conv_kernel_kind::direct;
    conv_conf_hint_t hint;
};

// An answer as text: the conf, or the status and reason of a refusal.
std::string answer(status st, const conv_conf_t &c, const std::string &why) {
    return st == status::success ? to_string(c) : std::string(to_string(st)) + ": " + why;
}

std::string fresh(const inputs_t &in) {
    conv_conf_t c;
    std::string why;
    const status st = init_conf_conv_fwd(c, in.d, in.src, in.dst, in.po, in.level, in.kind, why, in.hint);
    return answer(st, c, why);
}

std::string memo(const inputs_t &in) {
    conv_conf_t c;
    std::string why;
    const status st = init_conf_conv_fwd_memo(c, in.d, in.src, in.dst, in.po, in.level, in.kind, why, in.hint);
    return answer(st, c, why);
}

inputs_t inputs(const char *desc, format_tag act, isa level) {
    inputs_t in;
    in.d = parse_conv_desc(desc);
    in.src = in.dst = act;
    in.level = level;
    in.kind = conv_kernel_kind_for(in.d, act);
    return in;
}

// The kernel cache (and so the memo) at `capacity` entries, the memo empty, while it lives.
class memo_capacity_t {
public:
    explicit memo_capacity_t(std::size_t capacity) : saved_(kernel_cache().capacity()) {
        kernel_cache().set_capacity(capacity);
        conv_conf_memo_clear();
    }
    ~memo_capacity_t() { kernel_cache().set_capacity(saved_); }
    memo_capacity_t(const memo_capacity_t &) = delete;
    memo_capacity_t &operator=(const memo_capacity_t &) = delete;

private:
    std::size_t saved_;
};

// Problems of every kernel kind and blocking path: a 3x3, a unit-stride 1x1 whose pixels are
// regrouped into longer rows, a strided 1x1 run over several rows per call, a depthwise and a
// first layer (plain src), on the layouts each kind reads.
std::vector<inputs_t> problem_set() {
    std::vector<inputs_t> v;
    for (isa level : {isa::avx512_core, isa::avx2}) {
        const format_tag blocked = level == isa::avx512_core ? format_tag::nChw16c : format_tag::nChw8c;
        for (format_tag act : {blocked, format_tag::nhwc}) {
            v.push_back(inputs("mb2ic64ih14oc64oh14kh3ph1", act, level));
            v.push_back(inputs("mb1ic256ih56oc64oh56kh1ph0", act, level));
            v.push_back(inputs("mb2ic64ih28oc128oh14kh1sh2ph0", act, level));
            v.push_back(inputs("mb1g32ic32ih14oc32oh14kh3ph1", act, level));
        }
        inputs_t first = inputs("mb1ic3ih30oc16oh15kh3sh2ph1", format_tag::nchw, level);
        first.dst = blocked;
        v.push_back(first);
        // Refusals: a channels-last src with a blocked dst, and a hint no register budget fits.
        inputs_t mismatch = inputs("mb1g32ic32ih14oc32oh14kh3ph1", blocked, level);
        mismatch.kind = conv_kernel_kind::direct;
        mismatch.src = format_tag::nhwc;
        v.push_back(mismatch);
        inputs_t bad_hint = inputs("mb2ic64ih14oc64oh14kh3ph1", blocked, level);
        bad_hint.hint.ur_w = 40;
        v.push_back(bad_hint);
    }
    return v;
}

} // namespace

TEST(ConvConfMemo, AnswersAsInitConf) {
    const memo_capacity_t cap(default_kernel_cache_capacity);
    const std::vector<inputs_t> set = problem_set();
    const conv_conf_memo_stats_t s0 = conv_conf_memo_stats();
    int refusals = 0;
    for (const inputs_t &in : set) {
        const std::string want = fresh(in);
        refusals += want.find("unimplemented") == 0;
        EXPECT_EQ(memo(in), want) << in.d.str(); // computed and kept
        EXPECT_EQ(memo(in), want) << in.d.str(); // served from the memo
    }
    EXPECT_EQ(refusals, 4); // the two refusals of each level are answered (and kept) too
    const conv_conf_memo_stats_t s1 = conv_conf_memo_stats();
    EXPECT_EQ(s1.misses - s0.misses, set.size());
    EXPECT_EQ(s1.hits - s0.hits, set.size());
    EXPECT_EQ(s1.size, set.size());
}

// Each input init_conf reads, changed alone, gets its own answer: the one init_conf gives for
// it, not one kept for other inputs.
TEST(ConvConfMemo, ChangedInputsAreNotServedAnotherAnswer) {
    const memo_capacity_t cap(default_kernel_cache_capacity);
    const machine_model_t ref;
    const machine_model_override_t pin(ref);
    inputs_t base = inputs("mb1ic512ih8oc512oh8kh3ph1", format_tag::nChw8c, isa::avx2);

    struct change_t {
        const char *what;
        inputs_t in;
        machine_model_t model;
    };
    std::vector<change_t> changes;
    auto add = [&](const char *what, auto &&edit) {
        change_t ch {what, base, ref};
        edit(ch.in, ch.model);
        changes.push_back(ch);
    };
    add("l2_bytes", [](inputs_t &, machine_model_t &m) { m.l2_bytes = 64 << 10; });
    add("l1d_bytes", [](inputs_t &, machine_model_t &m) { m.l1d_bytes = 4 << 20; });
    add("l2_bytes_per_cycle", [](inputs_t &, machine_model_t &m) { m.l2_bytes_per_cycle = 4; });
    add("level", [](inputs_t &in, machine_model_t &) {
        in.src = in.dst = format_tag::nChw16c;
        in.level = isa::avx512_core;
    });
    add("layout block", [](inputs_t &in, machine_model_t &) { in.src = in.dst = format_tag::nChw16c; });
    add("hint", [](inputs_t &in, machine_model_t &) { in.hint.ur_w = 1; });
    add("post-ops", [](inputs_t &in, machine_model_t &) { in.po.append_sum(0.5f); });
    add("sum scale", [](inputs_t &in, machine_model_t &) { in.po.append_sum(0.25f); });
    add("eltwise alg", [](inputs_t &in, machine_model_t &) { in.po.append_eltwise(eltwise_alg::elu, 0.5f); });
    add("eltwise alpha", [](inputs_t &in, machine_model_t &) { in.po.append_eltwise(eltwise_alg::elu, 0.25f); });
    add("bias", [](inputs_t &in, machine_model_t &) { in.d.with_bias = true; });
    add("mb", [](inputs_t &in, machine_model_t &) { in.d.mb = 2; });

    const std::string before = memo(base);
    ASSERT_EQ(before, fresh(base));
    std::vector<std::string> seen {before};
    for (const change_t &ch : changes) {
        std::string got, want;
        {
            const machine_model_override_t o(ch.model);
            got = memo(ch.in);
            want = fresh(ch.in);
        }
        EXPECT_EQ(got, want) << ch.what;
        // Each change gives a conf of its own, so a key that missed it would serve a kept one.
        for (const std::string &s : seen) EXPECT_NE(got, s) << ch.what << " does not change the conf";
        seen.push_back(got);
        // The change undone is served the first answer again.
        EXPECT_EQ(memo(base), before) << ch.what;
    }
    // The model changed back and forth (as machine_model_override_t does) on one problem:
    // the AVX-512 unit's width picks the blocking there.
    inputs_t zmm = inputs("mb2ic64ih56oc64oh56kh3ph1", format_tag::nChw16c, isa::avx512_core);
    machine_model_t full = ref;
    full.avx512.full_width = true;
    std::string split_conf, full_conf;
    for (int round = 0; round < 2; ++round) {
        split_conf = memo(zmm);
        EXPECT_EQ(split_conf, fresh(zmm));
        const machine_model_override_t o(full);
        full_conf = memo(zmm);
        EXPECT_EQ(full_conf, fresh(zmm));
    }
    EXPECT_NE(split_conf, full_conf);
}

TEST(ConvConfMemo, KeepsAtMostTheKernelCacheCapacity) {
    const std::vector<inputs_t> set = problem_set();
    {
        const memo_capacity_t cap(3);
        for (const inputs_t &in : set) EXPECT_EQ(memo(in), fresh(in)) << in.d.str();
        EXPECT_EQ(conv_conf_memo_stats().size, 3u);
        // The least recently used went first: the last three are still kept.
        const conv_conf_memo_stats_t s0 = conv_conf_memo_stats();
        for (std::size_t i = set.size() - 3; i < set.size(); ++i) EXPECT_EQ(memo(set[i]), fresh(set[i]));
        EXPECT_EQ(conv_conf_memo_stats().hits - s0.hits, 3u);
    }
    {
        // Capacity 0: caching off, every call runs init_conf and nothing is kept or counted.
        const memo_capacity_t cap(0);
        const conv_conf_memo_stats_t s0 = conv_conf_memo_stats();
        for (const inputs_t &in : set) EXPECT_EQ(memo(in), fresh(in)) << in.d.str();
        const conv_conf_memo_stats_t s1 = conv_conf_memo_stats();
        EXPECT_EQ(s1.size, 0u);
        EXPECT_EQ(s1.hits, s0.hits);
        EXPECT_EQ(s1.misses, s0.misses);
    }
}

// Threads asking for the same and for different inputs at once, while the memo is small
// enough to evict, all get init_conf's answers (the TSan build checks the locking).
TEST(ConvConfMemo, ThreadsGetTheAnswersOfInitConf) {
    const memo_capacity_t cap(5);
    const std::vector<inputs_t> set = problem_set();
    std::vector<std::string> want;
    for (const inputs_t &in : set) want.push_back(fresh(in));
    constexpr int n_threads = 4, rounds = 20;
    std::vector<int> mismatches(n_threads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < n_threads; ++t)
        threads.emplace_back([&, t] {
            for (int r = 0; r < rounds; ++r)
                for (std::size_t i = 0; i < set.size(); ++i) {
                    const std::size_t k = (i + static_cast<std::size_t>(t) * 3) % set.size();
                    if (memo(set[k]) != want[k]) ++mismatches[static_cast<std::size_t>(t)];
                }
        });
    for (std::thread &th : threads) th.join();
    for (int t = 0; t < n_threads; ++t) EXPECT_EQ(mismatches[static_cast<std::size_t>(t)], 0) << "thread " << t;
    EXPECT_LE(conv_conf_memo_stats().size, 5u);
}

// Ops created through the memo (the second creation of a shape) and with every cache off
// (capacity 0: init_conf and the JIT run again) have the same conf and write the same dst,
// under each ISA cap this CPU allows and each thread count.
TEST(ConvConfMemo, OpsFromTheMemoRunAsFreshOnes) {
    const isa_guard isa_reset;
    conv_desc d = parse_conv_desc("mb2ic32ih12oc48oh12kh1ph0");
    d.with_bias = true;
    post_ops po;
    po.append_eltwise(eltwise_alg::relu);
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (detected_isa() < level) continue;
        for (int nthr : {1, 2}) {
            set_max_isa(level);
            set_num_threads(nthr);
            auto run = [&](const conv_fwd &op) {
                const tensor src(op.src_desc()), wei(op.wei_desc()), bia(op.bia_desc()), dst(op.dst_desc());
                bdtest::fill_seeded(src, 1, -4, 4, true);
                bdtest::fill_seeded(wei, 2, -4, 4, true);
                bdtest::fill_seeded(bia, 3, -4, 4, true);
                op.execute({src, wei, bia, dst});
                return bdtest::logical_values(dst);
            };
            std::string fresh_info;
            std::vector<float> fresh_dst;
            {
                const memo_capacity_t off(0);
                const conv_fwd op(d, format_tag::any, format_tag::any, format_tag::any, po);
                fresh_info = op.impl_info();
                fresh_dst = run(op);
            }
            const memo_capacity_t on(default_kernel_cache_capacity);
            const conv_fwd first(d, format_tag::any, format_tag::any, format_tag::any, po);
            const conv_conf_memo_stats_t s0 = conv_conf_memo_stats();
            const conv_fwd second(d, format_tag::any, format_tag::any, format_tag::any, po);
            EXPECT_GT(conv_conf_memo_stats().hits, s0.hits) << "the second creation is not served by the memo";
            EXPECT_EQ(second.impl_info(), fresh_info);
            EXPECT_EQ(first.impl_info(), fresh_info);
            const std::vector<float> got = run(second);
            ASSERT_EQ(got.size(), fresh_dst.size());
            EXPECT_EQ(std::memcmp(got.data(), fresh_dst.data(), got.size() * sizeof(float)), 0)
                    << to_string(level) << " t" << nthr;
        }
    }
    reset_num_threads();
}
