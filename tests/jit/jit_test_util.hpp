// SPDX-License-Identifier: Apache-2.0
// Helpers for the JIT tests: a kernel whose code a test writes inline, and the lines and
// fields of a program's output.
#pragma once

#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "jit/jit_dump.hpp"
#include "jit/jit_generator.hpp"
#include "common/test_util.hpp"

/// A kernel whose body is a lambda, so tests can write small kernels inline.
class lambda_kernel_t : public blockdnn::impl::jit_generator_t {
public:
    using body_t = std::function<void(lambda_kernel_t &)>;
    lambda_kernel_t(
            blockdnn::isa level, body_t body, std::string name = "test_kernel", std::string conf = "conf: test kernel")
        : jit_generator_t(std::move(name), level), body_(std::move(body)), conf_(std::move(conf)) {}
    std::string conf_str() const override { return conf_; }
    using jit_generator_t::droppable_prefetcht1;
    using jit_generator_t::fast_vbroadcastss;
    using jit_generator_t::fast_vfmadd231ps;
    using jit_generator_t::fast_vmovups;
    using jit_generator_t::postamble;
    using jit_generator_t::preamble;

private:
    void generate() override { body_(*this); }
    body_t body_;
    std::string conf_;
};

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

/// Expects a kernel's dump text (jit/jit_dump.hpp's disassemble) to head its code with every
/// line of `head` (name, ISA, conf_str) and, where a disassembler is present, to hold every
/// instruction of `code`.
inline void expect_dump_holds(
        const std::string &text, std::initializer_list<const char *> head, std::initializer_list<const char *> code) {
    for (const char *f : head) EXPECT_NE(text.find(f), std::string::npos) << "lacks " << f;
    if (!blockdnn::impl::have_disassembler()) return;
    for (const char *c : code) EXPECT_NE(text.find(c), std::string::npos) << "lacks " << c << " in\n" << text;
}
