// Errors as values. An Error carries an errno-style code (what the caller
// should answer a FUSE request with) and a message that says where and why.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace graphfs {

class Error {
 public:
  Error(int code, std::string message) : code_(code), message_(std::move(message)) {}

  // Error from the current errno, with `what` describing the failed operation.
  static Error FromErrno(const std::string& what);
  static Error FromErrno(int code, const std::string& what);

  int code() const { return code_; }
  const std::string& message() const { return message_; }

  // Adds outer context: "opening disk 2: <inner message>".
  Error Wrap(const std::string& context) const { return Error(code_, context + ": " + message_); }

 private:
  int code_;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result of an operation that yields nothing but can fail.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), failed_(true) {}
  static Status Ok() { return Status(); }

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }

 private:
  Error error_{0, ""};
  bool failed_ = false;
};

}  // namespace graphfs

// Early-return helpers for functions that return Result<> or Status.
#define GRAPHFS_RETURN_IF_ERROR(expr)              \
  do {                                             \
    auto _graphfs_status = (expr);                 \
    if (!_graphfs_status.ok()) return _graphfs_status.error(); \
  } while (0)
