// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tests: error expectations, ISA and environment guards, seeded fills.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "blockdnn/blockdnn.hpp"
#include "testing/fill.hpp"

/// Expects fn() to throw blockdnn::error with status s and a message holding every fragment.
inline void expect_error(
        blockdnn::status s, std::initializer_list<const char *> fragments, const std::function<void()> &fn) {
    try {
        fn();
        ADD_FAILURE() << "expected blockdnn::error(" << blockdnn::to_string(s) << ")";
    } catch (const blockdnn::error &e) {
        EXPECT_EQ(e.code(), s) << e.what();
        for (const char *f : fragments)
            EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
                    << "message '" << e.what() << "' lacks '" << f << "'";
    }
}

/// Uniform integers in [lo, hi] from a seeded generator, for drawing random problems.
class seeded_ints {
public:
    explicit seeded_ints(unsigned seed) : gen_(seed) {}
    blockdnn::dim_t operator()(blockdnn::dim_t lo, blockdnn::dim_t hi) {
        return std::uniform_int_distribution<blockdnn::dim_t>(lo, hi)(gen_);
    }

private:
    std::mt19937 gen_;
};

/// The spatial fields of a conv or pool desc, each indexed d, h, w: inputs, kernel, strides,
/// front and end pads, dilations.
struct spatial_ptrs_t {
    blockdnn::dim_t *i[3], *k[3], *s[3], *p[3], *pr[3], *dl[3];
};

template <typename Desc>
spatial_ptrs_t spatial_ptrs(Desc &c) {
    return {{&c.id, &c.ih, &c.iw}, {&c.kd, &c.kh, &c.kw}, {&c.sd, &c.sh, &c.sw}, {&c.pd, &c.ph, &c.pw},
            {&c.pd_r, &c.ph_r, &c.pw_r}, {&c.dd, &c.dh, &c.dw}};
}

/// Restores "no API cap" when the test ends.
struct isa_guard {
    ~isa_guard() { blockdnn::reset_max_isa(); }
};

/// Sets the library's thread count for a scope (0: leave it as it is).
struct threads_guard_t {
    explicit threads_guard_t(int n) : set_(n > 0) {
        if (set_) blockdnn::set_num_threads(n);
    }
    ~threads_guard_t() {
        if (set_) blockdnn::reset_num_threads();
    }
    threads_guard_t(const threads_guard_t &) = delete;
    threads_guard_t &operator=(const threads_guard_t &) = delete;

private:
    bool set_;
};

/// Sets an environment variable for the test's lifetime, restoring the old value after.
class env_guard {
public:
    env_guard(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) old_ = old;
        setenv(name, value, 1);
    }
    ~env_guard() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char *name_;
    std::optional<std::string> old_;
};

/// The ISA levels this machine has, lowest first.
inline std::vector<blockdnn::isa> available_isas() {
    std::vector<blockdnn::isa> v;
    for (blockdnn::isa i : {blockdnn::isa::scalar, blockdnn::isa::avx2, blockdnn::isa::avx512_core})
        if (i <= blockdnn::detected_isa()) v.push_back(i);
    return v;
}

/// Calls fn(idx) for every logical index of d (canonical order, last dim fastest).
template <typename F>
void for_each_index(const blockdnn::tensor_desc &d, F &&fn) {
    const int nd = d.ndims();
    blockdnn::dim_t idx[blockdnn::max_ndims] = {};
    for (blockdnn::dim_t k = 0, n = d.nelems(); k < n; ++k) {
        fn(static_cast<const blockdnn::dim_t *>(idx));
        for (int i = nd - 1; i >= 0; --i) {
            if (++idx[i] < d.dim(i)) break;
            idx[i] = 0;
        }
    }
}

/// Fills a tensor's logical elements with seeded values from [-1, 1); the padding of blocked
/// layouts is left as it is.
inline void fill_random(const blockdnn::tensor &t, unsigned seed) { bdtest::fill_seeded(t, seed, -1.f, 1.f); }

struct run_result_t {
    int exit_code = -1;
    std::string out; // stdout and stderr
};

/// Runs `cmd` through the shell (with `env` assignments before it, e.g. "A=1 B=2") and
/// captures its output.
inline run_result_t run_command(const std::string &env, const std::string &cmd) {
    run_result_t r;
    const std::string full = env + " " + cmd + " 2>&1";
    FILE *p = popen(full.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int st = pclose(p);
    r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}
