// Result<T>: a value or an Error, returned instead of thrown on hot paths
// (ninja's style). Exceptions stay at configuration boundaries.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kfpbench {

// The HTTP statuses errors carry by name (Error::code).
inline constexpr int kHttpBadRequest = 400;
inline constexpr int kHttpUnauthorized = 401;
inline constexpr int kHttpForbidden = 403;
inline constexpr int kHttpNotFound = 404;
inline constexpr int kHttpConflict = 409;
inline constexpr int kHttpInternalError = 500;

// An error with a message meant for a person. `code` is the HTTP status it
// stands for: the one a server answered with (kfp::Client), or the one the
// embedded server answers with; 0 for an error that never was HTTP
// (transport, files, flags).
struct Error {
  std::string message;
  int code = 0;

  bool NotFound() const { return code == kHttpNotFound; }
  // The request (or the input behind it) was wrong, not the system.
  bool BadInput() const { return code >= 400 && code < 500; }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Status Ok() { return {}; }

}  // namespace kfpbench
