// A minimal RAII layer over the SQLite C API: a connection and prepared
// statements with typed binds. Errors carry SQLite's message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "util/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kfpbench::store {

using SqlValue = std::variant<std::nullptr_t, int64_t, double, std::string>;

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;

  Statement& Bind(int index, const SqlValue& value);  // 1-based
  Statement& BindAll(const std::vector<SqlValue>& values);
  // Steps once: true when a row is available, false when done.
  Result<bool> Step();
  Status Run();  // steps to completion, then resets
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  // ":memory:" for an in-memory database.
  static Result<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();

  Status Exec(std::string_view sql);
  Result<Statement> Prepare(std::string_view sql);
  // A statement prepared once per SQL text and kept: preparing costs more
  // than running the small queries the API makes. The caller must Reset() it
  // after use (see ResetOnExit) so that no read transaction stays open, which
  // would keep WAL checkpoints from completing. Only for SQL of fixed text:
  // the cache is never trimmed, and pointers into it stay valid.
  Result<Statement*> PrepareCached(const std::string& sql);
  int64_t Changes() const;
  std::string LastError() const;

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::unordered_map<std::string, Statement> cache_;
};

// Resets a cached statement when it goes out of scope.
class ResetOnExit {
 public:
  explicit ResetOnExit(Statement* s) : s_(s) {}
  ~ResetOnExit() {
    if (s_) s_->Reset();
  }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  Statement* s_;
};

}  // namespace kfpbench::store
