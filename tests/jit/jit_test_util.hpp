// SPDX-License-Identifier: Apache-2.0
// Helpers for the JIT tests: a kernel whose code a test writes inline, every eltwise kernel
// kind, and running a program with environment variables and capturing its output.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "ops/eltwise/jit_eltwise_fwd_kernel.hpp"
#include "jit/jit_generator.hpp"
#include "common/test_util.hpp"

/// A kernel whose body is a lambda, so tests can write small kernels inline.
class lambda_kernel_t : public blockdnn::impl::jit_generator_t {
public:
    using body_t = std::function<void(lambda_kernel_t &)>;
    lambda_kernel_t(blockdnn::isa level, body_t body, std::string name = "test_kernel")
        : jit_generator_t(std::move(name), level), body_(std::move(body)) {}
    std::string conf_str() const override { return "conf: test kernel"; }
    using jit_generator_t::postamble;
    using jit_generator_t::preamble;

private:
    void generate() override { body_(*this); }
    body_t body_;
};

/// The standalone eltwise kernel for alg at level, created (asserting success).
inline std::unique_ptr<blockdnn::impl::jit_generator_t> make_eltwise_kernel(
        blockdnn::isa level, blockdnn::eltwise_alg alg, float alpha, float beta, bool stream) {
    using namespace blockdnn;
    using namespace blockdnn::impl;
    eltwise_conf_t c;
    std::string why;
    if (init_conf_eltwise_fwd(c, level, alg, alpha, beta, stream, why) != status::success) return nullptr;
    std::unique_ptr<jit_generator_t> k;
    if (level == isa::avx512_core) k = std::make_unique<jit_eltwise_fwd_kernel_t<isa::avx512_core>>(c);
    else k = std::make_unique<jit_eltwise_fwd_kernel_t<isa::avx2>>(c);
    if (k->create(why) != status::success) return nullptr;
    return k;
}

/// Lines of text.
inline std::vector<std::string> lines_of(const std::string &text) {
    std::vector<std::string> v;
    std::size_t b = 0;
    for (std::size_t e; (e = text.find('\n', b)) != std::string::npos; b = e + 1) v.push_back(text.substr(b, e - b));
    if (b < text.size()) v.push_back(text.substr(b));
    return v;
}

/// Comma-separated fields.
inline std::vector<std::string> fields_of(const std::string &line) {
    std::vector<std::string> v;
    std::size_t b = 0;
    for (std::size_t e; (e = line.find(',', b)) != std::string::npos; b = e + 1) v.push_back(line.substr(b, e - b));
    v.push_back(line.substr(b));
    return v;
}
