// SPDX-License-Identifier: Apache-2.0
// The public ops on streams (issue 22): every ordered pair of op kinds, the second reading what
// the first wrote, queued under one stream_scope, across two streams joined by events, and on
// streams with thread budgets, equals the synchronous result bit for bit; the reorder-then-conv
// race the issue found; the budget API; argument errors at the call; lifetimes of queued work;
// errors at synchronize. Nothing here measures time; a gate that waits on the test thread gives
// up after a generous timeout and fails the test instead of hanging.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "sched/parallel.hpp"
#include "common/test_util.hpp"

using namespace blockdnn;

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool under_tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool under_tsan = true;
#else
constexpr bool under_tsan = false;
#endif
#else
constexpr bool under_tsan = false;
#endif

// Rounds (each ends in a synchronize) and links (A then B) queued per round. TSan runs the
// scheduler and the C++ kernels many times slower, so it queues fewer links.
constexpr int rounds = 6;
constexpr int reps = under_tsan ? 6 : 10;

constexpr auto patience = std::chrono::seconds(30);

// Holds a stream at its head until open(), so that everything queued behind it is still queued
// when the caller returns from each call: an op that ran inline instead of queueing would then
// read inputs not yet written. Declare it before the streams it holds, so it outlives them.
class gate_t {
public:
    void hold(stream &s) {
        s.submit([this] {
            const auto deadline = std::chrono::steady_clock::now() + patience;
            while (!go_.load(std::memory_order_acquire))
                if (std::chrono::steady_clock::now() > deadline) return; // ok_ stays false: the test fails
                else std::this_thread::yield();
            ok_.store(true, std::memory_order_release);
        });
        held_ = true;
    }
    void open() { go_.store(true, std::memory_order_release); }
    // True if the gate was not held, or was opened in time.
    bool ok() const { return !held_ || ok_.load(std::memory_order_acquire); }

private:
    std::atomic<bool> go_ {false}, ok_ {false};
    bool held_ = false;
};

// The thread count for a scope, then back to BLOCKDNN_NUM_THREADS or the core count.
struct threads_guard {
    explicit threads_guard(int n) { set_num_threads(n); }
    ~threads_guard() { reset_num_threads(); }
    threads_guard(const threads_guard &) = delete;
    threads_guard &operator=(const threads_guard &) = delete;
};

tensor seeded(const tensor_desc &d, unsigned seed) {
    tensor t(d);
    fill_random(t, seed);
    return t;
}

// Seeded values in [0.5, 1.5): variances.
tensor positive(const tensor_desc &d, unsigned seed) {
    tensor t = seeded(d, seed);
    for (dim_t i = 0; i < d.nelems_padded(); ++i) t.f32()[i] = 1.f + 0.5f * t.f32()[i];
    return t;
}

// Bitwise equality of two tensors of one descriptor; the message names the first difference.
::testing::AssertionResult same_bits(const tensor &got, const tensor &want) {
    if (got.desc() != want.desc())
        return ::testing::AssertionFailure() << "descs differ: " << got.desc().str() << " vs " << want.desc().str();
    const dim_t n = want.desc().nelems_padded();
    if (std::memcmp(got.data(), want.data(), want.desc().size_bytes()) == 0) return ::testing::AssertionSuccess();
    dim_t first = -1, count = 0;
    for (dim_t i = 0; i < n; ++i)
        if (std::memcmp(got.f32() + i, want.f32() + i, sizeof(float)) != 0) {
            if (first < 0) first = i;
            ++count;
        }
    return ::testing::AssertionFailure() << count << " of " << n << " elements differ, first at " << first << ": "
                                         << got.f32()[first] << " vs " << want.f32()[first];
}

// ---- the op kinds ------------------------------------------------------------------------------
// Every kind reads one tensor and writes one, each of 1152 elements without padding, so any
// kind's output can feed any kind's input: as it is when the descriptors match, else the same
// memory seen in the reader's descriptor (the order of the two ops matters all the same).

enum class kind_id {
    conv,
    bnorm_fwd_inference,
    bnorm_fwd_training,
    bnorm_bwd,
    lstm,
    eltwise,
    pool,
    inner_product,
    softmax,
    binary,
    reorder,
    to_blocked,
    to_dense,
};

constexpr kind_id all_kinds[] = {kind_id::conv, kind_id::bnorm_fwd_inference, kind_id::bnorm_fwd_training,
        kind_id::bnorm_bwd, kind_id::lstm, kind_id::eltwise, kind_id::pool, kind_id::inner_product, kind_id::softmax,
        kind_id::binary, kind_id::reorder, kind_id::to_blocked, kind_id::to_dense};

const char *name_of(kind_id k) {
    switch (k) {
    case kind_id::conv: return "conv";
    case kind_id::bnorm_fwd_inference: return "bnorm_fwd_inference";
    case kind_id::bnorm_fwd_training: return "bnorm_fwd_training";
    case kind_id::bnorm_bwd: return "bnorm_bwd";
    case kind_id::lstm: return "lstm";
    case kind_id::eltwise: return "eltwise";
    case kind_id::pool: return "pool";
    case kind_id::inner_product: return "inner_product";
    case kind_id::softmax: return "softmax";
    case kind_id::binary: return "binary";
    case kind_id::reorder: return "reorder";
    case kind_id::to_blocked: return "to_blocked";
    case kind_id::to_dense: return "to_dense";
    }
    return "?";
}

// gtest prints parameters with this.
void PrintTo(kind_id k, std::ostream *os) { *os << name_of(k); }

// An op, its weights and other operands, ready to run on the current stream.
struct op_kind {
    tensor_desc in, out;
    // Calls the op on src, writing dst, on the current stream; returns the tensor written: dst,
    // or a new one (to_blocked, to_dense). Operands other than src and dst are the kind's own.
    std::function<tensor(const tensor &src, const tensor &dst)> run;
};

const dims_t act_dims {2, 16, 6, 6};

tensor_desc act(format_tag tag) { return tensor_desc(act_dims, tag); }

// nChw16c with AVX-512, nChw8c else: the layout the JIT kernels take.
format_tag blocked() { return blocked_tag_for(act(format_tag::nchw)); }

std::unique_ptr<op_kind> make_kind(kind_id id) {
    auto k = std::make_unique<op_kind>();
    const format_tag blk = blocked();
    const tensor_desc stat({act_dims[1]}, format_tag::x);
    switch (id) {
    case kind_id::conv: {
        conv_desc d;
        d.mb = 2, d.ic = d.oc = 16, d.ih = d.iw = 6, d.kh = d.kw = 3;
        d.ph = d.pw = d.ph_r = d.pw_r = 1;
        d.with_bias = true;
        d.infer_dst_dims();
        const conv_fwd op(d, blk, blocked_tag_for(tensor_desc(d.wei_dims(false), format_tag::oihw)), blk);
        k->in = op.src_desc(), k->out = op.dst_desc();
        k->run = [op, wei = seeded(op.wei_desc(), 101), bia = seeded(op.bia_desc(), 102)](
                         const tensor &src, const tensor &dst) {
            op.execute(src, wei, bia, dst);
            return dst;
        };
        break;
    }
    case kind_id::bnorm_fwd_inference:
    case kind_id::bnorm_fwd_training: {
        const bool training = id == kind_id::bnorm_fwd_training;
        const bnorm_fwd op({training ? bnorm_mode::training : bnorm_mode::inference, act(blk), {}, 1e-5f,
                bnorm_flags::use_scale | bnorm_flags::use_shift | bnorm_flags::fuse_relu});
        k->in = k->out = act(blk);
        // Training writes mean and variance: to the kind's own tensors.
        k->run = [op, mean = training ? tensor(stat) : seeded(stat, 111),
                         var = training ? tensor(stat) : positive(stat, 112), scale = seeded(stat, 113),
                         shift = seeded(stat, 114)](const tensor &src, const tensor &dst) {
            op.execute({src, dst, mean, var, scale, shift});
            return dst;
        };
        break;
    }
    case kind_id::bnorm_bwd: {
        const bnorm_bwd op({act(blk), {}, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift, false});
        k->in = k->out = act(blk);
        k->run = [op, src = seeded(act(blk), 121), mean = seeded(stat, 122), var = positive(stat, 123),
                         scale = seeded(stat, 124), diff_scale = tensor(stat),
                         diff_shift = tensor(stat)](const tensor &diff_dst, const tensor &diff_src) {
            op.execute({.src = src,
                    .diff_dst = diff_dst,
                    .diff_src = diff_src,
                    .mean = mean,
                    .variance = var,
                    .scale = scale,
                    .diff_scale = diff_scale,
                    .diff_shift = diff_shift});
            return diff_src;
        };
        break;
    }
    case kind_id::lstm: {
        rnn_desc d;
        d.cell = rnn_cell::lstm;
        d.t = 6, d.mb = 12, d.slc = d.dhc = 16;
        const rnn_fwd op(d);
        k->in = op.src_layer_desc(), k->out = op.dst_layer_desc();
        k->run = [op, wl = seeded(op.weights_layer_desc(), 131), wi = seeded(op.weights_iter_desc(), 132),
                         b = seeded(op.bias_desc(), 133)](const tensor &src, const tensor &dst) {
            op.execute({.src_layer = src, .weights_layer = wl, .weights_iter = wi, .bias = b, .dst_layer = dst});
            return dst;
        };
        break;
    }
    case kind_id::eltwise: {
        const eltwise_fwd op(eltwise_alg::tanh, 0.f, 0.f, act(format_tag::nchw));
        k->in = k->out = act(format_tag::nchw);
        k->run = [op](const tensor &src, const tensor &dst) {
            op.execute(src, dst);
            return dst;
        };
        break;
    }
    case kind_id::pool: {
        pool_desc d;
        d.alg = pool_alg::avg_exclude_pad;
        d.mb = 2, d.ic = 16, d.ih = d.iw = 6, d.kh = d.kw = 3;
        d.ph = d.pw = d.ph_r = d.pw_r = 1;
        d.infer_dst_dims();
        const pool_fwd op(d, blk, blk);
        k->in = op.src_desc(), k->out = op.dst_desc();
        k->run = [op](const tensor &src, const tensor &dst) {
            op.execute(src, dst);
            return dst;
        };
        break;
    }
    case kind_id::inner_product: {
        inner_product_desc d;
        d.mb = 72, d.ic = d.oc = 16;
        d.with_bias = true;
        const inner_product_fwd op(d, format_tag::nc, format_tag::oi);
        k->in = op.src_desc(), k->out = op.dst_desc();
        k->run = [op, wei = seeded(op.wei_desc(), 141), bia = seeded(op.bia_desc(), 142)](
                         const tensor &src, const tensor &dst) {
            op.execute(src, wei, bia, dst);
            return dst;
        };
        break;
    }
    case kind_id::softmax: {
        const softmax_fwd op(act(format_tag::nchw), act(format_tag::nchw), 1);
        k->in = k->out = act(format_tag::nchw);
        k->run = [op](const tensor &src, const tensor &dst) {
            op.execute(src, dst);
            return dst;
        };
        break;
    }
    case kind_id::binary: {
        const tensor_desc bias({1, act_dims[1], 1, 1}, format_tag::nchw);
        const binary_fwd op(binary_alg::add, act(blk), bias, act(blk));
        k->in = k->out = act(blk);
        k->run = [op, src1 = seeded(bias, 151)](const tensor &src, const tensor &dst) {
            op.execute(src, src1, dst);
            return dst;
        };
        break;
    }
    case kind_id::reorder:
        k->in = act(format_tag::nchw), k->out = act(format_tag::nhwc);
        k->run = [](const tensor &src, const tensor &dst) {
            reorder(src, dst);
            return dst;
        };
        break;
    case kind_id::to_blocked:
        k->in = act(format_tag::nchw), k->out = act(blk);
        k->run = [](const tensor &src, const tensor &) { return to_blocked(src); };
        break;
    case kind_id::to_dense:
        k->in = act(blk), k->out = act(format_tag::nchw);
        k->run = [](const tensor &src, const tensor &) { return to_dense(src); };
        break;
    }
    return k;
}

// t as a tensor of descriptor d: t itself, or its memory seen in d (which has as many elements).
tensor as(const tensor &t, const tensor_desc &d) { return t.desc() == d ? t : tensor(d, t.data()); }

// ---- chains: A then B ----------------------------------------------------------------------------

// What the links of a chain wrote, and every tensor they use, kept until their streams finish
// (the views B reads do not own their memory).
struct chain_t {
    std::vector<tensor> ys;
    std::vector<tensor> held;
};

// Calls `nlinks` links on the current streams: A on sa reads ins[r % 2] and writes one shared x
// (so link r + 1's A overwrites what link r's B reads), then B on sb reads x and writes y_r. With
// two streams, B waits on an event of sa, and sa's next A on an event of sb. Null streams: the
// default stream, on which the links run at once.
chain_t call_chain(
        const op_kind &a, const op_kind &b, const std::array<tensor, 2> &ins, stream *sa, stream *sb, int nlinks) {
    chain_t c;
    const tensor x(a.out);
    c.held.push_back(x);
    for (int r = 0; r < nlinks; ++r) {
        tensor xa;
        {
            std::optional<stream_scope> on;
            if (sa) on.emplace(*sa);
            xa = a.run(ins[r % 2], x);
        }
        if (sa != sb) sb->wait(sa->record());
        tensor ya;
        {
            std::optional<stream_scope> on;
            if (sb) on.emplace(*sb);
            ya = b.run(as(xa, b.in), tensor(b.out));
        }
        if (sa != sb) sa->wait(sb->record());
        c.held.push_back(xa);
        c.ys.push_back(ya);
    }
    return c;
}

std::array<tensor, 2> inputs_for(const op_kind &a) { return {seeded(a.in, 1), seeded(a.in, 2)}; }

// B(A(ins[k])) for k = 0, 1, on the default stream.
std::array<tensor, 2> expected(const op_kind &a, const op_kind &b, const std::array<tensor, 2> &ins) {
    const chain_t c = call_chain(a, b, ins, nullptr, nullptr, 2);
    return {c.ys[0], c.ys[1]};
}

// Expects every link's y to equal the synchronous result for its input.
void expect_chain(const chain_t &c, const std::array<tensor, 2> &want, const std::string &where) {
    for (std::size_t r = 0; r < c.ys.size(); ++r)
        if (!same_bits(c.ys[r], want[r % 2])) {
            ADD_FAILURE() << where << ", link " << r << ": " << same_bits(c.ys[r], want[r % 2]).message();
            return; // one message per chain
        }
}

using pair_t = std::tuple<kind_id, kind_id>;

// Each test runs with 3 threads (more than a small machine has cores, so queued work, the pool
// and the caller interleave), restored afterwards.
class StreamPairs : public ::testing::TestWithParam<pair_t> {
protected:
    void SetUp() override {
        set_num_threads(3);
        a_ = make_kind(std::get<0>(GetParam()));
        b_ = make_kind(std::get<1>(GetParam()));
        ins_ = inputs_for(*a_);
        want_ = expected(*a_, *b_, ins_);
    }
    void TearDown() override { reset_num_threads(); }

    std::unique_ptr<op_kind> a_, b_;
    std::array<tensor, 2> ins_;
    std::array<tensor, 2> want_;
};

std::string pair_name(const ::testing::TestParamInfo<pair_t> &i) {
    return std::string(name_of(std::get<0>(i.param))) + "_then_" + name_of(std::get<1>(i.param));
}

} // namespace

// A then B under one stream_scope, several links per synchronize; every other round the stream
// is held until all links are queued. In the last round the ops (with their weights and other
// operands) are destroyed before the queued work runs.
TEST_P(StreamPairs, OneStream) {
    for (int round = 0; round < rounds; ++round) {
        gate_t gate;
        stream s;
        if (round % 2 == 0) gate.hold(s);
        const chain_t c = call_chain(*a_, *b_, ins_, &s, &s, reps);
        if (round == rounds - 1) a_.reset(), b_.reset();
        gate.open();
        s.synchronize();
        EXPECT_TRUE(gate.ok());
        expect_chain(c, want_, "round " + std::to_string(round));
    }
}

// A on s1, then B on s2 after an event of s1 (and the next A on s1 after an event of s2).
TEST_P(StreamPairs, TwoStreamsJoinedByEvents) {
    for (int round = 0; round < rounds; ++round) {
        gate_t gate;
        stream s1, s2;
        if (round % 2 == 0) gate.hold(s1);
        const chain_t c = call_chain(*a_, *b_, ins_, &s1, &s2, reps);
        if (round == rounds - 1) a_.reset(), b_.reset();
        gate.open();
        s2.synchronize();
        s1.synchronize();
        EXPECT_TRUE(gate.ok());
        expect_chain(c, want_, "round " + std::to_string(round));
    }
}

// On streams with budgets 1 and 2, one without, and the two of make_streams(2), with 2 and 4
// threads: each op splits its loops for its stream's share, and the results equal those of
// the default stream with 3 threads, bit for bit (the split never changes a result).
TEST_P(StreamPairs, ThreadBudgets) {
    for (int threads : {2, 4}) {
        const threads_guard g(threads);
        const std::string at = std::to_string(threads) + " threads";
        expect_chain(call_chain(*a_, *b_, ins_, nullptr, nullptr, 2), want_, at + ", default stream");
        for (int budget : {1, 2, 0}) {
            gate_t gate;
            stream s(stream_options {.threads = budget});
            gate.hold(s);
            const chain_t c = call_chain(*a_, *b_, ins_, &s, &s, reps);
            gate.open();
            s.synchronize();
            EXPECT_TRUE(gate.ok());
            expect_chain(c, want_, at + ", budget " + std::to_string(budget));
        }
        gate_t gate;
        auto ss = make_streams(2);
        gate.hold(*ss[0]);
        const chain_t c = call_chain(*a_, *b_, ins_, ss[0].get(), ss[1].get(), reps);
        gate.open();
        ss[1]->synchronize();
        ss[0]->synchronize();
        EXPECT_TRUE(gate.ok());
        expect_chain(c, want_, at + ", make_streams(2)");
    }
}

INSTANTIATE_TEST_SUITE_P(AllPairs, StreamPairs,
        ::testing::Combine(::testing::ValuesIn(all_kinds), ::testing::ValuesIn(all_kinds)), pair_name);

namespace {

// The issue's program: mb 8, 64 -> 64 3x3 on 56x56 (pad 1), the nchw src reordered to the
// blocked layout, then the conv, both under one stream_scope (smaller under TSan).
struct issue_conv_t {
    conv_desc d;
    tensor x;
    std::unique_ptr<conv_fwd> conv;

    explicit issue_conv_t(dim_t mb) {
        d.mb = mb, d.ic = d.oc = 64, d.ih = d.iw = 56, d.kh = d.kw = 3;
        d.ph = d.pw = d.ph_r = d.pw_r = 1;
        d.with_bias = true;
        d.infer_dst_dims();
        x = seeded(tensor_desc(d.src_dims(), format_tag::nchw), 201);
        const tensor wei = seeded(tensor_desc(d.wei_dims(false), format_tag::oihw), 202);
        const tensor bia = seeded(tensor_desc(d.bia_dims(), format_tag::x), 203);
        conv = std::make_unique<conv_fwd>(d, blocked_tag_for(x.desc()), reorder(wei, blocked_tag_for(wei.desc())), bia,
                blocked_tag_for(x.desc()));
    }
    // reorder(x, xb); conv(xb) -> y, on the current stream.
    void call(const tensor &xb, const tensor &y) const {
        reorder(x, xb);
        conv->execute(xb, y);
    }
};

} // namespace

TEST(StreamOps, ReorderThenConvFromTheIssue) {
    const threads_guard g(3);
    const issue_conv_t p(under_tsan ? 2 : 8);
    const tensor want(p.conv->dst_desc());
    p.call(tensor(p.conv->src_desc()), want);
    for (int i = 0; i < (under_tsan ? 10 : 20); ++i) {
        const tensor xb(p.conv->src_desc()), y(p.conv->dst_desc());
        stream s;
        {
            stream_scope on(s);
            p.call(xb, y);
        }
        s.synchronize();
        ASSERT_TRUE(same_bits(y, want)) << "run " << i;
    }
}

namespace {

// A problem large enough that its loops split into many chunks: call() runs it on the current
// stream, writing fresh tensors, and returns them (once the stream has run it, its results).
struct large_problem_t {
    const char *name;
    std::function<std::vector<tensor>()> call;
};

std::vector<large_problem_t> large_problems() {
    const dim_t mb = under_tsan ? 2 : 8;
    std::vector<large_problem_t> v;
    auto conv = std::make_shared<issue_conv_t>(mb);
    v.push_back({"reorder then conv", [conv] {
                     const tensor xb(conv->conv->src_desc()), y(conv->conv->dst_desc());
                     conv->call(xb, y);
                     return std::vector<tensor> {y};
                 }});
    // Training statistics: sums over mb and the spatial points, combined from chunks.
    const tensor_desc act_desc({mb, 64, 28, 28}, blocked_tag_for(tensor_desc({mb, 64, 28, 28}, format_tag::nchw)));
    const tensor_desc stat({64}, format_tag::x);
    const bnorm_fwd bn({bnorm_mode::training, act_desc, {}, 1e-5f, bnorm_flags::use_scale | bnorm_flags::use_shift});
    v.push_back({"bnorm_fwd training",
            [bn, src = seeded(act_desc, 301), scale = seeded(stat, 302), shift = seeded(stat, 303), act_desc, stat] {
                const tensor dst(act_desc), mean(stat), var(stat);
                bn.execute({src, dst, mean, var, scale, shift});
                return std::vector<tensor> {dst, mean, var};
            }});
    rnn_desc rd;
    rd.cell = rnn_cell::lstm;
    rd.t = 20, rd.mb = mb, rd.slc = rd.dhc = 128;
    const rnn_fwd lstm(rd);
    v.push_back({"lstm",
            [lstm, src = seeded(lstm.src_layer_desc(), 311), wl = seeded(lstm.weights_layer_desc(), 312),
                    wi = seeded(lstm.weights_iter_desc(), 313), b = seeded(lstm.bias_desc(), 314)] {
                const tensor dst(lstm.dst_layer_desc()), h(lstm.dst_iter_desc()), c(lstm.dst_iter_desc());
                lstm.execute({.src_layer = src,
                        .weights_layer = wl,
                        .weights_iter = wi,
                        .bias = b,
                        .dst_layer = dst,
                        .dst_iter = h,
                        .dst_iter_c = c});
                return std::vector<tensor> {dst, h, c};
            }});
    inner_product_desc id;
    id.mb = 8 * mb, id.ic = 512, id.oc = 256;
    id.with_bias = true;
    const inner_product_fwd ip(id, format_tag::nc, format_tag::oi);
    v.push_back({"inner_product",
            [ip, src = seeded(ip.src_desc(), 321), wei = seeded(ip.wei_desc(), 322), bia = seeded(ip.bia_desc(), 323)] {
                const tensor dst(ip.dst_desc());
                ip.execute(src, wei, bia, dst);
                return std::vector<tensor> {dst};
            }});
    const tensor_desc logits({8 * mb, 1000}, format_tag::nc);
    const softmax_fwd sm(logits, logits, 1);
    v.push_back({"softmax", [sm, src = seeded(logits, 331), logits] {
                     const tensor dst(logits);
                     sm.execute(src, dst);
                     return std::vector<tensor> {dst};
                 }});
    return v;
}

} // namespace

// On streams with budgets 1, 2 and none, at 2 and 4 threads, each larger problem's results
// (bnorm's statistics included) equal the default stream's with 3 threads, bit for bit: the
// fixed chunking holds per stream.
TEST(StreamOps, BudgetsNeverChangeResultsOfLargerProblems) {
    std::vector<large_problem_t> problems;
    std::vector<std::vector<tensor>> want;
    {
        const threads_guard g(3);
        problems = large_problems();
        for (const auto &p : problems) want.push_back(p.call());
    }
    for (int threads : {2, 4}) {
        const threads_guard g(threads);
        for (int budget : {1, 2, 0}) {
            stream s(stream_options {.threads = budget});
            std::vector<std::vector<tensor>> got;
            {
                stream_scope on(s);
                for (const auto &p : problems) got.push_back(p.call());
            }
            s.synchronize();
            for (std::size_t i = 0; i < problems.size(); ++i)
                for (std::size_t k = 0; k < want[i].size(); ++k)
                    EXPECT_TRUE(same_bits(got[i][k], want[i][k]))
                            << problems[i].name << ", output " << k << ", " << threads << " threads, budget " << budget;
        }
    }
}

// ---- the budget API --------------------------------------------------------------------------

TEST(StreamBudgets, ThreadsOutsideTheRangeThrow) {
    expect_error(status::invalid_arguments, {"stream_options::threads", "-1"},
            [] { stream s(stream_options {.threads = -1}); });
    expect_error(status::invalid_arguments, {"stream_options::threads", "1025"},
            [] { stream s(stream_options {.threads = 1025}); });
    stream s0(stream_options {.threads = 0}), s1024(stream_options {.threads = 1024}); // the bounds are fine
    EXPECT_EQ(s0.threads(), get_num_threads());
    EXPECT_EQ(s1024.threads(), get_num_threads());
}

TEST(StreamBudgets, MakeStreamsNOutsideTheRangeThrows) {
    expect_error(status::invalid_arguments, {"make_streams", "n = 0"}, [] { make_streams(0); });
    expect_error(status::invalid_arguments, {"make_streams", "n = -3"}, [] { make_streams(-3); });
    expect_error(status::invalid_arguments, {"make_streams", "n = 1025"}, [] { make_streams(1025); });
}

TEST(StreamBudgets, MakeStreamsSharesOutTheThreadsEvenly) {
    const threads_guard g(5);
    auto threads_of = [](int n) {
        std::vector<int> v;
        for (const auto &s : make_streams(n)) v.push_back(s->threads());
        return v;
    };
    EXPECT_EQ(threads_of(1), (std::vector<int> {5}));
    EXPECT_EQ(threads_of(2), (std::vector<int> {3, 2}));
    EXPECT_EQ(threads_of(3), (std::vector<int> {2, 2, 1}));
    EXPECT_EQ(threads_of(5), (std::vector<int> {1, 1, 1, 1, 1}));
    EXPECT_EQ(threads_of(7), (std::vector<int>(7, 1)));
    auto ss = make_streams(2); // the streams work
    std::atomic<int> n {0};
    for (auto &s : ss) s->submit([&] { n.fetch_add(1); });
    for (auto &s : ss) s->synchronize();
    EXPECT_EQ(n.load(), 2);
}

TEST(StreamBudgets, ThreadsCapAtTheLibrarysThreads) {
    const threads_guard g(5);
    stream s1(stream_options {.threads = 1}), s3(stream_options {.threads = 3}), s8(stream_options {.threads = 8}), all;
    EXPECT_EQ(s1.threads(), 1);
    EXPECT_EQ(s3.threads(), 3);
    EXPECT_EQ(s8.threads(), 5);
    EXPECT_EQ(all.threads(), 5);
    EXPECT_EQ(default_stream().threads(), 5);
    set_num_threads(2); // the cap follows the count
    EXPECT_EQ(s1.threads(), 1);
    EXPECT_EQ(s3.threads(), 2);
    EXPECT_EQ(all.threads(), 2);
}

// Inside an op of a stream, parallel_max_threads() is the stream's share, also inside the
// chunks of a loop the op starts (on whichever thread runs them); outside, the whole pool.
TEST(StreamBudgets, ParallelMaxThreadsInsideAnOpIsTheBudget) {
    const threads_guard g(5);
    EXPECT_EQ(impl::parallel_max_threads(), 5);
    for (int budget : {1, 2, 0}) {
        stream s(stream_options {.threads = budget});
        int in_op = -1;
        std::atomic<int> lo {1 << 20}, hi {-1};
        s.submit([&] {
            in_op = impl::parallel_max_threads();
            impl::parallel_for(64, 1, [&](dim_t, dim_t) {
                const int t = impl::parallel_max_threads();
                int v = lo.load();
                while (t < v && !lo.compare_exchange_weak(v, t)) {}
                v = hi.load();
                while (t > v && !hi.compare_exchange_weak(v, t)) {}
            });
        });
        s.synchronize();
        const int want = budget ? budget : 5;
        EXPECT_EQ(in_op, want) << "budget " << budget;
        EXPECT_EQ(lo.load(), want) << "budget " << budget;
        EXPECT_EQ(hi.load(), want) << "budget " << budget;
    }
    EXPECT_EQ(impl::parallel_max_threads(), 5);
}

// ---- argument errors, lifetimes, errors at run time ------------------------------------------

// Bad arguments throw at the call inside a scope, queue nothing (the stream reports no error
// and writes nothing), and the stream goes on working.
TEST(StreamOps, ArgumentErrorsThrowAtTheCall) {
    const threads_guard g(3);
    const auto conv = make_kind(kind_id::conv), bn = make_kind(kind_id::bnorm_fwd_inference);
    const tensor src = seeded(conv->in, 7), want = conv->run(src, tensor(conv->out));
    const tensor_desc wrong({2, 16, 5, 6}, blocked());
    const tensor y(conv->out), bad(wrong);
    gate_t gate;
    stream s;
    gate.hold(s);
    {
        stream_scope on(s);
        expect_error(status::invalid_arguments, {"conv_fwd", "dst"}, [&] { conv->run(src, bad); });
        expect_error(status::invalid_arguments, {"bnorm_fwd", "src"}, [&] { bn->run(tensor(wrong), y); });
        expect_error(status::invalid_arguments, {"reorder"}, [&] { reorder(src, bad); });
        expect_error(status::invalid_arguments, {"to_blocked", "no memory"}, [&] { to_blocked(tensor()); });
        expect_error(status::invalid_arguments, {"conv_fwd", "overlap"}, [&] { conv->run(y, y); });
        conv->run(src, y); // a good call after them
    }
    gate.open();
    s.synchronize(); // nothing failed on the stream
    EXPECT_TRUE(gate.ok());
    EXPECT_TRUE(same_bits(y, want));
    for (dim_t i = 0; i < wrong.nelems_padded(); ++i) ASSERT_EQ(bad.f32()[i], 0.f) << i;
}

// Queued work holds copies of its tensors and the op's state: the caller may drop its handles
// and the op object itself before the work runs. Fresh tensors filled with NaN, allocated
// meanwhile, would take over memory freed too early (ASan reports the use after free).
TEST(StreamOps, QueuedWorkKeepsTensorsAndOpAlive) {
    const threads_guard g(3);
    const tensor want = [] {
        const auto conv = make_kind(kind_id::conv);
        return to_dense(conv->run(seeded(conv->in, 9), tensor(conv->out)));
    }();
    const tensor got(want.desc());
    std::vector<tensor> churn;
    gate_t gate;
    stream s;
    gate.hold(s);
    {
        auto conv = make_kind(kind_id::conv); // the op, its weights and bias
        const tensor src = seeded(conv->in, 9), dst(conv->out);
        stream_scope on(s);
        conv->run(src, dst);
        reorder(dst, got);
    } // src, dst, the op, its weights and bias: every handle the caller had is gone
    for (int i = 0; i < 8; ++i) {
        churn.emplace_back(want.desc());
        std::fill_n(churn.back().f32(), want.desc().nelems_padded(), std::nanf(""));
    }
    gate.open();
    s.synchronize();
    EXPECT_TRUE(gate.ok());
    EXPECT_TRUE(same_bits(got, want));
}

// An op that fails when it runs (here the checks of an op called inside a queued op, which runs
// inline there) surfaces at synchronize; the ops queued after it are skipped; the stream then
// works again.
TEST(StreamOps, ErrorAtRunTimeSurfacesAtSynchronize) {
    const threads_guard g(3);
    const auto conv = make_kind(kind_id::conv);
    const tensor src = seeded(conv->in, 5), want = conv->run(src, tensor(conv->out));
    const tensor y(conv->out), bad(tensor_desc({2, 16, 5, 6}, blocked()));
    stream s;
    s.submit([&conv, src, bad] { conv->run(src, bad); });
    {
        stream_scope on(s);
        conv->run(src, y); // skipped
    }
    expect_error(status::invalid_arguments, {"conv_fwd", "dst"}, [&] { s.synchronize(); });
    for (dim_t i = 0; i < y.desc().nelems_padded(); ++i) ASSERT_EQ(y.f32()[i], 0.f) << i;
    {
        stream_scope on(s);
        conv->run(src, y);
    }
    s.synchronize();
    EXPECT_TRUE(same_bits(y, want));
}

// Creating an op with its weights reads them at once: inside a stream_scope it waits for the
// work queued before it, here the reorder that writes those weights, held back by a gate.
TEST(StreamOps, CreationWithWeightsWaitsForTheQueuedWorkThatWritesThem) {
    const threads_guard g(3);
    conv_desc d;
    d.mb = 2, d.ic = d.oc = 16, d.ih = d.iw = 6, d.kh = d.kw = 3;
    d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.infer_dst_dims();
    const format_tag blk = blocked();
    const tensor wei = seeded(tensor_desc(d.wei_dims(false), format_tag::oihw), 7);
    const tensor src = seeded(tensor_desc(d.src_dims(), blk), 8);
    const tensor want(tensor_desc(d.dst_dims(), blk)), got(want.desc());
    conv_fwd(d, blk, wei, tensor(), blk).execute(src, want);

    const tensor wei_copy(wei.desc()); // zeros until the queued reorder runs
    gate_t gate;
    stream s;
    gate.hold(s);
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open();
    });
    {
        stream_scope on(s);
        reorder(wei, wei_copy);
        const conv_fwd conv(d, blk, wei_copy, tensor(), blk); // waits for the reorder
        conv.execute(src, got);
    }
    opener.join();
    s.synchronize();
    EXPECT_TRUE(gate.ok());
    EXPECT_TRUE(same_bits(got, want));
}
