// SPDX-License-Identifier: Apache-2.0
// Status codes and the one exception type the C++ API throws.
#pragma once

#include <exception>
#include <string>

namespace blockdnn {

/// Outcome of an operation. The C++ API reports every status other than `success` by
/// throwing `blockdnn::error`; the enum exists so callers can branch on the kind of failure.
enum class status {
    success = 0,
    invalid_arguments, ///< the caller passed something the API rejects (a bad dim, layout, pointer)
    unimplemented,     ///< valid input that no implementation supports
    out_of_memory,     ///< an allocation failed
    runtime_error,     ///< something failed while running (JIT generation, a worker task)
};

/// Short lowercase name of a status ("invalid_arguments", ...).
const char *to_string(status s);

/// The exception thrown by every public function on failure.
///
/// `what()` is a complete sentence that names the operation, the bad field and its value, e.g.
/// `tensor_desc: dims[1] (c) = 0 must be positive`. When an error is thrown, nothing the caller
/// owns has been written.
class error : public std::exception {
public:
    error(status s, std::string message) : status_(s), message_(std::move(message)) {}
    status code() const noexcept { return status_; }
    const char *what() const noexcept override { return message_.c_str(); }

private:
    status status_;
    std::string message_;
};

} // namespace blockdnn
