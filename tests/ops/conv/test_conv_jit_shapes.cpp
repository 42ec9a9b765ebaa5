// SPDX-License-Identifier: Apache-2.0
// JIT forward convolutions on every problem of benchdnn's ResNet-50, GoogLeNet v1, MobileNet
// and 3-D lists at mb 1, against the reference, on each ISA this machine has, blocked and
// channels-last: small-integer data (exact f32 sums), bias and a relu, 1 and 2 thread parts
// with identical results. One case per (ISA, list, descriptor), named e.g.
// ConvShapes/ConvJitShapes.Mb1/avx2_resnet_50_mb1ic64ih56oc64oh56kh3.
//
// The lists are batch files in benchdnn syntax, $BLOCKDNN_TEST_DATA/conv/shapes_* (set by
// tests/meson.build), written by tests/data/conv/gen_shapes.py from benchdnn's inputs/conv and
// read by the library's batch reader (testing/batch.hpp), as blockdnn-bench reads them.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "conv_jit_util.hpp"
#include "common/descriptor_lists.hpp"
#include "testing/batch.hpp"

using namespace blockdnn;
using namespace conv_test;

namespace {

// The lists of tests/data/conv (gen_shapes.py writes the same ones).
const char *const list_names[] = {"shapes_resnet_50", "shapes_googlenet_v1", "shapes_mobilenet", "shapes_3d",
        "shapes_3d_1st_strided_padding", "shapes_3d_1x1_strided_no-padding", "shapes_3d_1x1_strided_padding",
        "shapes_3d_1x1_unit-stride_no-padding", "shapes_3d_1x1_unit-stride_padding", "shapes_3d_2d_strided_padding",
        "shapes_3d_strided_no-padding", "shapes_3d_strided_padding", "shapes_3d_unit-stride_no-padding",
        "shapes_3d_unit-stride_padding"};

// Sanitized builds run every 8th problem of each list: the reference is slow there.
#if defined(__SANITIZE_ADDRESS__)
constexpr int problem_step = 8;
#else
constexpr int problem_step = 1;
#endif

// One case: a descriptor of a list on one ISA, or a list that could not be read (`error`).
struct shape_case_t {
    isa level = isa::avx2;
    std::string list; // "shapes_resnet_50"
    int index = 0;    // the descriptor's place in the list (0-based): seeds the data
    int line = 0;     // its line in the file
    std::string text; // the descriptor as written
    std::string name; // the gtest name
    std::string error;
};

// How gtest shows a case (--gtest_list_tests, failures): where the descriptor comes from.
void PrintTo(const shape_case_t &c, std::ostream *os) {
    *os << to_string(c.level) << " " << c.list << ":" << c.line << " " << c.text;
}

std::string gtest_name(const std::string &s) {
    std::string n = s;
    for (char &ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
}

// Every case, in the order list -> descriptor -> ISA (so the two ISAs of a descriptor run one
// after the other and share its reference result).
std::vector<shape_case_t> all_cases() {
    std::vector<shape_case_t> cases;
    const char *root = bdtest::test_data_root();
    if (!root) {
        shape_case_t c;
        c.name = "BLOCKDNN_TEST_DATA_unset";
        c.error = bdtest::test_data_unset;
        return {c};
    }
    for (const char *list : list_names) {
        const std::string path = std::string(root) + "/conv/" + list;
        const std::string short_name = gtest_name(std::string(list).substr(std::strlen("shapes_")));
        // The library's benchdnn batch reader: '#' comments, quoted names, and the driver
        // (conv) from the folder's name.
        std::vector<bdrv::problem_t> problems;
        std::string read_error;
        try {
            bdrv::batch_reader_t reader;
            reader.read_file(path);
            problems = reader.problems();
        } catch (const std::exception &e) {
            read_error = e.what();
        }
        const std::size_t first = cases.size();
        for (int index = 0; index < static_cast<int>(problems.size()); ++index) {
            if (index % problem_step != 0) continue;
            const bdrv::problem_t &prob = problems[static_cast<std::size_t>(index)];
            shape_case_t c;
            c.list = list;
            c.index = index;
            c.line = std::atoi(prob.where.substr(prob.where.rfind(':') + 1).c_str());
            c.text = prob.desc;
            std::string base;
            try {
                if (prob.driver != "conv") throw std::runtime_error("driver " + prob.driver + ", not conv");
                conv_desc d = parse_conv_desc(prob.desc);
                d.mb = 1;
                base = d.str();
            } catch (const std::exception &e) {
                c.error = c.list + ":" + std::to_string(c.line) + ": " + e.what();
                base = "unparsable" + std::to_string(index);
            }
            for (isa level : {isa::avx512_core, isa::avx2}) {
                c.level = level;
                c.name = gtest_name(std::string(to_string(level)) + "_" + short_name + "_" + base);
                cases.push_back(c);
            }
        }
        if (cases.size() == first) {
            shape_case_t c;
            c.list = list;
            c.name = short_name + "_unreadable";
            c.error = read_error.empty() ? path + ": no descriptors (empty file)" : read_error;
            cases.push_back(c);
        }
    }
    // Descriptors that print the same (same problem, another name in benchdnn) get their line.
    std::map<std::string, int> seen;
    for (const shape_case_t &c : cases) ++seen[c.name];
    for (shape_case_t &c : cases)
        if (seen[c.name] > 1) c.name += "_line" + std::to_string(c.line);
    return cases;
}

// The logical values of t, canonical order.
std::vector<float> logical_of(const tensor &t) {
    std::vector<float> v;
    v.reserve(static_cast<std::size_t>(t.desc().nelems()));
    for_each_index(t.desc(), [&](const dim_t *idx) { v.push_back(t.f32()[t.desc().offset(idx)]); });
    return v;
}

// One descriptor's problem at mb 1 with bias and a relu, its data and the reference result.
struct problem_t {
    std::string list;
    int index = -1;
    conv_desc d;
    std::string name; // benchdnn's name of the layer
    post_ops po;
    format_tag plain = format_tag::undef, wplain = format_tag::undef;
    tensor src, wei, bia;
    std::vector<float> want;
};

problem_t make_problem(const shape_case_t &c) {
    problem_t p;
    p.list = c.list;
    p.index = c.index;
    p.d = parse_conv_desc(c.text, &p.name);
    conv_desc &d = p.d;
    d.mb = 1;
    d.with_bias = true;
    p.po = post_ops().append_eltwise(eltwise_alg::relu);
    p.plain = plain_act_tag(d.ndims);
    p.wplain = plain_wei_tag(d.ndims, d.g > 1);
    p.src = tensor(tensor_desc(d.src_dims(), p.plain));
    p.wei = tensor(tensor_desc(d.wei_dims(d.g > 1), p.wplain));
    p.bia = tensor(tensor_desc(d.bia_dims(), format_tag::x));
    const tensor ref(tensor_desc(d.dst_dims(), p.plain));
    fill_int(p.src, 11u + static_cast<unsigned>(c.index), 3);
    fill_int(p.wei, 12u + static_cast<unsigned>(c.index), 2);
    fill_int(p.bia, 13u + static_cast<unsigned>(c.index), 4);
    {
        isa_guard g;
        set_max_isa(isa::scalar);
        conv_fwd(d, p.plain, p.wplain, p.plain, p.po).execute(p.src, p.wei, p.bia, ref);
    }
    p.want = logical_of(ref);
    return p;
}

class ConvJitShapes : public ::testing::TestWithParam<shape_case_t> {
public:
    // The problem of the last case run: the next case (the other ISA) reuses its reference.
    static std::unique_ptr<problem_t> last;
    // (problem, ISA, layout) triples the ISA's kernels leave to others, per list.
    static std::map<std::string, int> skipped;

    static void TearDownTestSuite() {
        last.reset();
        for (const auto &[list, n] : skipped)
            std::printf("%s: %d (problem, ISA, layout) triples this ISA's kernels leave to others\n", list.c_str(), n);
        skipped.clear();
    }
};

std::unique_ptr<problem_t> ConvJitShapes::last;
std::map<std::string, int> ConvJitShapes::skipped;

// Checks one layout (blocked or channels-last) of a problem on one ISA.
void check_layout(const problem_t &p, isa level, bool nxc, int &skipped) {
    const conv_desc &d = p.d;
    conv_case_t k;
    k.d = d;
    k.po = p.po;
    const int blk = level == isa::avx512_core ? 16 : 8;
    // Blocked: a first layer reads the plain input (first-layer kernel). Channels-last src and
    // dst go to the direct kernel, a first layer too (as an ic tail).
    k.src_tag = nxc ? nxc_act_tag(d.ndims) : d.ic <= 4 && d.g == 1 ? p.plain : blocked_act_tag(d.ndims, blk);
    k.dst_tag = nxc ? nxc_act_tag(d.ndims) : blocked_act_tag(d.ndims, blk);
    k.wei_tag = p.wplain;
    const impl::conv_prb_t prb = make_prb(k);
    std::unique_ptr<conv_fwd_jit_t> jit;
    std::string why;
    const status st = conv_fwd_jit_t::create(jit, prb, level, impl::conv_kernel_kind_for(d, k.src_tag), why);
    const char *layout = nxc ? "channels-last" : "blocked";
    if (st != status::success) {
        // Not this kernel's problem (groups with per-group channels not a multiple of the
        // block): dispatch must fall to the groups merged into wider ones, matching the
        // reference, or to the reference. (Channels-last with 8 but not 16 channels per group
        // falls to the avx2 kernel instead.)
        isa_guard g;
        set_max_isa(level);
        const conv_fwd op(d, k.src_tag, k.wei_tag, k.dst_tag, p.po);
        const std::string got = op.impl_name();
        EXPECT_EQ(st, status::unimplemented) << layout << ": " << why;
        const bool to_avx2 = nxc && level == isa::avx512_core && got == "jit:avx2";
        EXPECT_TRUE(got == "ref" || got == "jit:regroup" || to_avx2)
                << p.list << " " << p.name << " " << to_string(level) << " " << layout << ": " << got << ": " << why;
        if (got == "jit:regroup") {
            const tensor dst(op.dst_desc());
            op.execute(reorder(p.src, k.src_tag), p.wei, p.bia, dst);
            EXPECT_TRUE(logical_of(dst) == p.want) << p.list << " " << p.name << " " << to_string(level) << " "
                                                   << layout << ": " << got << " differs from the reference";
        }
        ++skipped;
        return;
    }
    const tensor src_k = reorder(p.src, k.src_tag);
    // 1 and 2 threads of the library's pool.
    const tensor dst1(prb.dst), dst2(prb.dst);
    set_num_threads(1);
    jit->execute({src_k.f32(), p.wei.f32(), p.bia.f32(), dst1.f32()}); // plain weights: reordered per call
    set_num_threads(2);
    jit->execute({src_k.f32(), p.wei.f32(), p.bia.f32(), dst2.f32()});
    reset_num_threads();
    const bool same_threads = std::memcmp(dst1.data(), dst2.data(), dst1.desc().size_bytes()) == 0;
    const bool same_ref = logical_of(dst1) == p.want;
    EXPECT_TRUE(same_threads && same_ref)
            << p.list << " " << p.name << " " << to_string(level) << " " << layout << ": "
            << (same_ref ? "" : "differs from the reference; ") << (same_threads ? "" : "1 and 2 threads differ; ")
            << impl::to_string(jit->conf());
}

} // namespace

TEST_P(ConvJitShapes, Mb1) {
    const shape_case_t &c = GetParam();
    if (!c.error.empty()) FAIL() << c.error;
    if (detected_isa() < c.level) GTEST_SKIP() << to_string(c.level) << " not available";
    if (!last || last->list != c.list || last->index != c.index) last = std::make_unique<problem_t>(make_problem(c));
    SCOPED_TRACE(c.list + ":" + std::to_string(c.line) + " " + c.text);
    int n_skipped = 0;
    for (bool nxc : {false, true}) check_layout(*last, c.level, nxc, n_skipped);
    if (n_skipped) skipped[c.list] += n_skipped;
}

INSTANTIATE_TEST_SUITE_P(ConvShapes, ConvJitShapes, ::testing::ValuesIn(all_cases()),
        [](const ::testing::TestParamInfo<shape_case_t> &info) { return info.param.name; });
