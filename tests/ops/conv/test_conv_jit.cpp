// SPDX-License-Identifier: Apache-2.0
// JIT forward convolutions against the reference: seeded random problems (1-D, 2-D, 3-D,
// strides, asymmetric padding, dilation, groups, channel tails, bias, post-ops) for each
// kernel kind, ISA and layout block, with forced register and cache blockings; exact compares
// on small-integer data, NaN in every padded channel; identical results for every thread
// split. Also dispatch through the public API, and init_conf's invariants.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <tuple>

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/isa_param.hpp"
#include "conv_jit_util.hpp"
#include "core/machine_model.hpp"

using namespace blockdnn;
using namespace conv_test;
using blockdnn::impl::conv_conf_t;

namespace {

// Whether the direct kernel can reduce a problem to unit stride (conv_conf_t::rtus): a strided
// 1x1 without padding, g = 1.
bool takes_rtus(const conv_case_t &k, prb_kind kind) {
    const conv_desc &d = k.d;
    return kind == prb_kind::direct && d.g == 1 && d.kd == 1 && d.kh == 1 && d.kw == 1 && !d.pd && !d.ph && !d.pw
            && d.pd_r <= 0 && d.ph_r <= 0 && d.pw_r <= 0 && (d.sd > 1 || d.sh > 1 || d.sw > 1);
}

// Random problems with random forced blockings; `count` problems, seeds printed on failure.
void random_sweep(isa level, int blk, int count, unsigned seed0, prb_kind kind = prb_kind::direct, bool nxc = false) {
    std::mt19937 gen(seed0);
    int failures = 0;
    for (int t = 0; t < count && failures < 5; ++t) {
        const conv_case_t k = random_case(gen, blk, 300000, kind, nxc);
        conv_conf_hint_t hint;
        if (gen() % 2) hint.ur_w = static_cast<int>(gen() % 8) + 1;
        if (gen() % 3 == 0) hint.nb_ic_blocking = static_cast<int>(gen() % 3) + 1;
        if (level == isa::avx512_core && kind != prb_kind::depthwise) hint.bcast_embedded = static_cast<int>(gen() % 2);
        if (gen() % 4 == 0) hint.prefetch = 0;
        // Half the problems that allow it read a dense copy (the hint on another is an error).
        if (gen() % 2 && takes_rtus(k, kind)) hint.rtus = 1;
        // A third of the direct ones with a broadcast register read 1 or 2 weight vectors from
        // memory (more than the conf's vectors: init_conf refuses, and the case runs unhinted).
        if (kind == prb_kind::direct && hint.bcast_embedded != 1 && gen() % 3 == 0)
            hint.wei_mem_vecs = static_cast<int>(gen() % 2) + 1;
        const outcome_t r = check_case(k, level, hint, seed0 + static_cast<unsigned>(t));
        if (!r.ok) {
            ++failures;
            ADD_FAILURE() << "case " << t << " (seed " << seed0 << "): " << r.what;
        }
    }
}

} // namespace

namespace {

// One random sweep: `count` problems of a kernel kind at a level, on layouts of block `blk`
// (channels-last with nxc), seeded with `seed`.
struct sweep_t {
    int blk = 8;
    int count = 0;
    unsigned seed = 0;
    prb_kind kind = prb_kind::direct;
    bool nxc = false;
};

const char *kind_name(prb_kind k) {
    return k == prb_kind::direct ? "direct" : k == prb_kind::first ? "first" : "depthwise";
}

// "depthwise_nxc_blk8": the kernel kind, layout family and block (the case adds the level).
std::string sweep_name(const sweep_t &w) {
    return std::string(kind_name(w.kind)) + (w.nxc ? "_nxc" : "") + "_blk" + std::to_string(w.blk);
}

bdtest::isa_case_t<sweep_t> sweep(isa level, sweep_t w) {
    return {level, w, bdtest::gtest_name(std::string(to_string(level)) + "_" + sweep_name(w))};
}

// At least a thousand random problems per ISA over the blocked direct sweeps; channels-last src
// and dst (nwc, nhwc, ndhwc) for the direct and depthwise kernels with a vector of channels as
// the block, the direct kernel with ic and oc tails (dst masked); first-layer and depthwise
// kernels on blocked layouts.
std::vector<bdtest::isa_case_t<sweep_t>> sweeps() {
    using k = prb_kind;
    return {sweep(isa::avx512_core, {16, 700, 1000}), sweep(isa::avx2, {8, 450, 2000}),
            sweep(isa::avx2, {16, 250, 3000}), sweep(isa::avx512_core, {16, 200, 6016, k::direct, true}),
            sweep(isa::avx512_core, {16, 200 / 3, 7016, k::depthwise, true}),
            sweep(isa::avx2, {8, 150, 6008, k::direct, true}), sweep(isa::avx2, {8, 150 / 3, 7008, k::depthwise, true}),
            sweep(isa::avx512_core, {16, 150, 4016, k::first}), sweep(isa::avx2, {8, 75, 4008, k::first}),
            sweep(isa::avx2, {16, 75, 4016, k::first}), sweep(isa::avx512_core, {16, 150, 5016, k::depthwise}),
            sweep(isa::avx2, {8, 75, 5008, k::depthwise}), sweep(isa::avx2, {16, 75, 5016, k::depthwise})};
}

class ConvJitSweep : public bdtest::isa_test<bdtest::isa_case_t<sweep_t>> {};

} // namespace

TEST_P(ConvJitSweep, RandomProblemsMatchReference) {
    const sweep_t &w = GetParam().desc;
    random_sweep(level(), w.blk, w.count, w.seed, w.kind, w.nxc);
}

INSTANTIATE_TEST_SUITE_P(Seeded, ConvJitSweep, ::testing::ValuesIn(sweeps()), bdtest::case_name());

// A channels-last dst with a partial last vector: the kernel loads (split reduction, sum
// post-op) and stores only the oc channels of the tensor's last pixel. src and dst end at a
// page that is not readable, so a whole-vector access past them faults.
TEST(ConvJit, ChannelsLastOcTailStaysInsideTheTensor) {
    // The cases are what they say (an oc tail, a split reduction) on the reference machine's
    // blocking, whatever the CPU's model.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    const long page = sysconf(_SC_PAGESIZE);
    struct guarded_t { // bytes at the end of a mapping, then a PROT_NONE page
        void *map = nullptr;
        std::size_t len = 0;
        float *p = nullptr;
        explicit guarded_t(std::size_t bytes, long page) {
            const std::size_t body = (bytes + page - 1) / page * page;
            len = body + static_cast<std::size_t>(page);
            map = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (map == MAP_FAILED) return;
            mprotect(static_cast<char *>(map) + body, static_cast<std::size_t>(page), PROT_NONE);
            p = reinterpret_cast<float *>(static_cast<char *>(map) + body - bytes);
        }
        ~guarded_t() {
            if (map != MAP_FAILED && map) munmap(map, len);
        }
    };
    // 3x3 with a sum post-op, scaled (a masked load into a temporary) and not (a masked load,
    // where whole vectors add straight from memory); ic 2048 with 3x3 weights over L2's budget
    // and no sum (the reduction split into chunks, each loading the last one's partial sums).
    const std::pair<const char *, post_ops> cases[] = {{"mb2ic13ih5oc20oh5kh3ph1", post_ops().append_sum(0.5f)},
            {"mb2ic13ih5oc20oh5kh3ph1", post_ops().append_sum(1.f)}, {"mb1ic2048ih3oc36oh3kh3ph1", post_ops()}};
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        for (const auto &[text, po] : cases) {
            const conv_desc d = parse_conv_desc(text);
            conv_conf_t conf; // the case is what it says: an oc tail; a split reduction without the sum
            std::string why;
            ASSERT_EQ(impl::init_conf_conv_fwd(conf, d, format_tag::nhwc, format_tag::nhwc, po, level, why),
                    status::success)
                    << why;
            EXPECT_NE(conf.oc_tail, 0) << text;
            if (po.empty()) {
                EXPECT_LT(conf.nb_ic_blocking, conf.nb_ic) << text;
            }
            const tensor_desc sd(d.src_dims(), format_tag::nhwc), dd(d.dst_dims(), format_tag::nhwc);
            const guarded_t gs(sd.size_bytes(), page), gd(dd.size_bytes(), page);
            ASSERT_TRUE(gs.p && gd.p);
            const tensor src(sd, gs.p), dst(dd, gd.p), wei(tensor_desc(d.wei_dims(false), format_tag::oihw));
            fill_int(src, 1, 3);
            fill_int(wei, 2, 2);
            fill_int(dst, 3, 5);
            const tensor ref(dd);
            std::memcpy(ref.data(), dst.data(), dd.size_bytes());
            isa_guard guard;
            set_max_isa(level);
            const conv_fwd jit(d, format_tag::nhwc, format_tag::oihw, format_tag::nhwc, po);
            EXPECT_STREQ(jit.impl_name(), level == isa::avx2 ? "jit:avx2" : "jit:avx512_core") << text;
            jit.execute(src, wei, tensor(), dst);
            set_max_isa(isa::scalar);
            conv_fwd(d, format_tag::nhwc, format_tag::oihw, format_tag::nhwc, po).execute(src, wei, tensor(), ref);
            EXPECT_EQ(std::memcmp(dst.data(), ref.data(), dd.size_bytes()), 0) << to_string(level) << " " << text;
        }
    }
}

// Channels-last images of fewer than 64 pixels (1x1, 2x2, 1-D and 3-D) fold into one run of
// pixels whose rows may cross images: the conf runs them as one image, and the results match
// the reference on 1, 2 and 3 thread parts, with channel tails and post-ops. Blocked layouts
// and larger images keep a row per image at most.
TEST(ConvJit, ChannelsLastSmallImagesFoldIntoRows) {
    // The folds expected are the reference machine's blocking, whatever the CPU's model.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    struct case_t {
        const char *desc;
        bool folds;
    };
    const case_t cases[] = {{"mb60ic16ih1oc64oh1kh1", true}, {"mb37ic20ih2oc35oh2kh1", true},
            {"mb24ic33iw3oc70ow3kw1", true}, {"mb18ic48id2ih1iw2oc17od2oh1ow2kd1kh1kw1", true},
            {"mb8ic32ih8oc48oh8kh1", false}, {"mb1ic16ih2oc64oh2kh1", false}};
    const post_ops chains[] = {post_ops(), post_ops().append_sum(0.5f).append_eltwise(eltwise_alg::relu, 0.f)};
    int n_checked = 0;
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        for (const case_t &t : cases)
            for (bool bias : {false, true})
                for (const post_ops &po : chains) {
                    conv_case_t k;
                    k.d = parse_conv_desc(t.desc);
                    k.d.with_bias = bias;
                    k.src_tag = k.dst_tag = nxc_act_tag(k.d.ndims);
                    k.wei_tag = plain_wei_tag(k.d.ndims, false);
                    k.po = po;
                    conv_conf_t c;
                    std::string why;
                    ASSERT_EQ(impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, po, level, why), status::success)
                            << why;
                    const dim_t image = k.d.od * k.d.oh * k.d.ow;
                    EXPECT_EQ(c.mb * c.od * c.oh * c.ow, k.d.mb * image) << k.str();
                    EXPECT_EQ(c.mb == 1 && k.d.mb > 1, t.folds) << k.str() << ": " << impl::to_string(c);
                    const outcome_t r = check_case(k, level, {}, 31);
                    EXPECT_TRUE(r.ok) << r.what;
                    ++n_checked;
                    // The same problem on blocked activations keeps its images apart.
                    conv_conf_t b;
                    const format_tag blk = blocked_act_tag(k.d.ndims, level == isa::avx2 ? 8 : 16);
                    ASSERT_EQ(impl::init_conf_conv_fwd(b, k.d, blk, blk, po, level, why), status::success) << why;
                    EXPECT_EQ(b.mb, k.d.mb) << k.str();
                }
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

// Depthwise kernels prefetch the next rows' src only when the src tensor passes a core's share
// of the last-level cache (the reference model's 4 MiB); the hint turns it on or off anyway.
// The direct kernel prefetches in cache too.
TEST(ConvJitConf, DepthwisePrefetchesSrcOnlyFromMemory) {
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    using ft = format_tag;
    struct case_t {
        const char *desc;
        bool prefetch;
    };
    // 144 x 56 x 56 floats: 1.8 MB an image.
    const case_t cases[] = {{"g144mb1ic144ih56oc144oh56kh3ph1", false}, {"g144mb2ic144ih56oc144oh56kh3ph1", false},
            {"g144mb3ic144ih56oc144oh56kh3ph1", true}, {"g144mb16ic144ih56oc144oh56kh3ph1", true}};
    for (isa level : {isa::avx512_core, isa::avx2})
        for (ft tag : {level == isa::avx2 ? ft::nChw8c : ft::nChw16c, ft::nhwc})
            for (const case_t &t : cases) {
                const conv_desc d = parse_conv_desc(t.desc);
                conv_conf_t c;
                std::string why;
                ASSERT_EQ(impl::init_conf_conv_fwd(c, d, tag, tag, {}, level, why), status::success) << why;
                ASSERT_EQ(c.kind, conv_kernel_kind::depthwise);
                EXPECT_EQ(c.src_prefetch_dist > 0, t.prefetch) << impl::to_string(c);
                impl::conv_conf_hint_t on, off;
                on.prefetch = 1;
                off.prefetch = 0;
                ASSERT_EQ(impl::init_conf_conv_fwd(c, d, tag, tag, {}, level, why, on), status::success) << why;
                EXPECT_GT(c.src_prefetch_dist, 0) << impl::to_string(c);
                ASSERT_EQ(impl::init_conf_conv_fwd(c, d, tag, tag, {}, level, why, off), status::success) << why;
                EXPECT_EQ(c.src_prefetch_dist, 0) << impl::to_string(c);
            }
    conv_conf_t c;
    std::string why;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc("mb1ic64ih14oc64oh14kh3ph1"), ft::nChw16c, ft::nChw16c, {},
                      isa::avx512_core, why),
            status::success);
    EXPECT_GT(c.src_prefetch_dist, 0) << impl::to_string(c);
}

namespace {

// Cases whose blocking ends in a smaller oc-block group: each must take a kernel of `kind` with
// a tail group and match the reference (bias; then sum and relu too) as a whole and in 1, 2
// and 3 thread parts. Returns how many ran (0 if the CPU lacks their ISAs).
struct tail_case_t {
    isa level;
    const char *desc;
    bool nxc;
};
int check_tail_groups(const std::vector<tail_case_t> &cases, conv_kernel_kind kind, unsigned seed) {
    int n_checked = 0;
    for (const tail_case_t &t : cases) {
        if (isa_missing(t.level)) continue;
        for (int variant = 0; variant < 2; ++variant) {
            conv_case_t k;
            k.d = parse_conv_desc(t.desc);
            k.d.with_bias = true;
            if (variant == 1) k.po.append_sum(0.5f).append_eltwise(eltwise_alg::relu);
            k.src_tag = k.dst_tag =
                    t.nxc ? nxc_act_tag(k.d.ndims) : blocked_act_tag(k.d.ndims, t.level == isa::avx2 ? 8 : 16);
            k.wei_tag = plain_wei_tag(k.d.ndims, k.d.g > 1);
            conv_conf_t c;
            std::string why;
            if (impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, k.po, t.level, why) != status::success) {
                ADD_FAILURE() << k.str() << ": " << why;
                continue;
            }
            EXPECT_EQ(c.kind, kind) << k.str();
            EXPECT_GT(c.nb_oc_blocking_tail, 0) << k.str() << ": " << impl::to_string(c);
            const outcome_t r = check_case(k, t.level, {}, seed + variant);
            EXPECT_TRUE(r.ok) << r.what;
            ++n_checked;
        }
    }
    return n_checked;
}

} // namespace

// Depthwise channel blocks that no count up to the register budget divides (5, 7, 13, 25) run
// in groups with a smaller last one, on a kernel of its own: blocked and channels-last, the
// last block partial (g 72 on 16-channel blocks), strided, padded, with bias, sum and relu;
// 1, 2 and 3 thread parts match the reference. A hint asks for groups of 4 on 5 blocks.
TEST(ConvJit, DepthwiseGroupsEndInATailGroup) {
    // The blocking reads the machine model: the reference one, so that each case has a tail.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    const int n_checked = check_tail_groups({{isa::avx512_core, "g80mb2ic80ih9oc80oh9kh3ph1", false},
                                                    {isa::avx512_core, "g208mb1ic208ih7oc208oh7kh3ph1", false},
                                                    {isa::avx512_core, "g112mb2ic112ih11oc112oh6kh3sh2ph1", true},
                                                    {isa::avx512_core, "g72mb2ic72ih8oc72oh8kh5ph2", false},
                                                    {isa::avx2, "g40mb2ic40ih9oc40oh9kh3ph1", false},
                                                    {isa::avx2, "g200mb1ic200ih7oc200oh7kh3ph1", true},
                                                    {isa::avx2, "g36mb1ic36ih10oc36oh5kh3sh2ph1", false}},
            conv_kernel_kind::depthwise, 51);
    // Groups of 4 on 5 blocks: the hint allows a tail too.
    if (!isa_missing(isa::avx512_core)) {
        conv_case_t k;
        k.d = parse_conv_desc("g80mb1ic80ih6oc80oh6kh3ph1");
        k.src_tag = k.dst_tag = format_tag::nChw16c;
        k.wei_tag = format_tag::goihw;
        conv_conf_hint_t four;
        four.nb_oc_blocking = 4;
        conv_conf_t c;
        std::string why;
        ASSERT_EQ(impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, k.po, isa::avx512_core, why, four),
                status::success)
                << why;
        EXPECT_EQ(c.nb_oc_blocking, 4);
        EXPECT_EQ(c.nb_oc_blocking_tail, 1);
        const outcome_t r = check_case(k, isa::avx512_core, four, 57);
        EXPECT_TRUE(r.ok) << r.what;
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

// Direct kernels whose oc blocks no group count within the register budget divides into
// busy blocks end in a smaller group, on a kernel of its own: 3x3 rows of 7 or 5 pixels, 1x1
// rows, 3-D, strided, the last block partial (oc 78 and 33), blocked and channels-last, with
// bias, sum and relu; 1, 2 and 3 thread parts match the reference. A hint asks for groups of
// 3 on 4 blocks, and a split reduction keeps its tail group apart from the others' chunks.
TEST(ConvJit, DirectGroupsEndInATailGroup) {
    // The blocking reads the machine model: the reference one, so that each case has a tail.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    const int n_checked = check_tail_groups(
            {{isa::avx2, "mb2ic24ih7oc64oh7kh3ph1", false}, {isa::avx2, "mb1ic16ih7oc78oh7kh3ph1", true},
                    {isa::avx2, "mb2ic16ih13oc40oh7kh3sh2ph1", false}, {isa::avx2, "mb2ic24ih13oc33oh13kh1ph0", false},
                    {isa::avx2, "mb1ic16id5ih5iw5oc40od5oh5ow5kd3kh3kw3pd1ph1pw1", false},
                    {isa::avx2, "g2mb2ic32ih7oc160oh7kh3ph1", false}, {isa::avx2, "g2mb1ic32ih7oc160oh7kh3ph1", true},
                    {isa::avx512_core, "mb2ic32ih14oc80oh14kh3ph1", false},
                    {isa::avx512_core, "mb1ic48ih14oc112oh14kh1ph0", true},
                    {isa::avx512_core, "mb2ic17ih5oc65oh5kh3ph1", false}},
            conv_kernel_kind::direct, 61);
    // Groups of 3 on 4 blocks, asked by a hint; then with the reduction split into ic chunks.
    for (int split = 0; split < 2; ++split) {
        if (isa_missing(isa::avx2)) break;
        conv_case_t k;
        k.d = parse_conv_desc("mb2ic32ih9oc32oh9kh3ph1");
        k.d.with_bias = true;
        k.src_tag = k.dst_tag = format_tag::nChw8c;
        k.wei_tag = format_tag::oihw;
        conv_conf_hint_t three;
        three.nb_oc_blocking = 3;
        if (split) three.nb_ic_blocking = 1;
        conv_conf_t c;
        std::string why;
        ASSERT_EQ(impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, k.po, isa::avx2, why, three), status::success)
                << why;
        EXPECT_EQ(c.nb_oc_blocking, 3);
        EXPECT_EQ(c.nb_oc_blocking_tail, 1);
        EXPECT_EQ(c.nb_ic_blocking, split ? 1 : 4);
        const outcome_t r = check_case(k, isa::avx2, three, 67 + split);
        EXPECT_TRUE(r.ok) << r.what;
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

namespace {

// A core with full-width zmm FMAs, L1d 48 KiB and L2 2 MiB, the rest the reference model's:
// the blocking rules for tails and weights from memory are pinned on it.
impl::machine_model_t full_width_model() {
    impl::machine_model_t m;
    m.l1d_bytes = 48 << 10;
    m.l2_bytes = 2 << 20;
    m.avx512.full_width = true;
    return m;
}

} // namespace

// A direct tail group replaces whole groups only where those leave the FMAs short. On a core
// with full-width zmm FMAs, 3 oc blocks x 7 pixels (21 accumulators) keep them busy, and the
// model's estimate for 2 x 14 with a last group of 1 (the 1-block group's every FMA waiting on
// a broadcast) does not displace them; 7-pixel rows on AVX2, whose whole groups leave blocks
// of 6 accumulators, take 3 blocks and a last group of 1.
TEST(ConvJitConf, DirectTailOnlyWhereWholeGroupsStarveFmas) {
    const impl::machine_model_override_t pin(full_width_model());
    auto conf_of = [](const char *desc, format_tag act, isa level) {
        conv_conf_t c;
        std::string why;
        EXPECT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc(desc), act, act, {}, level, why), status::success)
                << desc << ": " << why;
        return c;
    };
    const conv_conf_t busy = conf_of("mb16ic16ih14oc48oh14kh5ph2", format_tag::nChw16c, isa::avx512_core);
    EXPECT_EQ(busy.nb_oc_blocking, 3) << impl::to_string(busy);
    EXPECT_EQ(busy.nb_oc_blocking_tail, 0);
    EXPECT_EQ(busy.ur_w, 7);
    const conv_conf_t starved = conf_of("mb1ic512ih7oc512oh7kh3ph1", format_tag::nChw8c, isa::avx2);
    EXPECT_EQ(starved.nb_oc_blocking, 3) << impl::to_string(starved);
    EXPECT_EQ(starved.nb_oc_blocking_tail, 1);
    EXPECT_EQ(starved.ur_w, 4);
}

// Weight vectors read by the FMAs from memory (conv_conf_t::wei_mem_vecs): 16-channel blocks
// on AVX2 over 7-pixel rows take them by the model; hints ask for them elsewhere: all of a
// step's weights, AVX-512, a partial last block on a masked channels-last dst, a partial ic
// block, 3-D, strided, dilated, a split reduction, 1x1 rows. Each matches the reference with
// bias, then with a scaled sum (whose temporary shares the registers) and relu, as a whole and
// in 1, 2 and 3 thread parts.
TEST(ConvJit, WeightsReadByTheFmas) {
    // The blocking reads the machine model: the reference one, so that the first case takes
    // them without a hint.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    struct mem_case_t {
        isa level;
        const char *desc;
        format_tag act;
        int nb_oc_blocking, wei_mem, nb_ic_blocking; // hints; 0 / -1: init_conf picks
    };
    const mem_case_t cases[] = {
            {isa::avx2, "mb2ic32ih7oc64oh7kh3ph1", format_tag::nChw16c, 0, -1, 0},
            {isa::avx2, "mb2ic24ih9oc32oh9kh3ph1", format_tag::nChw8c, 2, 2, 0},
            {isa::avx2, "mb1ic17ih7oc30oh7kh3ph1", format_tag::nhwc, 2, 1, 0},
            {isa::avx2, "mb2ic16id5ih6iw7oc32od5oh6ow7kd3kh3kw3pd1ph1pw1", format_tag::nCdhw16c, 0, 1, 0},
            {isa::avx2, "mb2ic24ih15oc40oh7kh3sh2ph1dh1", format_tag::nChw8c, 1, 1, 0},
            {isa::avx2, "mb2ic64ih7oc32oh7kh3ph1", format_tag::nChw16c, 1, 1, 2},
            {isa::avx2, "mb2ic40ih13oc32oh13kh1ph0", format_tag::nChw8c, 0, 1, 0},
            // Every weight from memory and a masked dst: the mask and the sum's temporary.
            {isa::avx2, "mb1ic8ih15oc5oh15kh3ph1", format_tag::nhwc, 0, 1, 0},
            {isa::avx512_core, "mb2ic32ih7oc64oh7kh3ph1", format_tag::nChw16c, 2, 1, 0},
            {isa::avx512_core, "mb1ic20ih9oc35oh9kh3ph1", format_tag::nhwc, 3, 2, 0},
    };
    int n_checked = 0;
    for (const mem_case_t &t : cases) {
        if (isa_missing(t.level)) continue;
        conv_conf_hint_t hint;
        hint.nb_oc_blocking = t.nb_oc_blocking;
        hint.wei_mem_vecs = t.wei_mem;
        hint.nb_ic_blocking = t.nb_ic_blocking;
        for (int variant = 0; variant < 2; ++variant) {
            conv_case_t k;
            k.d = parse_conv_desc(t.desc);
            k.d.with_bias = true;
            if (variant == 1) {
                if (t.nb_ic_blocking == 0) k.po.append_sum(0.5f);
                k.po.append_eltwise(eltwise_alg::relu);
            }
            k.src_tag = k.dst_tag = t.act;
            k.wei_tag = plain_wei_tag(k.d.ndims, false);
            conv_conf_t c;
            std::string why;
            ASSERT_EQ(impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, k.po, t.level, why, hint), status::success)
                    << t.desc << ": " << why;
            EXPECT_EQ(c.wei_mem_vecs, t.wei_mem > 0 ? t.wei_mem : 1) << t.desc << ": " << impl::to_string(c);
            if (t.nb_ic_blocking) {
                EXPECT_EQ(c.nb_ic_blocking, t.nb_ic_blocking) << impl::to_string(c);
            }
            const outcome_t r = check_case(k, t.level, hint, 71 + static_cast<unsigned>(variant));
            EXPECT_TRUE(r.ok) << r.what;
            ++n_checked;
        }
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

// Weights read by the FMAs replace a blocking only where its FMAs are short: 16-channel blocks
// on AVX2 over 7-pixel rows (2 vectors x 4, then x 3 pixels) take 2 x 7 with a weight from
// memory; 8-channel blocks keep 3 blocks x 4 and a last group of 1, and AVX-512 keeps its
// registers. Hints the kernel cannot honour are refused with the reason.
TEST(ConvJitConf, WeightsFromMemoryOnlyWhereFmasAreShort) {
    const impl::machine_model_override_t pin(full_width_model());
    auto init = [](const char *desc, format_tag act, isa level, conv_conf_t &c, std::string &why,
                        const conv_conf_hint_t &hint = {}) {
        return impl::init_conf_conv_fwd(c, parse_conv_desc(desc), act, act, {}, level, why, hint);
    };
    conv_conf_t c;
    std::string why;
    ASSERT_EQ(init("mb1ic512ih7oc512oh7kh3ph1", format_tag::nChw16c, isa::avx2, c, why), status::success) << why;
    EXPECT_EQ(c.wei_mem_vecs, 1) << impl::to_string(c);
    EXPECT_EQ(c.nb_oc_blocking, 1);
    EXPECT_EQ(c.ur_w, 7);
    ASSERT_EQ(init("mb1ic512ih7oc512oh7kh3ph1", format_tag::nChw8c, isa::avx2, c, why), status::success) << why;
    EXPECT_EQ(c.wei_mem_vecs, 0) << impl::to_string(c);
    EXPECT_EQ(c.nb_oc_blocking, 3);
    EXPECT_EQ(c.nb_oc_blocking_tail, 1);
    ASSERT_EQ(init("mb1ic512ih7oc512oh7kh3ph1", format_tag::nChw16c, isa::avx512_core, c, why), status::success) << why;
    EXPECT_EQ(c.wei_mem_vecs, 0) << impl::to_string(c);

    conv_conf_hint_t emb;
    emb.bcast_embedded = 1;
    emb.wei_mem_vecs = 1;
    EXPECT_EQ(
            init("mb1ic32ih7oc32oh7kh3ph1", format_tag::nChw16c, isa::avx512_core, c, why, emb), status::unimplemented);
    EXPECT_NE(why.find("wei_mem_vecs hint 1"), std::string::npos) << why;
    conv_conf_hint_t one;
    one.wei_mem_vecs = 1;
    EXPECT_EQ(impl::init_conf_conv_fwd_dw(c, parse_conv_desc("g32mb1ic32ih7oc32oh7kh3ph1"), format_tag::nChw8c,
                      format_tag::nChw8c, {}, isa::avx2, why, one),
            status::unimplemented);
    EXPECT_NE(why.find("depthwise"), std::string::npos) << why;
    // Three of a 16-channel block's two vectors.
    conv_conf_hint_t three;
    three.nb_oc_blocking = 1;
    three.wei_mem_vecs = 3;
    EXPECT_EQ(init("mb1ic32ih7oc32oh7kh3ph1", format_tag::nChw16c, isa::avx2, c, why, three), status::unimplemented);
    EXPECT_NE(why.find("wei_mem_vecs hint 3"), std::string::npos) << why;
    // A tail group's kernel holds its weights in registers.
    conv_conf_hint_t tail;
    tail.nb_oc_blocking = 3;
    tail.wei_mem_vecs = 1;
    EXPECT_EQ(init("mb1ic32ih7oc32oh7kh3ph1", format_tag::nChw8c, isa::avx2, c, why, tail), status::unimplemented);
    EXPECT_NE(why.find("wei_mem_vecs hint 1"), std::string::npos) << why;
    // Other hints that leave no blocking with the weights in registers stay refused: 15 pixels
    // of one vector fit only with it in memory.
    conv_conf_hint_t wide;
    wide.ur_w = 15;
    wide.nb_oc_blocking = 1;
    EXPECT_EQ(init("mb1ic8ih15oc16oh15kh3ph1", format_tag::nChw8c, isa::avx2, c, why, wide), status::unimplemented)
            << impl::to_string(c);
    EXPECT_NE(why.find("no register blocking fits 16"), std::string::npos) << why;
}

// Small images fold only while the folded batch keeps the kernel's 32-bit displacements: a
// src batch of over 2 GiB keeps its images apart (and its JIT kernel) rather than fold and be
// refused, and so does a dst batch over 2 GiB, whose long rows would overflow a call's dst
// offsets. Checked on the conf alone: nothing is allocated.
TEST(ConvJitConf, SmallImagesFoldWithin32BitDisplacements) {
    for (isa level : {isa::avx512_core, isa::avx2}) {
        for (const auto &[text, folds] :
                {std::pair {"mb500000ic1024ih1oc8oh1kh1", true}, std::pair {"mb600000ic1024ih1oc8oh1kh1", false},
                        std::pair {"mb2000ic8ih1oc600000oh1kh1", false}}) {
            const conv_desc d = parse_conv_desc(text);
            conv_conf_t c;
            std::string why;
            ASSERT_EQ(
                    impl::init_conf_conv_fwd(c, d, format_tag::nhwc, format_tag::nhwc, {}, level, why), status::success)
                    << text << ": " << why;
            EXPECT_EQ(c.mb == 1, folds) << text << ": " << impl::to_string(c);
        }
    }
}

// The public API picks the JIT kernels by ISA cap and shape, and falls back with a reason.
TEST(ConvJit, DispatchPicksTheKernelOfEachShape) {
    isa_guard guard;
    const conv_desc d3 = parse_conv_desc("mb1ic32ih10oc48oh10kh3ph1");
    const conv_desc dw = parse_conv_desc("g32mb1ic32ih10oc32oh10kh3ph1");
    const conv_desc d1 = parse_conv_desc("mb1ic3ih20oc16oh10kh3sh2ph1");
    const conv_desc d3o20 = parse_conv_desc("mb1ic32ih10oc20oh10kh3ph1");
    const conv_desc dw24 = parse_conv_desc("g24mb1ic24ih10oc24oh10kh3ph1");
    const conv_desc dw20 = parse_conv_desc("g20mb1ic20ih10oc20oh10kh3ph1");
    using ft = format_tag;
    struct row_t {
        isa cap;
        const conv_desc &d;
        ft src, wei, dst;
        const char *impl;
    } rows[] = {
            {isa::avx512_core, d3, ft::nChw16c, ft::oihw, ft::nChw16c, "jit:avx512_core"},
            {isa::avx512_core, d3, ft::nChw16c, ft::OIhw16i16o, ft::nChw16c, "jit:avx512_core"},
            {isa::avx512_core, d3, ft::nChw8c, ft::oihw, ft::nChw8c, "jit:avx2"},
            {isa::avx2, d3, ft::nChw16c, ft::oihw, ft::nChw16c, "jit:avx2"},
            {isa::avx512_core, dw, ft::nChw16c, ft::goihw, ft::nChw16c, "jit:avx512_core:dw"},
            {isa::avx2, dw, ft::nChw8c, ft::Goihw8g, ft::nChw8c, "jit:avx2:dw"},
            {isa::avx512_core, d1, ft::nchw, ft::oihw, ft::nChw16c, "jit:avx512_core:first"},
            {isa::avx2, d1, ft::nchw, ft::oihw, ft::nChw8c, "jit:avx2:first"},
            {isa::avx512_core, d3, ft::nchw, ft::oihw, ft::nchw, "jit:avx512_core:plain"},
            {isa::avx2, d3, ft::nchw, ft::oihw, ft::nchw, "jit:avx2:plain"},
            {isa::avx512_core, d3, ft::nhwc, ft::oihw, ft::nChw16c, "jit:avx512_core:plain"}, // dst reordered
            {isa::avx512_core, d3, ft::nhwc, ft::oihw, ft::nhwc, "jit:avx512_core"},
            {isa::avx512_core, d3o20, ft::nhwc, ft::oihw, ft::nhwc, "jit:avx512_core"}, // oc tail, masked
            {isa::avx2, d3o20, ft::nhwc, ft::oihw, ft::nhwc, "jit:avx2"},
            {isa::avx512_core, dw24, ft::nhwc, ft::goihw, ft::nhwc, "jit:avx2:dw"}, // g 24: 8-channel slices
            {isa::avx2, dw20, ft::nhwc, ft::goihw, ft::nhwc, "ref"},
            {isa::avx512_core, dw, ft::nhwc, ft::goihw, ft::nhwc, "jit:avx512_core:dw"},
            {isa::scalar, d3, ft::nChw16c, ft::oihw, ft::nChw16c, "ref"},
    };
    for (const row_t &r : rows) {
        if (isa_missing(r.cap)) continue;
        set_max_isa(r.cap);
        EXPECT_STREQ(conv_fwd(r.d, r.src, r.wei, r.dst).impl_name(), r.impl)
                << to_string(r.cap) << " " << to_string(r.src) << " " << r.d.str();
    }
    // Every eltwise post-op has a JIT form (the eltwise injector).
    if (!isa_missing(isa::avx512_core)) {
        set_max_isa(isa::avx512_core);
        EXPECT_STREQ(conv_fwd(d3, ft::nChw16c, ft::oihw, ft::nChw16c, post_ops().append_eltwise(eltwise_alg::gelu_erf))
                             .impl_name(),
                "jit:avx512_core");
    }
}

// Every eltwise algorithm as a post-op (alone and after a sum), on real-valued data: the
// injector's functions against eltwise_ref, within a relative 2e-5 of max(|ref|, 1) (the
// summation order differs from the reference's double accumulation too).
TEST(ConvJit, EveryEltwisePostOp) {
    std::mt19937 gen(17);
    for (isa level : {isa::avx512_core, isa::avx2}) {
        if (isa_missing(level)) continue;
        const int blk = level == isa::avx512_core ? 16 : 8;
        for (int a = 0; a <= static_cast<int>(eltwise_alg::linear); ++a) {
            const auto alg = static_cast<eltwise_alg>(a);
            for (int with_sum = 0; with_sum < 2; ++with_sum) {
                conv_case_t k = random_case(gen, blk, 100000, static_cast<prb_kind>(a % 3));
                k.po = post_ops();
                if (with_sum) k.po.append_sum(0.5f);
                const float alpha = alg == eltwise_alg::clip ? -0.3f : 0.7f,
                            beta = alg == eltwise_alg::clip ? 0.4f : 0.2f;
                k.po.append_eltwise(alg, alpha, beta);
                const impl::conv_prb_t prb = make_prb(k);
                const tensor src(prb.src), wei(prb.wei), dst(prb.dst), ref(prb.dst);
                fill_random(src, 1u + static_cast<unsigned>(a));
                fill_random(wei, 2u + static_cast<unsigned>(a));
                fill_random(dst, 3u + static_cast<unsigned>(a));
                // log needs positive arguments: make the inputs and weights non-negative.
                if (alg == eltwise_alg::log)
                    for (const tensor *t : {&src, &wei})
                        for (dim_t i = 0; i < t->desc().nelems_padded(); ++i) t->f32()[i] = std::fabs(t->f32()[i]);
                std::memcpy(ref.data(), dst.data(), dst.desc().size_bytes());
                tensor bia;
                if (k.d.with_bias) {
                    bia = tensor(prb.bia);
                    fill_random(bia, 4u + static_cast<unsigned>(a));
                }
                isa_guard guard;
                set_max_isa(level);
                const conv_fwd jit(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po);
                ASSERT_EQ(std::string(jit.impl_name()).rfind("jit", 0), 0u) << jit.impl_name() << " " << k.str();
                jit.execute(src, wei, bia, dst);
                set_max_isa(isa::scalar);
                conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po).execute(src, wei, bia, ref);
                for (dim_t i = 0; i < dst.desc().nelems_padded(); ++i) {
                    const float got = dst.f32()[i], want = ref.f32()[i];
                    if (std::isnan(want) || std::isinf(want)) { // log(0) = -inf
                        ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << k.str() << " at " << i;
                        continue;
                    }
                    ASSERT_NEAR(got, want, 2e-5 * std::max(1.f, std::fabs(want))) << k.str() << " at " << i;
                }
            }
        }
    }
}

namespace {

// Small-integer tensors of case k (seeded by t) for the public API: dst and dst2 start equal
// (a sum post-op reads them); bia is empty without bias.
struct api_data_t {
    tensor src, wei, bia, dst, dst2;
    api_data_t(const conv_case_t &k, int t) {
        const impl::conv_prb_t prb = make_prb(k);
        src = tensor(prb.src), wei = tensor(prb.wei), dst = tensor(prb.dst), dst2 = tensor(prb.dst);
        fill_int(src, 10 + t, 3);
        fill_int(wei, 20 + t, 2);
        fill_int(dst, 30 + t, 5);
        std::memcpy(dst2.data(), dst.data(), dst.desc().size_bytes());
        if (k.d.with_bias) {
            bia = tensor(prb.bia);
            fill_int(bia, 40 + t, 4);
        }
    }
};

// A random problem of the public API's tests and its number t (which seeds its data).
struct api_case_t {
    conv_case_t k;
    int t = 0;
};

// n random problems per level, drawn from one generator seeded with `seed`, the levels in
// turn, each with its layouts' block; named "avx2_p3_mb2ic13ih7oc29oh7kh3ph1".
std::vector<bdtest::isa_case_t<api_case_t>> api_cases(unsigned seed, std::initializer_list<isa> levels, int n) {
    std::mt19937 gen(seed);
    std::vector<bdtest::isa_case_t<api_case_t>> v;
    for (isa level : levels)
        for (int t = 0; t < n; ++t) {
            const conv_case_t k = random_case(gen, level == isa::avx512_core ? 16 : 8, 200000);
            const std::string name = std::string(to_string(level)) + "_p" + std::to_string(t) + "_" + k.d.str();
            v.push_back({level, {k, t}, bdtest::gtest_name(name)});
        }
    return v;
}

// A case's problem and data, dispatch capped at its level for the test's body.
class api_test : public bdtest::isa_test<bdtest::isa_case_t<api_case_t>> {
protected:
    void SetUp() override {
        bdtest::isa_test<bdtest::isa_case_t<api_case_t>>::SetUp();
        if (!IsSkipped()) set_max_isa(level());
    }
    const conv_case_t &k = GetParam().desc.k;
    const api_data_t a {k, GetParam().desc.t};
    isa_guard guard;
};

class ConvJitApi : public api_test {};
class ConvJitHeldWeights : public api_test {};

} // namespace

// The public API runs the JIT kernel on plain weights (reordered per call) and matches ref.
TEST_P(ConvJitApi, MatchesReference) {
    const tensor &src = a.src, &wei = a.wei, &bia = a.bia, &dst = a.dst, &ref = a.dst2;
    const conv_fwd jit(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po);
    EXPECT_EQ(std::string(jit.impl_name()).rfind("jit", 0), 0u) << jit.impl_name() << " " << k.str();
    jit.execute(src, wei, bia, dst);
    set_max_isa(isa::scalar);
    conv_fwd(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po).execute(src, wei, bia, ref);
    for (dim_t i = 0; i < dst.desc().nelems_padded(); ++i)
        ASSERT_EQ(dst.f32()[i], ref.f32()[i]) << k.str() << " at " << i;
}

// Weights given at creation: the op keeps its own copy in the kernel's layout, gives the same
// bits as the op that takes plain weights per call, and does not see later changes to them.
TEST_P(ConvJitHeldWeights, MatchWeightsPerCall) {
    const tensor &src = a.src, &wei = a.wei, &bia = a.bia, &want = a.dst, &got = a.dst2;
    const conv_fwd per_call(k.d, k.src_tag, k.wei_tag, k.dst_tag, k.po);
    const conv_fwd held(k.d, k.src_tag, wei, bia, k.dst_tag, k.po);
    EXPECT_FALSE(per_call.holds_weights());
    EXPECT_TRUE(held.holds_weights());
    EXPECT_STREQ(held.impl_name(), per_call.impl_name()) << k.str();
    const std::string held_tag = to_string(held.wei_desc().tag());
    if (std::string(held.impl_name()).rfind("jit", 0) == 0) { // a blocked copy: OI..16i16o, Go..16g
        EXPECT_TRUE(std::any_of(held_tag.begin(), held_tag.end(), ::isupper)) << held.str();
    }
    per_call.execute(src, wei, bia, want);
    fill_int(wei, 99, 2); // not seen by `held`
    held.execute(src, got);
    for (dim_t i = 0; i < got.desc().nelems_padded(); ++i)
        ASSERT_EQ(got.f32()[i], want.f32()[i]) << held.impl_name() << " " << k.str() << " at " << i;
}

INSTANTIATE_TEST_SUITE_P(
        Seeded, ConvJitApi, ::testing::ValuesIn(api_cases(9, {isa::avx512_core, isa::avx2}, 20)), bdtest::case_name());

// The held-weights cases at every level, the reference's included.
INSTANTIATE_TEST_SUITE_P(Seeded, ConvJitHeldWeights,
        ::testing::ValuesIn(api_cases(12, {isa::avx512_core, isa::avx2, isa::scalar}, 10)), bdtest::case_name());

TEST(ConvJit, WeightsAtCreationBadUseIsNamed) {
    conv_desc d;
    d.ic = 16, d.oc = 16, d.ih = d.iw = 5, d.kh = d.kw = 3;
    d.infer_dst_dims();
    const tensor src(tensor_desc(d.src_dims(), format_tag::nchw)), dst(tensor_desc(d.dst_dims(), format_tag::nchw));
    const tensor wei(tensor_desc(d.wei_dims(false), format_tag::oihw));
    const conv_fwd per_call(d, format_tag::nchw, format_tag::oihw, format_tag::nchw);
    const conv_fwd held(d, format_tag::nchw, wei, tensor(), format_tag::nchw);
    expect_error(status::invalid_arguments, {"conv_fwd", "execute(src, dst) needs weights"},
            [&] { per_call.execute(src, dst); });
    expect_error(status::invalid_arguments, {"conv_fwd", "holds the weights"}, [&] { held.execute(src, wei, dst); });
    expect_error(status::invalid_arguments, {"conv_fwd", "wei", "kh"}, [&] {
        const tensor w2(tensor_desc({16, 16, 2, 3}, format_tag::oihw));
        conv_fwd(d, format_tag::nchw, w2, tensor(), format_tag::nchw);
    });
    expect_error(status::invalid_arguments, {"conv_fwd", "bia", "with_bias = false"},
            [&] { conv_fwd(d, format_tag::nchw, wei, tensor(tensor_desc({16}, format_tag::x)), format_tag::nchw); });
    expect_error(status::invalid_arguments, {"conv_fwd", "wei tensor has no memory"},
            [&] { conv_fwd(d, format_tag::nchw, tensor(), tensor(), format_tag::nchw); });
}

// execute() called inside a stream_scope runs on the caller's thread; the weights reorder it
// does for plain weights must run there too, before the kernel reads them (the public reorder
// would be queued on the stream).
TEST(ConvJit, PlainWeightsInsideAStreamScope) {
    conv_desc d;
    d.ic = 32, d.oc = 32, d.ih = d.iw = 9, d.kh = d.kw = 3, d.ph = d.pw = d.ph_r = d.pw_r = 1;
    d.infer_dst_dims();
    const format_tag act = detected_isa() >= isa::avx512_core ? format_tag::nChw16c : format_tag::nChw8c;
    const tensor src(tensor_desc(d.src_dims(), act)), wei(tensor_desc(d.wei_dims(false), format_tag::oihw));
    const tensor want(tensor_desc(d.dst_dims(), act)), got(tensor_desc(d.dst_dims(), act));
    fill_int(src, 1, 3);
    fill_int(wei, 2, 2);
    const conv_fwd conv(d, act, format_tag::oihw, act);
    conv.execute(src, wei, want);
    stream s;
    {
        stream_scope on(s);
        conv.execute(src, wei, got);
    }
    s.synchronize();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.desc().size_bytes()), 0) << conv.impl_name();
}

namespace {

status init_of(conv_conf_t &c, const conv_case_t &k, isa level, std::string &why) {
    return impl::init_conf_conv_fwd(c, k.d, k.src_tag, k.dst_tag, k.po, level, why);
}

} // namespace

TEST(ConvJitConf, StridesMatchTensorDesc) {
    std::mt19937 gen(5);
    for (int t = 0; t < 60; ++t)
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}})
            for (auto [kind, nxc] : {std::pair {prb_kind::direct, false}, {prb_kind::first, false},
                         {prb_kind::depthwise, false}, {prb_kind::direct, true}, {prb_kind::depthwise, true}}) {
                const conv_case_t k = random_case(gen, blk, 1 << 30, kind, nxc);
                conv_conf_t c;
                std::string why;
                ASSERT_EQ(init_of(c, k, level, why), status::success) << why;
                // A 1x1 problem regrouped into longer rows, or reduced to unit stride.
                if (c.ow != k.d.ow || c.rtus) continue;
                const conv_desc &p = k.d;
                const bool grouped = p.g > 1;
                const tensor_desc s(p.src_dims(), k.src_tag), d(p.dst_dims(), k.dst_tag),
                        w(p.wei_dims(grouped), c.wei_tag);
                const int sp = p.ndims - 2;     // spatial dims
                const int wo = grouped ? 1 : 0; // weights: [g,] o, i, [d,] [h,] w
                const bool dw = kind == prb_kind::depthwise;
                EXPECT_EQ(s.stride(0), c.src_n_stride());
                EXPECT_EQ(s.stride(1) * (nxc ? c.ic_block : 1),
                        kind == prb_kind::first ? c.src_ic_stride() : c.src_c_stride());
                EXPECT_EQ(s.stride(1 + sp), c.src_w_stride());
                EXPECT_EQ(d.stride(0), c.dst_n_stride());
                EXPECT_EQ(d.stride(1) * (nxc ? c.oc_block : 1), c.dst_c_stride()); // nxc: a block is a slice
                EXPECT_EQ(d.stride(1 + sp), c.dst_w_stride());
                if (sp >= 2) {
                    EXPECT_EQ(s.stride(sp), c.src_h_stride());
                    EXPECT_EQ(d.stride(sp), c.dst_h_stride());
                    EXPECT_EQ(w.stride(wo + 1 + sp - 1), c.wei_kh_stride());
                }
                if (sp == 3) {
                    EXPECT_EQ(s.stride(2), c.src_d_stride());
                }
                EXPECT_EQ(w.stride(wo + 2 + sp - 1), c.wei_kw_stride());
                if (dw) {
                    EXPECT_EQ(w.stride(0), c.wei_ocb_stride()); // Goihw16g: g blocks outermost
                } else {
                    if (grouped) {
                        EXPECT_EQ(w.stride(0), c.wei_g_stride());
                    }
                    EXPECT_EQ(w.stride(wo), c.wei_ocb_stride());
                    EXPECT_EQ(w.stride(wo + 1), c.wei_icb_stride());
                }
            }
}

TEST(ConvJitConf, RegisterBudgetHolds) {
    auto check = [](const conv_conf_t &c, const conv_case_t &k, prb_kind kind) {
        const int nvec = c.nb_oc_blocking * c.oc_vecs;
        const int bcast = c.bcast_embedded || kind == prb_kind::depthwise ? 0 : 1;
        // Weights read by the FMAs take no register: only direct kernels with a broadcast
        // register and whole groups read them so.
        const int past_acc = c.n_vregs - c.ur_w * nvec;
        EXPECT_GE(past_acc, std::max(nvec - c.wei_mem_vecs + bcast, c.n_post_temps)) << impl::to_string(c);
        if (c.wei_mem_vecs) {
            EXPECT_TRUE(c.kind == conv_kernel_kind::direct && bcast && !c.nb_oc_blocking_tail) << impl::to_string(c);
            EXPECT_LE(c.wei_mem_vecs, nvec) << impl::to_string(c);
        }
        // An AVX2 channels-last dst with a partial last block keeps its mask in the last
        // register, beside the sum's temporary.
        if (c.level == isa::avx2 && c.act_nxc() && c.oc_tail) {
            EXPECT_GE(past_acc, 2) << impl::to_string(c);
        }
        // The first-layer kernel's groups divide the blocks; depthwise and direct ones may
        // end in a smaller group.
        EXPECT_EQ(c.nb_oc % c.nb_oc_blocking, c.nb_oc_blocking_tail);
        if (c.kind == conv_kernel_kind::first) {
            EXPECT_EQ(c.nb_oc_blocking_tail, 0) << impl::to_string(c);
        }
        EXPECT_EQ(c.n_oc_groups() % c.nb_oc_chunk, 0);
        // Balanced register blocks: ur_w is the largest, the others one pixel fewer.
        const impl::conv_ur_split_t split = impl::conv_ur_split(c.oh_block * c.ow, c.ur_w, c.ur_balanced);
        EXPECT_EQ(split.n_large * split.large + split.n_small * split.small, c.oh_block * c.ow);
        EXPECT_EQ(split.large, c.ur_w) << impl::to_string(c);
        EXPECT_TRUE(split.n_small == 0 || split.small == split.large - 1);
        EXPECT_EQ(c.oh % c.oh_block, 0);
        EXPECT_EQ(c.simd_w * c.oc_vecs, c.oc_block);
        // A regrouped 1x1 keeps the pixel count (channels-last small images may fold into one).
        EXPECT_EQ(c.mb * c.od * c.oh * c.ow, k.d.mb * k.d.od * k.d.oh * k.d.ow);
    };
    std::mt19937 gen(6);
    for (int t = 0; t < 200; ++t)
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}, {isa::avx2, 16}})
            for (prb_kind kind : {prb_kind::direct, prb_kind::first, prb_kind::depthwise}) {
                const conv_case_t k = random_case(gen, blk, 1 << 30, kind);
                conv_conf_t c;
                std::string why;
                ASSERT_EQ(init_of(c, k, level, why), status::success) << why;
                check(c, k, kind);
            }
    // Channels-last: the AVX2 oc-tail mask.
    for (int t = 0; t < 200; ++t)
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}})
            for (prb_kind kind : {prb_kind::direct, prb_kind::depthwise}) {
                const conv_case_t k = random_case(gen, blk, 1 << 30, kind, true);
                conv_conf_t c;
                std::string why;
                ASSERT_EQ(init_of(c, k, level, why), status::success) << why;
                check(c, k, kind);
            }
}

TEST(ConvJitConf, PicksBlocksOfTheIsa) {
    // The blocking this test expects is the reference machine's, whatever the CPU's model.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    const conv_desc d = parse_conv_desc("mb1ic64ih56oc64oh56kh3ph1");
    conv_conf_t c;
    std::string why;
    using ft = format_tag;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why), status::success);
    EXPECT_EQ(c.kind, conv_kernel_kind::direct);
    EXPECT_EQ(c.simd_w, 16);
    EXPECT_EQ(c.oc_block, 16);
    EXPECT_EQ(c.wei_tag, ft::OIhw16i16o);
    EXPECT_GE(c.ur_w * c.nb_oc_blocking, 8); // enough accumulators to hide the FMA latency
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw16c, ft::nChw16c, {}, isa::avx2, why), status::success);
    EXPECT_EQ(c.simd_w, 8);
    EXPECT_EQ(c.oc_vecs, 2);
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why), status::success);
    EXPECT_EQ(c.wei_tag, ft::OIhw8i8o);
    EXPECT_GE(c.ur_w * c.nb_oc_blocking * c.oc_vecs, 8);
    // A 7x7 1x1 output becomes one 49-pixel row; a strided one runs 7 rows per call, or reads
    // a dense copy of the image, as one 49-pixel row too.
    ASSERT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc("mb16ic2048ih7oc512oh7kh1ph0"), ft::nChw16c, ft::nChw16c, {},
                      isa::avx512_core, why),
            status::success);
    EXPECT_EQ(c.ow, 49);
    const conv_desc strided = parse_conv_desc("mb16ic1024ih14oc2048oh7kh1sh2ph0");
    impl::conv_conf_hint_t no_copy;
    no_copy.rtus = 0;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, strided, ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why, no_copy),
            status::success);
    EXPECT_FALSE(c.rtus);
    EXPECT_EQ(c.oh_block, 7);
    ASSERT_EQ(
            impl::init_conf_conv_fwd(c, strided, ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why), status::success);
    EXPECT_TRUE(c.rtus);
    EXPECT_EQ(c.ow, 49);
    ASSERT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc("g32mb1ic32ih10oc32oh10kh3ph1"), ft::nChw16c, ft::nChw16c, {},
                      isa::avx512_core, why),
            status::success);
    EXPECT_EQ(c.kind, conv_kernel_kind::depthwise);
    EXPECT_EQ(c.wei_tag, ft::Goihw16g);
    ASSERT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc("mb1ic3ih20oc16oh10kh3sh2ph1"), ft::nchw, ft::nChw16c, {},
                      isa::avx512_core, why),
            status::success);
    EXPECT_EQ(c.kind, conv_kernel_kind::first);
}

// A strided 1x1 direct convolution without padding and g = 1 on blocked src reads a dense
// copy of each image (conv_conf_t::rtus) where the copy fits a quarter of L2 and each copied
// float meets at least 32 cycles of FMAs: oc >= 32 x the FMA lanes a cycle (reference model:
// 16 for ymm and split zmm, 32 for full-width zmm; L2 1 MiB; a last-level share of 4 MiB);
// or where it fits the whole L2 and each float meets 64 cycles; or, where a pixel's channel
// block fills whole cache lines (16 channels) and sw > 1, where it fits the last-level share
// and each float meets 32 cycles. The conf then describes the copy with unit strides and keeps
// the user's problem; the hint turns it off, or on wherever the problem allows.
TEST(ConvJitConf, ReducesStrided1x1ToUnitStrideWhereTheCopyPays) {
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    using ft = format_tag;
    conv_conf_t c;
    std::string why;
    impl::conv_conf_hint_t on, off;
    on.rtus = 1;
    off.rtus = 0;
    auto rtus = [&](const char *text, ft tag, isa level, const impl::conv_conf_hint_t &hint = {}) {
        EXPECT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc(text), tag, tag, {}, level, why, hint), status::success)
                << text << ": " << why;
        return c.rtus;
    };
    // res5a_branch1: a 196 KiB copy, oc 2048. Its conf reads the copy: unit strides, src dims
    // those of dst (one 49-pixel row), the user's problem kept.
    EXPECT_TRUE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_EQ(c.sh, 1);
    EXPECT_EQ(c.sw, 1);
    EXPECT_EQ(c.ih * c.iw, 49);
    EXPECT_EQ(c.oh * c.ow, 49);
    EXPECT_EQ(c.rtus_user.ih, 14);
    EXPECT_EQ(c.rtus_user.iw, 14);
    EXPECT_EQ(c.rtus_user.oh, 7);
    EXPECT_EQ(c.rtus_user.ow, 7);
    EXPECT_EQ(c.rtus_user.sh, 2);
    EXPECT_EQ(c.rtus_user.sw, 2);
    EXPECT_NE(impl::to_string(c).find(" rtus=id1ih14iw14od1oh7ow7sd1sh2sw2"), std::string::npos) << impl::to_string(c);
    EXPECT_TRUE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nChw8c, isa::avx2));
    // Channels-last src is read in place unless asked (its pixels' channels are runs of lines).
    EXPECT_FALSE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nhwc, isa::avx512_core));
    EXPECT_TRUE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nhwc, isa::avx512_core, on));
    EXPECT_FALSE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nChw16c, isa::avx512_core, off));
    EXPECT_EQ(c.sh, 2);
    // oc 512: 32 cycles per float with 16 lanes a cycle (full-width zmm's 32: below).
    EXPECT_TRUE(rtus("mb16ic1024ih14oc512oh7kh1sh2", ft::nChw8c, isa::avx2));
    EXPECT_TRUE(rtus("mb16ic1024ih14oc512oh7kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_FALSE(rtus("mb16ic1024ih14oc256oh7kh1sh2", ft::nChw8c, isa::avx2));
    // res4a_branch1: a 392 KiB copy, over a quarter of 1 MiB but within it, so each copied
    // float must meet 64 FMA cycles: oc 1024 at 16 lanes a cycle does.
    EXPECT_TRUE(rtus("mb16ic512ih28oc1024oh14kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_TRUE(rtus("mb16ic512ih28oc1024oh14kh1sh2", ft::nChw8c, isa::avx2));
    {
        // Full-width zmm, 32 lanes a cycle: oc 512 is 16 cycles, too few for any copy; oc
        // 1024 32, enough for res4a_branch1's copy past a quarter of L2 on 16-channel blocks.
        impl::machine_model_t full;
        full.avx512.full_width = true;
        const impl::machine_model_override_t on_full {full};
        EXPECT_FALSE(rtus("mb16ic1024ih14oc512oh7kh1sh2", ft::nChw16c, isa::avx512_core));
        EXPECT_TRUE(rtus("mb16ic1024ih14oc1024oh7kh1sh2", ft::nChw16c, isa::avx512_core));
        EXPECT_TRUE(rtus("mb16ic512ih28oc1024oh14kh1sh2", ft::nChw16c, isa::avx512_core));
        EXPECT_FALSE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw16c, isa::avx512_core));
        EXPECT_TRUE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw16c, isa::avx512_core, on));
    }
    // res3a_branch1: a 784 KiB copy with oc 512, 32 cycles: off where a pixel's block is half
    // a line (nChw8c: the strided src reads every line), on where it is a whole line (nChw16c,
    // AVX-512 or under the AVX2 cap: the strided src skips lines); res4a_branch2a's (oc 256,
    // 16 cycles) is not.
    EXPECT_FALSE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw8c, isa::avx2));
    EXPECT_TRUE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_TRUE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw16c, isa::avx2));
    EXPECT_FALSE(rtus("mb16ic512ih28oc256oh14kh1sh2", ft::nChw16c, isa::avx2));
    // On 16-channel blocks, a copy of exactly the last-level share (32 x 32 pixels of 1024
    // channels, 4 MiB), and not one block past it; the 3-D layout alike.
    EXPECT_TRUE(rtus("mb16ic1024ih64oc512oh32kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_FALSE(rtus("mb16ic1040ih64oc512oh32kh1sh2", ft::nChw16c, isa::avx512_core));
    EXPECT_TRUE(rtus("mb16ic256id8ih56iw56oc512od4oh28ow28kd1kh1kw1sd2sh2sw2", ft::nCdhw16c, isa::avx512_core));
    // With sw 1 the src reads every line of the rows it reads: the rule of 8-channel blocks.
    EXPECT_FALSE(rtus("mb16ic256ih56iw56oc512oh28ow56kh1kw1sh2sw1", ft::nChw16c, isa::avx512_core));
    // 32 cycles with a copy of exactly a quarter of L2 (8 x 8 pixels of 1024 channels, 256
    // KiB), and not one channel block past it.
    EXPECT_TRUE(rtus("mb16ic1024ih16oc512oh8kh1sh2", ft::nChw8c, isa::avx2));
    EXPECT_FALSE(rtus("mb16ic1032ih16oc512oh8kh1sh2", ft::nChw8c, isa::avx2));
    {
        // A 512 KiB L2 (Zen 3): res4a_branch1 and res5a_branch1 past its quarter with 64 and
        // 128 cycles; a copy of exactly the L2 (2048 channels), not one block past it, nor a
        // made-up res3a_branch1 with oc 2048 (784 KiB, 128 cycles).
        impl::machine_model_t half_mib_l2;
        half_mib_l2.l2_bytes = 512 << 10;
        const impl::machine_model_override_t on_small_l2 {half_mib_l2};
        EXPECT_TRUE(rtus("mb16ic512ih28oc1024oh14kh1sh2", ft::nChw8c, isa::avx2));
        EXPECT_TRUE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nChw8c, isa::avx2));
        EXPECT_TRUE(rtus("mb16ic2048ih16oc2048oh8kh1sh2", ft::nChw8c, isa::avx2));
        EXPECT_FALSE(rtus("mb16ic2056ih16oc2048oh8kh1sh2", ft::nChw8c, isa::avx2));
        EXPECT_FALSE(rtus("mb16ic256ih56oc2048oh28kh1sh2", ft::nChw8c, isa::avx2));
        // On 16-channel blocks res3a_branch1's copy, past this L2, within the last-level share,
        // and res5a_branch2a's (196 KiB, 32 cycles) past its quarter, which 8-channel ones
        // leave off.
        EXPECT_TRUE(rtus("mb16ic256ih56oc512oh28kh1sh2", ft::nChw16c, isa::avx2));
        EXPECT_TRUE(rtus("mb16ic1024ih14oc512oh7kh1sh2", ft::nChw16c, isa::avx2));
        EXPECT_FALSE(rtus("mb16ic1024ih14oc512oh7kh1sh2", ft::nChw8c, isa::avx2));
    }
    // An oh_block hint asks for the strided problem's rows: no copy, and with one asked an error.
    impl::conv_conf_hint_t rows;
    rows.oh_block = 7;
    EXPECT_FALSE(rtus("mb16ic1024ih14oc2048oh7kh1sh2", ft::nChw16c, isa::avx512_core, rows));
    EXPECT_EQ(c.oh_block, 7);
    rows.rtus = 1;
    EXPECT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc("mb16ic1024ih14oc2048oh7kh1sh2"), ft::nChw16c, ft::nChw16c,
                      {}, isa::avx512_core, why, rows),
            status::unimplemented);
    EXPECT_NE(why.find("oh_block hint 7"), std::string::npos) << why;
    // Not for unit strides, padding, kernels wider than 1 or groups; asking is then an error.
    for (const char *text : {"mb1ic1024ih7oc2048oh7kh1", "mb1ic1024ih14oc2048oh8kh1sh2ph1",
                 "mb1ic1024ih14oc2048oh7kh3sh2ph1", "g2mb1ic1024ih14oc2048oh7kh1sh2"}) {
        EXPECT_FALSE(rtus(text, ft::nChw16c, isa::avx512_core)) << text;
        EXPECT_EQ(impl::init_conf_conv_fwd(
                          c, parse_conv_desc(text), ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why, on),
                status::unimplemented)
                << text;
        EXPECT_NE(why.find("reduce to unit stride takes a strided 1x1"), std::string::npos) << why;
    }
}

// AVX2 prefetches the next src rows once per oc chunk, in the call of the chunk's last
// oc-block group; AVX-512, depthwise and the hint prefetch = 2 in every call; the hint
// prefetch = 0 turns both off.
TEST(ConvJitConf, Avx2PrefetchesNextRowsOncePerChunk) {
    // The blocking this test expects is the reference machine's, whatever the CPU's model.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    using ft = format_tag;
    conv_conf_t c;
    std::string why;
    const conv_desc d = parse_conv_desc("mb2ic256ih14oc64oh14kh1ph0");
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why), status::success) << why;
    EXPECT_GT(c.nb_oc_chunk, 1) << impl::to_string(c);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_TRUE(c.src_prefetch_last_group);
    EXPECT_NE(impl::to_string(c).find(":last_group"), std::string::npos) << impl::to_string(c);

    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why), status::success);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
    impl::conv_conf_hint_t off;
    off.prefetch = 0;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why, off), status::success);
    EXPECT_EQ(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
    impl::conv_conf_hint_t every;
    every.prefetch = 2;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, d, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why, every), status::success);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
    // Depthwise groups read their own channels: each call prefetches its own (asked for here:
    // a src this small is left to the cache, ConvJitConf.DepthwisePrefetchesSrcOnlyFromMemory).
    // On blocked layouts each group walks its rows alone (chunks of one group); channels-last
    // ones keep chunks, their groups sharing each pixel's lines.
    const conv_desc dw = parse_conv_desc("g64mb1ic64ih28oc64oh28kh3ph1");
    impl::conv_conf_hint_t on;
    on.prefetch = 1;
    ASSERT_EQ(impl::init_conf_conv_fwd(c, dw, ft::nhwc, ft::nhwc, {}, isa::avx2, why, on), status::success);
    EXPECT_EQ(c.kind, conv_kernel_kind::depthwise);
    EXPECT_GT(c.nb_oc_chunk, 1) << impl::to_string(c);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
    ASSERT_EQ(impl::init_conf_conv_fwd(c, dw, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why, on), status::success);
    EXPECT_EQ(c.kind, conv_kernel_kind::depthwise);
    EXPECT_EQ(c.nb_oc_chunk, 1) << impl::to_string(c);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
    // One oc-block group per chunk: its calls prefetch as before.
    ASSERT_EQ(impl::init_conf_conv_fwd(
                      c, parse_conv_desc("mb2ic16ih14oc16oh14kh3ph1"), ft::nChw8c, ft::nChw8c, {}, isa::avx2, why),
            status::success);
    EXPECT_EQ(c.nb_oc_chunk, 1) << impl::to_string(c);
    EXPECT_GT(c.src_prefetch_dist, 0);
    EXPECT_FALSE(c.src_prefetch_last_group);
}

namespace {

// The reference machine with a last-level share of 256 KiB, so that small problems take src
// from memory.
impl::machine_model_t small_llc_model() {
    impl::machine_model_t m;
    m.l3_share_bytes = 256 << 10;
    return m;
}

// `text` on activations `act` with bias and relu 0.25 after it, weights oihw (goihw if grouped).
conv_case_t biased_relu_case(const char *text, format_tag act) {
    conv_case_t k;
    k.d = parse_conv_desc(text);
    k.d.with_bias = true;
    k.src_tag = k.dst_tag = act;
    k.wei_tag = k.d.g > 1 ? format_tag::goihw : format_tag::oihw;
    k.po.append_eltwise(eltwise_alg::relu, 0.25f);
    return k;
}

// k's direct kernel at `level` under `hint`, or null after a failure naming the reason.
std::unique_ptr<conv_fwd_jit_t> create_direct(const conv_case_t &k, isa level, const conv_conf_hint_t &hint) {
    std::unique_ptr<conv_fwd_jit_t> jit;
    std::string why;
    if (conv_fwd_jit_t::create(jit, make_prb(k), level, conv_kernel_kind::direct, why, hint) != status::success) {
        ADD_FAILURE() << k.str() << ": " << why;
        jit.reset();
    }
    return jit;
}

// Where each of jit's items writes: its offset in a dst of k's layout.
std::vector<dim_t> item_dst_offsets(const conv_fwd_jit_t &jit, const conv_case_t &k) {
    const impl::conv_prb_t prb = make_prb(k);
    const tensor src(prb.src), wei(tensor_desc(prb.wei.dims(), jit.wei_tag())), dst(prb.dst);
    const impl::conv_args_t args {src.f32(), wei.f32(), nullptr, dst.f32()};
    std::vector<dim_t> off(static_cast<size_t>(jit.n_items()));
    for (dim_t it = 0; it < jit.n_items(); ++it)
        off[static_cast<size_t>(it)] = jit.call_args(it, 0, args).dst - dst.f32();
    return off;
}

} // namespace

// An AVX2 1x1 convolution on blocked layouts whose src comes from memory (all the images past a
// core's last-level share) splits its reduction into the fewest ic chunks whose weights fit
// half of L1, as even as their count allows, and runs each image's chunks in turn; its oc
// chunks stay those of the whole reduction.
// With src in that share, on AVX-512, with a sum, on channels-last tensors, on a 3x3 kernel or
// reduced to unit stride it keeps the whole reduction, and weights past L2's budget split as
// before: each chunk over all the images.
TEST(ConvJitConf, Avx2PointwiseSplitsIcPerImageFromMemory) {
    using ft = format_tag;
    const impl::machine_model_t small = small_llc_model();
    auto conf_of = [](const char *desc, ft act, isa level, const post_ops &po = {}, const conv_conf_hint_t &hint = {}) {
        conv_conf_t c;
        std::string why;
        EXPECT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc(desc), act, act, po, level, why, hint), status::success)
                << desc << ": " << why;
        return c;
    };
    const char *const pointwise = "mb2ic1000ih14oc72oh14kh1ph0"; // src 1.5 MiB; ic and oc tails on 16
    {
        const impl::machine_model_override_t pin(small);
        // ic 1032 on 8-channel blocks: 129 blocks in 3 chunks of 43 (not 64, 64 and 1); oc 512
        // over ic 2048: oc chunks that the whole reduction's weights of L2's budget bound.
        const std::pair<const char *, ft> cases[] = {{pointwise, ft::nChw8c}, {pointwise, ft::nChw16c},
                {"mb1ic1032ih14oc40oh14kh1ph0", ft::nChw8c}, {"mb2ic2048ih14oc512oh14kh1ph0", ft::nChw8c}};
        for (const auto &[desc, act] : cases) {
            const conv_conf_t c = conf_of(desc, act, isa::avx2);
            const std::string text = impl::to_string(c);
            EXPECT_TRUE(c.ic_chunks_per_image) << text;
            EXPECT_NE(text.find(":per_image"), std::string::npos) << text;
            // The fewest chunks whose weights fit half of L1, as even as their count allows.
            const dim_t wei_bytes_per_icb = c.nb_oc_blocking * c.wei_icb_stride() * 4;
            const dim_t most = small.l1d_bytes / 2 / wei_bytes_per_icb;
            const dim_t n_chunks = (c.nb_ic + most - 1) / most;
            EXPECT_GT(n_chunks, 1) << text;
            EXPECT_EQ(c.nb_ic_blocking, (c.nb_ic + n_chunks - 1) / n_chunks) << text;
            // Oc chunks as without the split: the groups whose weights over all of ic fit
            // L2's budget together.
            EXPECT_LE(c.nb_oc_chunk * wei_bytes_per_icb * c.nb_ic, small.l2_bytes / 2) << text;
            if (c.ic == 2048) {
                EXPECT_LT(c.nb_oc_chunk, c.n_oc_groups()) << text;
            } else {
                EXPECT_EQ(c.nb_oc_chunk, c.n_oc_groups()) << text;
            }
        }
        // The strided one keeps its own rows (no copy reduced to unit stride asked for).
        conv_conf_hint_t no_rtus;
        no_rtus.rtus = 0;
        const conv_conf_t strided = conf_of("mb2ic1000ih28oc72oh14kh1sh2ph0", ft::nChw8c, isa::avx2, {}, no_rtus);
        EXPECT_TRUE(strided.ic_chunks_per_image) << impl::to_string(strided);
        EXPECT_LT(strided.nb_ic_blocking, strided.nb_ic);

        EXPECT_FALSE(conf_of(pointwise, ft::nChw16c, isa::avx512_core).ic_chunks_per_image);
        const conv_conf_t sum = conf_of(pointwise, ft::nChw8c, isa::avx2, post_ops().append_sum(1.f));
        EXPECT_EQ(sum.nb_ic_blocking, sum.nb_ic) << impl::to_string(sum);
        EXPECT_FALSE(sum.ic_chunks_per_image);
        const conv_conf_t nxc = conf_of(pointwise, ft::nhwc, isa::avx2);
        EXPECT_EQ(nxc.nb_ic_blocking, nxc.nb_ic) << impl::to_string(nxc);
        EXPECT_FALSE(nxc.ic_chunks_per_image);
        const conv_conf_t k3 = conf_of("mb2ic1000ih14oc72oh14kh3ph1", ft::nChw8c, isa::avx2);
        EXPECT_FALSE(k3.ic_chunks_per_image) << impl::to_string(k3);
        conv_conf_hint_t rtus;
        rtus.rtus = 1;
        const conv_conf_t copy = conf_of("mb2ic1000ih28oc72oh14kh1sh2ph0", ft::nChw8c, isa::avx2, {}, rtus);
        EXPECT_TRUE(copy.rtus);
        EXPECT_FALSE(copy.ic_chunks_per_image) << impl::to_string(copy);
    }
    {
        // The same src within the last-level share: one call per row over the whole reduction.
        const impl::machine_model_override_t reference {impl::machine_model_t {}};
        const conv_conf_t c = conf_of(pointwise, ft::nChw8c, isa::avx2);
        EXPECT_EQ(c.nb_ic_blocking, c.nb_ic) << impl::to_string(c);
        EXPECT_FALSE(c.ic_chunks_per_image);
    }
    {
        // Weights past L2's budget (a 3x3 of ic 2048 on a 64 KiB L2): chunks for L2, each over
        // every image's rows of one oc-block group.
        impl::machine_model_t tiny_l2 = small;
        tiny_l2.l2_bytes = 64 << 10;
        const impl::machine_model_override_t pin(tiny_l2);
        const conv_conf_t c = conf_of("mb2ic2048ih7oc64oh7kh3ph1", ft::nChw8c, isa::avx2);
        EXPECT_LT(c.nb_ic_blocking, c.nb_ic) << impl::to_string(c);
        EXPECT_FALSE(c.ic_chunks_per_image);
        EXPECT_EQ(c.nb_oc_chunk, 1);
    }
}

// Those chunks run one image of one oc chunk at a time, and give the reference's results as
// 1, 2 and 3 thread parts (parts ending inside an image and inside a run of chunks): channel
// tails, 8- and 16-channel blocks, strided rows (calls of 2 rows, oc chunks of 3 groups, the
// last group prefetching), bias and an eltwise post-op, mb 1 to 3.
TEST(ConvJit, Avx2IcChunksPerImageMatchReference) {
    if (isa_missing(isa::avx2)) GTEST_SKIP() << "no avx2";
    const impl::machine_model_override_t pin(small_llc_model());
    conv_conf_hint_t no_rtus;
    no_rtus.rtus = 0;
    for (const char *text : {"mb3ic1000ih7oc72oh7kh1ph0", "mb1ic1032ih14oc40oh14kh1ph0",
                 "mb2ic1000ih15iw13oc24oh8ow7kh1kw1sh2sw2ph0pw0", "mb2ic1000ih28oc72oh14kh1sh2ph0"})
        for (format_tag act : {format_tag::nChw8c, format_tag::nChw16c}) {
            const conv_case_t k = biased_relu_case(text, act);
            const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, isa::avx2, no_rtus);
            ASSERT_TRUE(jit);
            const conv_conf_t &c = jit->conf();
            EXPECT_TRUE(c.ic_chunks_per_image) << impl::to_string(c);
            EXPECT_GT(jit->n_ic_chunks(), 1);
            // A run is one image's items of one oc chunk.
            const dim_t run = jit->split_run_items();
            EXPECT_EQ(run, c.od * (c.oh / c.oh_block) * c.nb_oc_chunk) << impl::to_string(c);
            const std::vector<dim_t> off = item_dst_offsets(*jit, k);
            const dim_t n_stride = make_prb(k).dst.stride(0);
            for (size_t it = 0; it < off.size(); ++it)
                EXPECT_EQ(off[it] / n_stride, off[it - it % run] / n_stride) << impl::to_string(c) << " item " << it;
            const outcome_t r = check_case(k, isa::avx2, no_rtus, 83);
            EXPECT_TRUE(r.ok) << r.what;
        }
}

namespace {

// A last-level share of 256 KiB and an L2 of 64 KiB: small problems have their src in memory
// and their weights in oc chunks.
impl::machine_model_t small_caches_model() {
    impl::machine_model_t m = small_llc_model();
    m.l2_bytes = 64 << 10;
    return m;
}

} // namespace

// A convolution whose images' src overflows the last-level share while all its weights fit it
// runs each image's oc chunks together (image_outer), on either ISA and kernel size; with one
// image, with src or weights the other way, or depthwise, each chunk runs over every image.
// Reduced to unit stride, a copy of one image, it always does.
TEST(ConvJitConf, ImageOuterWhenSrcOverflowsTheLastLevelCache) {
    using ft = format_tag;
    auto conf_of = [](const char *desc, ft act, isa level, const conv_conf_hint_t &hint = {}) {
        conv_conf_t c;
        std::string why;
        EXPECT_EQ(impl::init_conf_conv_fwd(c, parse_conv_desc(desc), act, act, {}, level, why, hint), status::success)
                << desc << ": " << why;
        return c;
    };
    const impl::machine_model_t small = small_caches_model();
    // src 8 x 49 KiB (3x3: 24 x 12 KiB), weights 64 KiB (144 KiB) in chunks of L2's budget
    // (32 KiB).
    const char *const pointwise = "mb8ic64ih14oc256oh14kh1ph0", *const k3 = "mb24ic16ih14oc256oh14kh3ph1";
    conv_conf_hint_t no_rtus, rtus;
    no_rtus.rtus = 0;
    rtus.rtus = 1;
    for (const auto &[level, act] : {std::pair {isa::avx512_core, ft::nChw16c}, std::pair {isa::avx2, ft::nChw8c}}) {
        {
            const impl::machine_model_override_t pin(small);
            for (const char *desc : {pointwise, k3, "mb8ic64ih28oc256oh14kh1sh2ph0"}) {
                const conv_conf_t c = conf_of(desc, act, level, no_rtus);
                const std::string text = impl::to_string(c);
                EXPECT_TRUE(c.image_outer) << text;
                EXPECT_NE(text.find(":image_outer"), std::string::npos) << text;
                EXPECT_GT(c.n_oc_groups() / c.nb_oc_chunk, 1) << text;
            }
            // One image; 2 images within the share; weights past it (1 MiB; a 3x3's 9 MiB).
            for (const char *desc : {"mb1ic64ih14oc256oh14kh1ph0", "mb2ic64ih14oc256oh14kh1ph0",
                         "mb8ic1024ih14oc256oh14kh1ph0", "mb8ic512ih14oc512oh14kh3ph1"}) {
                const conv_conf_t c = conf_of(desc, act, level);
                EXPECT_FALSE(c.image_outer) << impl::to_string(c);
            }
            const conv_conf_t dw = conf_of("g256mb8ic256ih14oc256oh14kh3ph1", act, level);
            EXPECT_EQ(dw.kind, conv_kernel_kind::depthwise);
            EXPECT_GT(dw.n_oc_groups() / dw.nb_oc_chunk, 1) << impl::to_string(dw);
            EXPECT_FALSE(dw.image_outer) << impl::to_string(dw);
            const conv_conf_t copy = conf_of("mb1ic64ih28oc256oh14kh1sh2ph0", act, level, rtus);
            EXPECT_TRUE(copy.rtus);
            EXPECT_TRUE(copy.image_outer) << impl::to_string(copy);
        }
        // All 8 images within the reference's share of 4 MiB.
        const impl::machine_model_override_t reference {impl::machine_model_t {}};
        EXPECT_FALSE(conf_of(pointwise, act, level).image_outer);
    }
}

// Such a conf's items take one image at a time, in order (within each group), and give the
// reference's results as 1, 2 and 3 thread parts: 1x1 (rows regrouped, strided, grouped), 3x3
// with padding, split reductions (for L2, and on AVX2 in ic chunks per image as well), channel
// tails, bias and a post-op.
TEST(ConvJit, ImageOuterMatchesReference) {
    const impl::machine_model_override_t pin(small_caches_model());
    conv_conf_hint_t no_rtus;
    no_rtus.rtus = 0;
    for (const auto &[level, act] :
            {std::pair {isa::avx512_core, format_tag::nChw16c}, std::pair {isa::avx2, format_tag::nChw8c}}) {
        if (isa_missing(level)) continue;
        bool split = false, chunks_per_image = false;
        for (const char *text : {"mb8ic64ih14oc256oh14kh1ph0", "mb10ic20ih17oc120oh17kh3ph1",
                     "mb6ic64ih29iw27oc250oh15ow14kh1kw1sh2sw2ph0pw0", "g2mb8ic128ih14oc512oh14kh1ph0",
                     "mb6ic512ih7oc128oh7kh1ph0"}) {
            const conv_case_t k = biased_relu_case(text, act);
            const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, level, no_rtus);
            ASSERT_TRUE(jit);
            const conv_conf_t &c = jit->conf();
            EXPECT_TRUE(c.image_outer) << impl::to_string(c);
            const std::vector<dim_t> off = item_dst_offsets(*jit, k);
            const dim_t n_stride = make_prb(k).dst.stride(0);
            const dim_t per_image = jit->n_items() / (c.loop_groups() * k.d.mb);
            for (dim_t it = 0; it < jit->n_items(); ++it)
                EXPECT_EQ(off[static_cast<size_t>(it)] / n_stride, it / per_image % k.d.mb)
                        << impl::to_string(c) << " item " << it;
            split = split || jit->n_ic_chunks() > 1;
            chunks_per_image = chunks_per_image || c.ic_chunks_per_image;
            const outcome_t r = check_case(k, level, no_rtus, 89);
            EXPECT_TRUE(r.ok) << r.what;
        }
        EXPECT_TRUE(split);
        EXPECT_EQ(chunks_per_image, level == isa::avx2);
    }
}

// Channels-last groups of 8 or 24 input channels (AVX2's blocks) share src cache lines, so
// where the images' src overflows the last-level share and every group's weights fit it, one
// oc chunk per group is enough for image_outer, and an image's items are consecutive over all
// its groups. Such convolutions (3x3 and 1x1, odd image sizes, bias and a post-op) give the
// reference's results as 1, 2 and 3 thread parts, a reduction split for L1 too. The same
// groups on blocked layouts keep planes of their own, as do channels-last groups of 16 input
// channels (every AVX-512 group): each group walks every image in turn. So do groups whose
// weights together pass the share.
TEST(ConvJit, ChannelsLastGroupsInsideTheImage) {
    using ft = format_tag;
    const impl::machine_model_override_t pin(small_caches_model());
    conv_conf_hint_t no_rtus;
    no_rtus.rtus = 0;
    auto conf_of = [&](const char *desc, ft act, isa level) {
        conv_conf_t c;
        std::string why;
        EXPECT_EQ(
                impl::init_conf_conv_fwd(c, parse_conv_desc(desc), act, act, {}, level, why, no_rtus), status::success)
                << desc << ": " << why;
        return c;
    };
    // Each src past the 256 KiB share; the last one's reduction split for L1.
    bool split = false;
    if (!isa_missing(isa::avx2))
        for (const char *text : {"g16mb8ic128ih14oc128oh14kh3ph1", "g4mb8ic96ih23oc64oh23kh1ph0",
                     "g2mb8ic16ih26iw21oc32oh26ow21kh3kw3ph1pw1", "g2mb8ic528ih10oc16oh10kh3ph1"}) {
            const conv_case_t k = biased_relu_case(text, ft::nhwc);
            const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, isa::avx2, no_rtus);
            ASSERT_TRUE(jit);
            const conv_conf_t &c = jit->conf();
            EXPECT_TRUE(c.groups_share_src()) << impl::to_string(c);
            EXPECT_TRUE(c.groups_inside_image) << impl::to_string(c);
            EXPECT_TRUE(c.image_outer) << impl::to_string(c);
            split = split || jit->n_ic_chunks() > 1;
            const std::vector<dim_t> off = item_dst_offsets(*jit, k);
            const dim_t n_stride = make_prb(k).dst.stride(0), per_image = jit->n_items() / k.d.mb;
            std::set<dim_t> groups_of_image0;
            for (dim_t it = 0; it < jit->n_items(); ++it) {
                const dim_t o = off[static_cast<size_t>(it)];
                EXPECT_EQ(o / n_stride, it / per_image) << impl::to_string(c) << " item " << it;
                if (it < per_image) groups_of_image0.insert(o % n_stride % k.d.oc / (k.d.oc / k.d.g));
            }
            EXPECT_EQ(static_cast<dim_t>(groups_of_image0.size()), k.d.g) << impl::to_string(c);
            const outcome_t r = check_case(k, isa::avx2, no_rtus, 97);
            EXPECT_TRUE(r.ok) << r.what;

            const conv_conf_t b = conf_of(text, ft::nChw8c, isa::avx2);
            EXPECT_FALSE(b.groups_share_src()) << impl::to_string(b);
            EXPECT_FALSE(b.groups_inside_image) << impl::to_string(b);
        }
    EXPECT_EQ(split, !isa_missing(isa::avx2));
    // Groups of 16 channels (one oc block each on AVX-512), and groups of 24 whose weights, 21
    // KiB each, pass the share together.
    for (const auto &[level, desc] : {std::pair {isa::avx512_core, "g16mb8ic256ih14oc256oh14kh3ph1"},
                 std::pair {isa::avx2, "g16mb8ic256ih14oc256oh14kh3ph1"},
                 std::pair {isa::avx2, "g16mb8ic384ih14oc384oh14kh3ph1"}}) {
        const conv_conf_t c = conf_of(desc, ft::nhwc, level);
        EXPECT_EQ(c.groups_share_src(), c.ic / c.g % 16 != 0) << impl::to_string(c);
        EXPECT_FALSE(c.groups_inside_image) << impl::to_string(c);
        // One oc chunk per group: image_outer only for groups inside the image.
        if (c.n_oc_groups() == c.nb_oc_chunk) {
            EXPECT_FALSE(c.image_outer) << impl::to_string(c);
        }
    }
}

// The op behind such a conf holds the twin kernel (the same code, its prefetches NOPs), the
// items of one chunk read the same src rows, and it gives the reference's results for every
// thread split, on 1x1 (rows regrouped, strided) and 3x3 problems.
TEST(ConvJit, PrefetchOncePerChunkMatchesReference) {
    // The blocking this test expects is the reference machine's, whatever the CPU's model.
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    if (isa_missing(isa::avx2)) GTEST_SKIP() << "no avx2";
    for (const char *text : {"mb2ic256ih14oc64oh14kh1ph0", "mb2ic64ih14oc128oh7kh1sh2ph0", "mb1ic32ih9oc48oh9kh3ph1"}) {
        for (format_tag act : {format_tag::nChw8c, format_tag::nChw16c}) {
            conv_case_t k;
            k.d = parse_conv_desc(text);
            k.d.with_bias = true;
            k.src_tag = k.dst_tag = act;
            k.wei_tag = format_tag::oihw;
            const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, isa::avx2, {});
            ASSERT_TRUE(jit);
            const conv_conf_t &c = jit->conf();
            ASSERT_TRUE(c.src_prefetch_last_group) << text << ": " << impl::to_string(c);
            ASSERT_NE(jit->quiet_kernel(), nullptr);
            EXPECT_NE(jit->quiet_kernel(), &jit->kernel());
            EXPECT_NE(jit->kernel().conf_str().find(":last_group"), std::string::npos);
            // The twin is the kernel's code with every src prefetch a NOP of the same length:
            // two bytes differ per prefetch (opcode and ModRM reg field), nothing else.
            const impl::jit_generator_t &ker = jit->kernel(), &quiet = *jit->quiet_kernel();
            EXPECT_FALSE(ker.droppable_prefetches().empty());
            ASSERT_EQ(quiet.code_size(), ker.code_size());
            std::size_t n_diff = 0;
            for (std::size_t i = 0; i < ker.code_size(); ++i) n_diff += ker.code()[i] != quiet.code()[i];
            EXPECT_EQ(n_diff, 2 * ker.droppable_prefetches().size()) << text;
            // A last group of fewer blocks has a kernel of its own, which prefetches: its group
            // ends the last chunk.
            EXPECT_EQ(jit->kernels_shared().size(), c.nb_oc_blocking_tail ? 3u : 2u);
            if (c.nb_oc_blocking_tail) {
                EXPECT_FALSE(jit->kernels_shared().back()->droppable_prefetches().empty());
            }
            // The driver's rule (the last item of each run of nb_oc_chunk runs the prefetching
            // kernel) rests on the oc-block groups of a chunk being innermost: consecutive items
            // of a run read the same src rows (start and kh taps), and the next run the next rows.
            const impl::conv_prb_t prb = make_prb(k);
            const tensor src(prb.src), wei(tensor_desc(prb.wei.dims(), jit->wei_tag())), dst(prb.dst);
            const impl::conv_args_t args {src.f32(), wei.f32(), nullptr, dst.f32()};
            for (dim_t it = 0; it + 1 < jit->n_items(); ++it) {
                const bool same_run = (it + 1) % c.nb_oc_chunk != 0;
                const impl::conv_fwd_call_args_t a = jit->call_args(it, 0, args), b = jit->call_args(it + 1, 0, args);
                EXPECT_EQ(a.src == b.src && a.kh_count == b.kh_count, same_run) << text << " item " << it;
            }
            const outcome_t r = check_case(k, isa::avx2, {}, 77);
            EXPECT_TRUE(r.ok) << r.what;
        }
    }
}

// An op reduces to unit stride, unless asked, only with an image per thread it is created
// with: a part copies whole images, however few of an image's items it runs.
TEST(ConvJit, ReducesToUnitStrideWithAnImagePerThread) {
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    if (isa_missing(isa::avx2)) GTEST_SKIP() << "no avx2";
    conv_case_t k;
    k.d = parse_conv_desc("mb2ic1024ih14oc2048oh7kh1sh2"); // res5a_branch1: a copy under the reference
    k.src_tag = k.dst_tag = format_tag::nChw8c;
    k.wei_tag = format_tag::oihw;
    for (auto [nthr, mb, want] : {std::tuple {1, 1, true}, {2, 1, false}, {2, 2, true}, {3, 2, false}}) {
        k.d.mb = mb;
        impl::conv_conf_hint_t asked;
        asked.rtus = 1;
        for (const impl::conv_conf_hint_t &hint : {impl::conv_conf_hint_t {}, asked}) {
            set_num_threads(nthr);
            std::unique_ptr<conv_fwd_jit_t> jit;
            std::string why;
            const status st = conv_fwd_jit_t::create(jit, make_prb(k), isa::avx2, conv_kernel_kind::direct, why, hint);
            reset_num_threads();
            ASSERT_EQ(st, status::success) << why;
            EXPECT_EQ(jit->conf().rtus, want || hint.rtus == 1) << nthr << " threads, mb " << mb;
        }
    }
}

// Convolutions reduced to unit stride match the reference as 1, 2 and 3 thread parts (part
// boundaries inside an image): blocked by 16 and 8 and channels-last; 1-D, 2-D and 3-D; unequal
// strides; ic and oc tails; bias, sum and eltwise post-ops; a split reduction; mb 1 and 3.
TEST(ConvJit, ReducedToUnitStrideMatchesReference) {
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    struct case_t {
        const char *desc;
        bool sum = false;
        int nb_ic_blocking = 0;
    };
    const case_t cases[] = {{"mb3ic32ih14oc48oh7kh1sh2"}, {"mb1ic20ih9oc35oh5kh1sh2", true},
            {"mb2ic64ih15iw10oc32oh5ow5kh1kw1sh3sw2ph0pw0"}, {"mb2ic48iw21oc16ow7kw1sw3pw0"},
            {"mb2ic32id6ih6iw6oc32od3oh3ow3kd1kh1kw1sd2sh2sw2"}, {"mb3ic64ih8oc32oh4kh1sh2", false, 1},
            {"mb3ic1024ih8oc2048oh4kh1sh2"}};
    int n_checked = 0;
    for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}, {isa::avx2, 16}}) {
        if (isa_missing(level)) continue;
        for (const case_t &t : cases)
            for (bool nxc : {false, true}) {
                if (nxc && blk == 16 && level == isa::avx2) continue; // the blk 8 run's problem
                conv_case_t k;
                k.d = parse_conv_desc(t.desc);
                k.d.with_bias = true;
                k.src_tag = k.dst_tag = nxc ? nxc_act_tag(k.d.ndims) : blocked_act_tag(k.d.ndims, blk);
                k.wei_tag = plain_wei_tag(k.d.ndims, false);
                if (t.sum) k.po.append_sum(0.5f);
                k.po.append_eltwise(eltwise_alg::relu, 0.1f);
                conv_conf_hint_t hint;
                hint.rtus = 1;
                hint.nb_ic_blocking = t.nb_ic_blocking;
                const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, level, hint);
                ASSERT_TRUE(jit);
                const conv_conf_t &c = jit->conf();
                ASSERT_TRUE(c.rtus) << impl::to_string(c);
                if (t.nb_ic_blocking) {
                    EXPECT_GT(jit->n_ic_chunks(), 1) << impl::to_string(c);
                }
                // A thread copies each image once: its items are consecutive, before the next
                // image's, whatever the oc chunks.
                const dim_t n_stride = make_prb(k).dst.stride(0);
                const std::vector<dim_t> off = item_dst_offsets(*jit, k);
                dim_t last_n = 0;
                for (size_t it = 0; it < off.size(); ++it) {
                    const dim_t n = off[it] / n_stride;
                    EXPECT_TRUE(n == last_n || n == last_n + 1) << impl::to_string(c) << " item " << it;
                    last_n = n;
                }
                EXPECT_EQ(last_n, k.d.mb - 1);
                const outcome_t r = check_case(k, level, hint, 31);
                EXPECT_TRUE(r.ok) << r.what;
                ++n_checked;
            }
    }
    if (n_checked == 0) GTEST_SKIP() << "no avx2";
}

TEST(ConvJitConf, RejectsWithReason) {
    using ft = format_tag;
    conv_conf_t c;
    std::string why;
    // Expects st to be a refusal whose reason, left in why, holds `reason`.
    auto expect_refused = [&](status st, const char *reason) {
        EXPECT_EQ(st, status::unimplemented) << reason;
        EXPECT_NE(why.find(reason), std::string::npos) << why;
    };
    const conv_desc d = parse_conv_desc("g2mb1ic24ih8oc32oh8kh3ph1");
    expect_refused(
            impl::init_conf_conv_fwd_direct(c, d, ft::nChw16c, ft::nChw16c, {}, isa::avx512_core, why), "ic/g=12");
    const conv_desc d1 = parse_conv_desc("mb1ic24ih8oc32oh8kh3ph1");
    expect_refused(impl::init_conf_conv_fwd_direct(c, d1, ft::nChw8c, ft::nChw8c, {}, isa::avx512_core, why), "nChw8c");
    expect_refused(impl::init_conf_conv_fwd_direct(c, d1, ft::nchw, ft::nchw, {}, isa::avx2, why), "nchw");
    expect_refused(impl::init_conf_conv_fwd_direct(c, d1, ft::nhwc, ft::nChw16c, {}, isa::avx512_core, why),
            "channels-last src and dst go together");
    expect_refused(impl::init_conf_conv_fwd_dw(c, parse_conv_desc("g24mb1ic24ih8oc24oh8kh3ph1"), ft::nhwc, ft::nhwc, {},
                           isa::avx512_core, why),
            "g=24 is not a multiple of 16");
    // 32-bit displacements inside a call: a dilated tap 2^31 bytes away on channels-last (which
    // crashed), a left pad of 2^25 blocked pixels.
    for (auto [text, tag] : {std::pair {"mb1ic524288iw4oc16ow3kw2dw1023pw1023", ft::nwc},
                 {"mb1ic4096iw8oc16ow7kw2dw131071pw131071", ft::nwc},
                 {"mb1ic16iw4oc16ow3kw1sw16777216pw33554431", ft::nCw16c}}) {
        const conv_desc big = parse_conv_desc(text);
        for (isa level : {isa::avx512_core, isa::avx2}) {
            EXPECT_EQ(impl::init_conf_conv_fwd(c, big, tag, tag, {}, level, why), status::unimplemented) << text;
            EXPECT_NE(why.find("exceed 2 GiB"), std::string::npos) << why;
        }
        EXPECT_STREQ(conv_fwd(big, tag, ft::oiw, tag).impl_name(), "ref") << text;
    }
    impl::conv_conf_hint_t too_wide;
    too_wide.ur_w = 40;
    expect_refused(impl::init_conf_conv_fwd_direct(c, parse_conv_desc("mb1ic24ih8iw64oc32oh8ow64kh3kw3ph1pw1"),
                           ft::nChw8c, ft::nChw8c, {}, isa::avx2, why, too_wide),
            "no register blocking fits 16");
    expect_refused(impl::init_conf_conv_fwd_first(c, d1, ft::nchw, ft::nChw8c, {}, isa::avx2, why), "ic=24");
    expect_refused(impl::init_conf_conv_fwd_dw(c, d1, ft::nChw8c, ft::nChw8c, {}, isa::avx2, why), "g = ic = oc");
    expect_refused(impl::init_conf_conv_fwd_direct(c, d1, ft::nChw8c, ft::nChw8c, {}, isa::scalar, why), "scalar");
}

// The dispatch shortcut (conv_fwd_jit_refuses, taken unless verbose prints reasons) restates
// the depthwise and first-layer kernels' rules: whatever it refuses, create() refuses too, so
// dispatch picks the same row at any verbose level.
TEST(ConvJit, RefusalShortcutAgreesWithCreate) {
    std::mt19937 gen(91);
    int refused = 0;
    for (int t = 0; t < 60; ++t)
        for (auto [level, blk] : {std::pair {isa::avx512_core, 16}, {isa::avx2, 8}})
            for (auto [made_for, nxc] : {std::pair {prb_kind::direct, false}, {prb_kind::first, false},
                         {prb_kind::depthwise, false}, {prb_kind::direct, true}, {prb_kind::depthwise, true}}) {
                const conv_case_t k = random_case(gen, blk, 1 << 20, made_for, nxc);
                const impl::conv_prb_t prb = make_prb(k);
                for (conv_kernel_kind kind :
                        {conv_kernel_kind::direct, conv_kernel_kind::first, conv_kernel_kind::depthwise}) {
                    if (!impl::conv_fwd_jit_refuses(prb, kind)) continue;
                    ++refused;
                    std::unique_ptr<conv_fwd_jit_t> jit;
                    std::string why;
                    EXPECT_EQ(conv_fwd_jit_t::create(jit, prb, level, kind, why), status::unimplemented)
                            << impl::to_string(kind) << " on " << to_string(level) << ": " << k.str();
                }
            }
    EXPECT_GT(refused, 0) << "no problem exercised the shortcut";
}

// The AVX-512 direct kernel loops over groups of 4 input channels of a tap column instead of
// unrolling the whole block (generation time goes with the code's size: about 5 us per KiB):
// ResNet-50's first 3x3 layer fits 16 KiB where the unrolled kernel took 48 KiB. The loop's
// prefetches and its src addressing from the middle of each column hold on borders, strides,
// ic tails (groups of 4 and of 2), blocked and channels-last (whose prefetched lines are runs
// evenly spaced), and with the prefetch off.
TEST(ConvJit, Avx512IcGroupLoopMatchesReference) {
    const impl::machine_model_override_t reference {impl::machine_model_t {}};
    for (const char *text : {"mb1ic64ih56oc64oh56kh3ph1", "mb1ic128ih28oc128oh28kh3ph1", "mb2ic40ih9oc32oh9kh3ph1",
                 "mb1ic38ih11oc48oh6kh3sh2ph1", "mb1ic64ih14oc32oh14kh1ph0"})
        for (format_tag act : {format_tag::nChw16c, format_tag::nhwc})
            for (int prefetch : {-1, 0}) {
                conv_case_t k;
                k.d = parse_conv_desc(text);
                k.d.with_bias = true;
                k.src_tag = k.dst_tag = act;
                k.wei_tag = format_tag::oihw;
                conv_conf_hint_t hint;
                hint.prefetch = prefetch;
                const std::unique_ptr<conv_fwd_jit_t> jit = create_direct(k, isa::avx512_core, hint);
                ASSERT_TRUE(jit);
                EXPECT_EQ(jit->conf().src_prefetch_dist != 0, prefetch != 0) << text;
                if (std::string(text) == "mb1ic64ih56oc64oh56kh3ph1" && act == format_tag::nChw16c) {
                    EXPECT_LE(jit->kernel().code_size(), 16u * 1024) << impl::to_string(jit->conf());
                }
                if (isa_missing(isa::avx512_core)) continue;
                const outcome_t r = check_case(k, isa::avx512_core, hint, 91);
                EXPECT_TRUE(r.ok) << r.what;
            }
}
