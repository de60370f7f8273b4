// Error type shared by every layer: a status code plus a readable message.
#pragma once

#include <stdexcept>
#include <string>

#include "spmvjit/spmvjit.h"

namespace spmvjit {

// Thrown inside the library; the C API turns it into a status and spmv_last_error().
// User mistakes (invalid matrix, bad argument, I/O) and internal bugs use distinct statuses.
class Error : public std::runtime_error {
 public:
  Error(spmv_status_t status, const std::string& message) : std::runtime_error(message), status_(status) {}
  spmv_status_t status() const { return status_; }

 private:
  spmv_status_t status_;
};

[[noreturn]] inline void fail(spmv_status_t status, const std::string& message) {
  throw Error(status, message);
}

// Internal invariant: a failure here is a bug in spmvjit, not in the caller's input.
#define SPMVJIT_ASSERT(cond, msg)                                                           \
  do {                                                                                      \
    if (!(cond))                                                                            \
      ::spmvjit::fail(SPMV_STATUS_INTERNAL_ERROR, std::string("internal error: ") + (msg) + \
                                                      " (" #cond ") at " + __FILE__ + ":" + \
                                                      std::to_string(__LINE__));            \
  } while (0)

}  // namespace spmvjit
