// ipilab/common/error.h — the error types every subsystem throws, and the process exit statuses.
//
// Contract: bad input from a user (a malformed scenario, a truncated trace, bad hex on the command line)
// is reported by throwing InputError with the *place* (file:line:key, argument name, byte offset) and
// the *reason*. The CLI prints "ipilab: error: <place>: <reason>" and exits with ExitStatus::BadInput.
// Nothing is written before the input is fully validated (writers go through output::AtomicFile, see output.h).
#pragma once

#include <stdexcept>
#include <string>

namespace ipilab {

/// Process exit statuses of the `ipilab` executable (documented in README, "Exit statuses").
enum class ExitStatus : int {
  Ok = 0,               ///< the command did what was asked
  Failure = 1,          ///< an internal error, or a check the user asked for failed (e.g. `--check`)
  BadInput = 2,         ///< malformed input: command line, scenario, profile, trace, hex
  Unavailable = 3,      ///< the machine cannot do it: no /dev/kvm, no permission, no tracefs
};

/// Malformed input. `place()` says where (file:line:column:key, "--rdx", "byte 24"), `reason()` why.
class InputError : public std::runtime_error {
 public:
  InputError(std::string place, std::string reason)
      : std::runtime_error(place.empty() ? reason : place + ": " + reason),
        place_(std::move(place)), reason_(std::move(reason)) {}
  const std::string& place() const noexcept { return place_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string place_;
  std::string reason_;
};

/// The machine lacks a capability (KVM, tracefs, perf...). The CLI exits with ExitStatus::Unavailable.
class UnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A check the user asked for did not hold (the CLI exits with ExitStatus::Failure).
class CheckFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ipilab
