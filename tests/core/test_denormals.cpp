// SPDX-License-Identifier: Apache-2.0
// The denormals mode (blockdnn/denormals.hpp) on every op kind and ISA: flush makes denormal
// inputs act as zeros and flushes denormal results; keep computes them as IEEE 754 says; the
// caller's MXCSR is exactly as it was after each execution (also when the caller had FTZ or DAZ
// set, and after a throw) and keeps its control bits through creation; the caller's rounding
// and exception masks change nothing; chunks on the pool's threads run in the op's mode and
// stream ops under their submitter's bits. BLOCKDNN_DENORMALS is tested in test_jit_env.cpp
// (read once per process).
#include <xmmintrin.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "core/fp_env.hpp"
#include "sched/parallel.hpp"
#include "common/ref_util.hpp"

using namespace blockdnn;
using namespace ref_test;

namespace {

constexpr unsigned ftz_daz = impl::mxcsr_ftz | impl::mxcsr_daz;
constexpr unsigned default_mxcsr = 0x1f80; // all exceptions masked, round to nearest

/// Input values of one run: seeded reals in [-1, 1) where every third element is a seeded
/// denormal (or, with zero_denormals, a zero in its place). The k-th call draws from seed + k,
/// so two fillers with one seed give the same inputs but for the denormals.
class filler {
public:
    filler(unsigned seed, bool zero_denormals) : seed_(seed), zero_(zero_denormals) {}
    std::vector<float> operator()(dim_t n) {
        std::vector<float> v = real_values(n, seed_ + calls_);
        std::mt19937 gen(seed_ + calls_++);
        std::uniform_int_distribution<int> bits(1, (1 << 23) - 1);
        for (std::size_t i = 0; i < v.size(); i += 3) {
            const float d = std::ldexp(static_cast<float>(bits(gen)), -149) * (i % 2 ? -1.f : 1.f);
            v[i] = zero_ ? 0.f : d;
        }
        return v;
    }

private:
    unsigned seed_, calls_ = 0;
    bool zero_;
};

/// Positive variances with the denormals of a filler kept out: a denormal variance would
/// reach 1 / sqrt(var + eps) only through an add, where it vanishes either way.
std::vector<float> positive(std::vector<float> v) {
    for (float &x : v) x = 0.5f + std::fabs(x);
    return v;
}

/// An op with its tensors made and filled: run() executes it, outputs() reads what it wrote.
struct prepared_t {
    std::function<void()> run;
    std::function<std::vector<float>()> outputs;
};

struct op_case_t {
    const char *name;
    std::function<prepared_t(filler &)> prepare;
};

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
    std::vector<float> all;
    for (const auto &p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

prepared_t conv_case(filler &fill) {
    conv_desc d;
    d.mb = 2, d.ic = 19, d.oc = 21, d.ih = d.iw = 9, d.kh = d.kw = 3, d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.with_bias = true;
    d.infer_dst_dims();
    auto op = std::make_shared<conv_fwd>(d, format_tag::nchw, format_tag::oihw, format_tag::nchw);
    const tensor src = make_tensor(d.src_dims(), format_tag::nchw, fill(d.mb * d.ic * 81));
    const tensor wei = make_tensor(d.wei_dims(false), format_tag::oihw, fill(d.oc * d.ic * 9));
    const tensor bia = make_tensor(d.bia_dims(), format_tag::x, fill(d.oc));
    const tensor dst(tensor_desc(d.dst_dims(), format_tag::nchw));
    return {[=] { op->execute(src, wei, bia, dst); }, [=] { return logical(dst); }};
}

prepared_t ip_case(filler &fill) {
    inner_product_desc d;
    d.mb = 3, d.ic = 37, d.oc = 29, d.with_bias = true;
    auto op = std::make_shared<inner_product_fwd>(d, format_tag::nc, format_tag::oi);
    const tensor src = make_tensor(d.src_dims(), format_tag::nc, fill(d.mb * d.ic));
    const tensor wei = make_tensor(d.wei_dims(), format_tag::oi, fill(d.oc * d.ic));
    const tensor bia = make_tensor(d.bia_dims(), format_tag::x, fill(d.oc));
    const tensor dst(tensor_desc(d.dst_dims(), format_tag::nc));
    return {[=] { op->execute(src, wei, bia, dst); }, [=] { return logical(dst); }};
}

prepared_t bnorm_case(filler &fill, bnorm_mode mode) {
    const dims_t dims = {2, 19, 5, 5};
    const bnorm_flags flags = bnorm_flags::use_scale | bnorm_flags::use_shift;
    auto op = std::make_shared<bnorm_fwd>(bnorm_desc {mode, tensor_desc(dims, format_tag::nChw16c), {}, 1e-5f, flags});
    const tensor src = make_tensor(dims, format_tag::nChw16c, fill(2 * 19 * 25));
    const tensor dst(tensor_desc(dims, format_tag::nChw16c));
    const bool training = mode == bnorm_mode::training;
    const tensor mean = make_tensor({19}, format_tag::x, fill(19));
    const tensor var = make_tensor({19}, format_tag::x, positive(fill(19)));
    const tensor scale = make_tensor({19}, format_tag::x, fill(19)), shift = make_tensor({19}, format_tag::x, fill(19));
    return {[=] {
                op->execute({src, dst, mean, var, scale, shift});
            },
            [=] {
                return training ? concat({logical(dst), logical(mean), logical(var)}) : logical(dst);
            }};
}

prepared_t bnorm_bwd_case(filler &fill) {
    const dims_t dims = {2, 19, 5, 5};
    const tensor_desc sd(dims, format_tag::nChw16c);
    auto op = std::make_shared<bnorm_bwd>(
            bnorm_bwd_desc {sd, {}, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift, false});
    const tensor src = make_tensor(dims, format_tag::nChw16c, fill(2 * 19 * 25));
    const tensor diff_dst = make_tensor(dims, format_tag::nChw16c, fill(2 * 19 * 25));
    const tensor_desc cd({19}, format_tag::x);
    const tensor diff_src(sd), diff_scale(cd), diff_shift(cd);
    const tensor mean = make_tensor({19}, format_tag::x, fill(19));
    const tensor var = make_tensor({19}, format_tag::x, positive(fill(19)));
    const tensor scale = make_tensor({19}, format_tag::x, fill(19));
    return {[=] {
                op->execute({src, diff_dst, diff_src, mean, var, scale, {}, diff_scale, diff_shift});
            },
            [=] {
                return concat({logical(diff_src), logical(diff_scale), logical(diff_shift)});
            }};
}

prepared_t rnn_case(filler &fill, rnn_cell cell) {
    rnn_desc d;
    d.cell = cell, d.t = 4, d.mb = 3, d.slc = 11, d.dhc = 13;
    auto op = std::make_shared<rnn_fwd>(d);
    auto filled = [&](const tensor_desc &td) { return make_tensor(td.dims(), td.tag(), fill(td.nelems())); };
    const tensor src = filled(op->src_layer_desc()), wl = filled(op->weights_layer_desc()),
                 wi = filled(op->weights_iter_desc()), b = filled(op->bias_desc());
    const tensor dst(op->dst_layer_desc());
    return {[=] {
                op->execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .bias = b, .dst_layer = dst});
            },
            [=] { return logical(dst); }};
}

prepared_t eltwise_case(filler &fill, eltwise_alg alg) {
    const tensor_desc d({2, 35, 3, 7}, format_tag::nChw16c);
    auto op = std::make_shared<eltwise_fwd>(alg, 0.5f, 0.25f, d);
    const tensor src = make_tensor(d.dims(), d.tag(), fill(d.nelems())), dst(d);
    return {[=] { op->execute(src, dst); }, [=] { return logical(dst); }};
}

prepared_t softmax_case(filler &fill) {
    const tensor_desc d({5, 37}, format_tag::nc);
    auto op = std::make_shared<softmax_fwd>(d, d, 1);
    const tensor src = make_tensor(d.dims(), d.tag(), fill(d.nelems())), dst(d);
    return {[=] { op->execute(src, dst); }, [=] { return logical(dst); }};
}

prepared_t binary_case(filler &fill, binary_alg alg) {
    const tensor_desc d0({2, 19, 3, 5}, format_tag::nchw), d1({1, 19, 1, 1}, format_tag::nchw);
    auto op = std::make_shared<binary_fwd>(alg, d0, d1, d0);
    const tensor a = make_tensor(d0.dims(), d0.tag(), fill(d0.nelems()));
    const tensor b = make_tensor(d1.dims(), d1.tag(), fill(d1.nelems()));
    const tensor dst(d0);
    return {[=] { op->execute(a, b, dst); }, [=] { return logical(dst); }};
}

prepared_t avg_pool_case(filler &fill) {
    pool_desc d;
    d.alg = pool_alg::avg_exclude_pad, d.mb = 2, d.ic = 19, d.ih = d.iw = 7, d.kh = d.kw = 3;
    d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.infer_dst_dims();
    auto op = std::make_shared<pool_fwd>(d, format_tag::nChw16c, format_tag::nChw16c);
    const tensor src = make_tensor(d.src_dims(), format_tag::nChw16c, fill(2 * 19 * 49));
    const tensor dst(tensor_desc(d.dst_dims(), format_tag::nChw16c));
    return {[=] { op->execute(src, dst); }, [=] { return logical(dst); }};
}

// Every op kind that computes (a reorder or a max pool only moves values, so it keeps the bits
// of a denormal in either mode).
const std::vector<op_case_t> &arithmetic_ops() {
    static const std::vector<op_case_t> ops = {
            {"conv", conv_case},
            {"inner_product", ip_case},
            {"bnorm_training", [](filler &f) { return bnorm_case(f, bnorm_mode::training); }},
            {"bnorm_inference", [](filler &f) { return bnorm_case(f, bnorm_mode::inference); }},
            {"bnorm_bwd", bnorm_bwd_case},
            {"lstm", [](filler &f) { return rnn_case(f, rnn_cell::lstm); }},
            {"gru", [](filler &f) { return rnn_case(f, rnn_cell::gru); }},
            {"eltwise_tanh", [](filler &f) { return eltwise_case(f, eltwise_alg::tanh); }},
            {"eltwise_gelu_erf", [](filler &f) { return eltwise_case(f, eltwise_alg::gelu_erf); }},
            {"eltwise_linear", [](filler &f) { return eltwise_case(f, eltwise_alg::linear); }},
            {"softmax", softmax_case},
            {"binary_add", [](filler &f) { return binary_case(f, binary_alg::add); }},
            {"binary_mul", [](filler &f) { return binary_case(f, binary_alg::mul); }},
            {"avg_pool", avg_pool_case},
    };
    return ops;
}

/// The ISA levels this CPU can run, each applied through set_max_isa while in scope.
std::vector<isa> usable_levels() {
    std::vector<isa> v;
    for (isa i : {isa::scalar, isa::avx2, isa::avx512_core})
        if (i <= detected_isa()) v.push_back(i);
    return v;
}

struct mode_guard {
    explicit mode_guard(denormals_mode m) { set_denormals_mode(m); }
    ~mode_guard() {
        reset_denormals_mode();
        reset_max_isa();
    }
};

// BLOCKDNN_VERBOSE on: ops time themselves in double on the caller's thread, outside the
// kernels' MXCSR scope.
bool verbose_timing() {
    const char *v = std::getenv("BLOCKDNN_VERBOSE");
    return v && *v && std::string(v) != "0";
}

/// Runs f() with the calling thread's MXCSR set to `caller` and returns the register as f left
/// it; the test's own MXCSR is put back afterwards, also when f throws.
unsigned mxcsr_after(unsigned caller, const std::function<void()> &f) {
    const impl::sched::mxcsr_guard test_mxcsr(caller);
    f();
    return _mm_getcsr();
}

bool any_denormal(const std::vector<float> &v) {
    for (float x : v)
        if (std::fpclassify(x) == FP_SUBNORMAL) return true;
    return false;
}

} // namespace

TEST(Denormals, ModeApi) {
    EXPECT_STREQ(to_string(denormals_mode::flush), "flush");
    EXPECT_STREQ(to_string(denormals_mode::keep), "keep");
    if (std::getenv("BLOCKDNN_DENORMALS") == nullptr) {
        EXPECT_EQ(get_denormals_mode(), denormals_mode::flush);
    }
    {
        const mode_guard keep(denormals_mode::keep);
        EXPECT_EQ(get_denormals_mode(), denormals_mode::keep);
        set_denormals_mode(denormals_mode::flush);
        EXPECT_EQ(get_denormals_mode(), denormals_mode::flush);
    }
    try {
        set_denormals_mode(static_cast<denormals_mode>(7));
        FAIL() << "no throw";
    } catch (const error &e) {
        EXPECT_EQ(e.code(), status::invalid_arguments);
        EXPECT_NE(std::string(e.what()).find("mode = 7"), std::string::npos) << e.what();
    }
}

// flush: denormal inputs give exactly the results of zeros in their place, and no result is
// denormal; on every op kind and every ISA the CPU has (the references included).
TEST(Denormals, FlushTreatsDenormalInputsAsZeros) {
    const mode_guard flush(denormals_mode::flush);
    for (isa level : usable_levels()) {
        set_max_isa(level);
        for (const op_case_t &c : arithmetic_ops()) {
            filler with(11, false), zeroed(11, true);
            const prepared_t a = c.prepare(with), b = c.prepare(zeroed);
            a.run();
            b.run();
            const std::vector<float> out = a.outputs();
            EXPECT_EQ(out, b.outputs()) << c.name << " on " << to_string(level);
            EXPECT_FALSE(any_denormal(out)) << c.name << " on " << to_string(level);
        }
    }
}

// Kernels round to nearest whatever the caller's rounding mode: each op kind gives the same
// bits under a caller rounding toward zero.
TEST(Denormals, ResultsDoNotDependOnTheCallersRounding) {
    const mode_guard flush(denormals_mode::flush);
    constexpr unsigned round_toward_zero = 3u << 13;
    for (const op_case_t &c : arithmetic_ops()) {
        filler fill_a(9, false), fill_b(9, false);
        const prepared_t a = c.prepare(fill_a), b = c.prepare(fill_b);
        a.run();
        (void)mxcsr_after(default_mxcsr | round_toward_zero, b.run);
        EXPECT_EQ(a.outputs(), b.outputs()) << c.name;
    }
}

// Kernels run with every exception masked: a caller that unmasks the precision exception (which
// nearly every float operation raises) is not trapped by them.
TEST(Denormals, KernelsDoNotTrapOnTheCallersUnmaskedExceptions) {
    if (verbose_timing()) GTEST_SKIP() << "BLOCKDNN_VERBOSE times ops on the caller's thread";
    constexpr unsigned precision_mask = 1u << 12;
    for (const op_case_t &c : arithmetic_ops()) {
        filler fill(13, false);
        const prepared_t p = c.prepare(fill);
        // A trap would end the process with SIGFPE.
        EXPECT_EQ(mxcsr_after(default_mxcsr & ~precision_mask, p.run), default_mxcsr & ~precision_mask) << c.name;
    }
}

// keep: 2^-70 * 2^-70 = 2^-140 is exact only as a denormal; flush gives 0.
TEST(Denormals, KeepComputesExactDenormalProducts) {
    const float tiny = std::ldexp(1.f, -70), product = std::ldexp(1.f, -140);
    ASSERT_EQ(std::fpclassify(product), FP_SUBNORMAL);
    const std::vector<std::pair<const char *, std::function<float()>>> products = {
            {"conv",
                    [&] {
                        conv_desc d;
                        d.ic = d.oc = 1, d.ih = d.iw = 1;
                        d.infer_dst_dims();
                        const conv_fwd op(d, format_tag::nchw, format_tag::oihw, format_tag::nchw);
                        const tensor s = make_tensor({1, 1, 1, 1}, format_tag::nchw, {tiny});
                        const tensor w = make_tensor({1, 1, 1, 1}, format_tag::oihw, {tiny}), dst(op.dst_desc());
                        op.execute(s, w, dst);
                        return dst.f32()[0];
                    }},
            {"inner_product",
                    [&] {
                        inner_product_desc d;
                        d.ic = d.oc = 1;
                        const inner_product_fwd op(d, format_tag::nc, format_tag::oi);
                        const tensor s = make_tensor({1, 1}, format_tag::nc, {tiny});
                        const tensor w = make_tensor({1, 1}, format_tag::oi, {tiny});
                        const tensor dst(tensor_desc({1, 1}, format_tag::nc));
                        op.execute(s, w, dst);
                        return dst.f32()[0];
                    }},
            {"binary_mul",
                    [&] {
                        const tensor_desc d({1, 16}, format_tag::nc);
                        const binary_fwd op(binary_alg::mul, d, d, d);
                        const tensor a = make_tensor({1, 16}, format_tag::nc, std::vector<float>(16, tiny)), dst(d);
                        op.execute(a, a, dst);
                        return dst.f32()[15];
                    }},
            {"eltwise_linear",
                    [&] {
                        const tensor_desc d({16}, format_tag::x);
                        const eltwise_fwd op(eltwise_alg::linear, tiny, 0.f, d);
                        const tensor a = make_tensor({16}, format_tag::x, std::vector<float>(16, tiny)), dst(d);
                        op.execute(a, dst);
                        return dst.f32()[15];
                    }},
    };
    for (isa level : usable_levels())
        for (const auto &[name, run] : products) {
            {
                const mode_guard keep(denormals_mode::keep);
                set_max_isa(level);
                EXPECT_EQ(run(), product) << name << " on " << to_string(level);
            }
            const mode_guard flush(denormals_mode::flush);
            set_max_isa(level);
            EXPECT_EQ(run(), 0.f) << name << " on " << to_string(level);
        }
}

// The caller's MXCSR, flags included, is what it was before each op's execution, whatever the
// caller's FTZ and DAZ and whatever the mode; creating the op leaves the control bits.
TEST(Denormals, CallersMxcsrIsRestoredAfterEveryOp) {
    if (verbose_timing()) GTEST_SKIP() << "BLOCKDNN_VERBOSE's timing may raise the precision flag";
    for (denormals_mode mode : {denormals_mode::flush, denormals_mode::keep}) {
        const mode_guard g(mode);
        for (const op_case_t &c : arithmetic_ops())
            for (unsigned caller : {default_mxcsr, default_mxcsr | impl::mxcsr_ftz, default_mxcsr | ftz_daz}) {
                filler fill(5, false);
                prepared_t p;
                const unsigned created = mxcsr_after(caller, [&] { p = c.prepare(fill); });
                EXPECT_EQ(created & ~impl::mxcsr_flags, caller) << c.name << " created in " << to_string(mode);
                EXPECT_EQ(mxcsr_after(caller, p.run), caller) << c.name << " in " << to_string(mode);
            }
    }
}

TEST(Denormals, CallersMxcsrIsRestoredAfterReorderAndHelpers) {
    const dims_t dims = {2, 19, 3, 5};
    const tensor src = make_tensor(dims, format_tag::nchw, real_values(2 * 19 * 15, 3));
    const tensor blocked(tensor_desc(dims, format_tag::nChw16c));
    const tensor mean = make_tensor({4}, format_tag::x, real_values(4, 1));
    const tensor var = make_tensor({4}, format_tag::x, positive(real_values(4, 2)));
    const tensor wei = make_tensor({4, 3, 1, 1}, format_tag::oihw, real_values(12, 3)), wei_out(wei.desc());
    const tensor bia_out(tensor_desc({4}, format_tag::x));
    const tensor run_mean = make_tensor({4}, format_tag::x, real_values(4, 4));
    const tensor run_var = make_tensor({4}, format_tag::x, positive(real_values(4, 5)));
    const tensor gates = make_tensor({3 * 4}, format_tag::x, real_values(12, 6));
    const tensor gru_bias(tensor_desc({1, 1, 3, 4}, format_tag::ldgo));
    const std::vector<std::pair<const char *, std::function<void()>>> calls = {
            {"reorder", [&] { reorder(src, blocked); }},
            {"to_dense", [&] { (void)to_dense(blocked); }},
            {"bnorm_fold_into_conv",
                    [&] { bnorm_fold_into_conv(wei, {}, mean, var, {}, {}, 1e-5f, wei_out, bia_out); }},
            {"bnorm_update_running_stats",
                    [&] { bnorm_update_running_stats(mean, var, 10, 0.1f, true, run_mean, run_var); }},
            {"rnn_import_bias",
                    [&] { rnn_import_bias(rnn_framework::pytorch, rnn_cell::gru, gates, gates, gru_bias, 0, 0); }},
    };
    for (const auto &[name, call] : calls)
        for (unsigned caller : {default_mxcsr, default_mxcsr | ftz_daz})
            EXPECT_EQ(mxcsr_after(caller, call), caller) << name;
}

// A throw, at validation or out of a running implementation, leaves the caller's MXCSR as it was.
TEST(Denormals, CallersMxcsrIsRestoredAfterAThrow) {
    const tensor_desc d({16}, format_tag::x);
    const eltwise_fwd op(eltwise_alg::relu, 0.f, 0.f, d);
    const tensor src(d), wrong(tensor_desc({17}, format_tag::x));
    bool threw = false;
    const unsigned after_validation = mxcsr_after(default_mxcsr | impl::mxcsr_ftz, [&] {
        try {
            op.execute(src, wrong);
        } catch (const error &) {
            threw = true;
        }
    });
    EXPECT_TRUE(threw);
    EXPECT_EQ(after_validation, default_mxcsr | impl::mxcsr_ftz);

    threw = false;
    const unsigned after_kernel = mxcsr_after(default_mxcsr, [&] {
        try {
            impl::run_impl("test", denormals_mode::flush, [] {
                EXPECT_EQ(_mm_getcsr() & ftz_daz, ftz_daz);
                throw std::runtime_error("kernel failed");
            });
        } catch (const std::runtime_error &) {
            threw = true;
        }
    });
    EXPECT_TRUE(threw);
    EXPECT_EQ(after_kernel, default_mxcsr);
}

/// set_num_threads(n) for its lifetime.
struct threads_guard {
    explicit threads_guard(int n) { set_num_threads(n); }
    ~threads_guard() { reset_num_threads(); }
};

// Chunks of parallel_for run with the control bits of the op that split the work, on the
// caller's thread and on the pool's.
TEST(Denormals, PoolThreadsRunInTheOpsMode) {
    const threads_guard two(2);
    for (denormals_mode mode : {denormals_mode::flush, denormals_mode::keep}) {
        std::mutex m;
        std::set<unsigned> seen;
        std::set<std::thread::id> threads;
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<bool> caller_ran {false}, pool_ran {false};
        // Each thread's first chunk waits until the other has taken one too: the pool's thread
        // steals one as soon as it runs, and the caller takes one while the pool's waits, so
        // neither can run all 64 while the other is descheduled (the bound only keeps a
        // broken pool from hanging the test).
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        impl::run_impl("test", mode, [&] {
            impl::parallel_for(64, 1, [&](dim_t, dim_t) {
                const unsigned bits = _mm_getcsr() & ftz_daz;
                (std::this_thread::get_id() == caller ? caller_ran : pool_ran) = true;
                while (!(caller_ran && pool_ran) && std::chrono::steady_clock::now() < give_up)
                    std::this_thread::yield();
                const std::lock_guard<std::mutex> lock(m);
                seen.insert(bits);
                threads.insert(std::this_thread::get_id());
            });
        });
        EXPECT_EQ(seen, std::set<unsigned> {mode == denormals_mode::flush ? ftz_daz : 0u}) << to_string(mode);
        EXPECT_EQ(threads.size(), 2u) << "a chunk ran on the pool's thread";
    }
}

// Work queued on a stream runs with the submitter's control bits, also on pool threads that
// were started inside a flushing op (a thread starts with its creator's MXCSR).
TEST(Denormals, StreamOpsRunWithTheSubmittersBits) {
    const mode_guard flush(denormals_mode::flush);
    const threads_guard two(2); // the pool restarts, inside the op below
    filler fill(7, false);
    conv_case(fill).run();
    for (unsigned caller : {default_mxcsr, default_mxcsr | ftz_daz}) {
        std::vector<unsigned> seen(64);
        std::atomic<int> on_pool {0};
        const std::thread::id me = std::this_thread::get_id();
        (void)mxcsr_after(caller, [&] {
            stream s;
            for (unsigned &bits : seen)
                s.submit([&bits, &on_pool, me] {
                    bits = _mm_getcsr() & ftz_daz;
                    if (std::this_thread::get_id() != me) ++on_pool;
                });
            // Leave every op to the pool's thread: synchronize would run them here.
            while (!s.query()) std::this_thread::yield();
            s.synchronize();
        });
        EXPECT_EQ(seen, std::vector<unsigned>(64, caller & ftz_daz)) << std::hex << caller;
        EXPECT_EQ(on_pool.load(), 64) << "ops ran on the pool's thread";
    }
}
