#include "store/sqlite.h"

#include <sqlite3.h>

namespace kfpbench::store {

Statement::~Statement() {
  if (stmt_) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
  other.stmt_ = nullptr;
}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_) sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Statement& Statement::Bind(int index, const SqlValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    sqlite3_bind_int64(stmt_, index, *i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    sqlite3_bind_double(stmt_, index, *d);
  } else if (const auto* s = std::get_if<std::string>(&value)) {
    sqlite3_bind_text(stmt_, index, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_bind_null(stmt_, index);
  }
  return *this;
}

Statement& Statement::BindAll(const std::vector<SqlValue>& values) {
  for (size_t i = 0; i < values.size(); ++i) Bind(static_cast<int>(i + 1), values[i]);
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error{std::string("database error: ") + sqlite3_errmsg(db_), kHttpInternalError};
}

Status Statement::Run() {
  for (;;) {
    auto more = Step();
    if (!more.ok()) {
      Reset();
      return more.error();
    }
    if (!*more) break;
  }
  Reset();
  return Ok();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }
double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }
bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
std::string Statement::Text(int column) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  return p ? std::string(p, sqlite3_column_bytes(stmt_, column)) : std::string();
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    if (db) sqlite3_close(db);
    return Error{"cannot open database " + path + ": " + message};
  }
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<Database>(new Database(db));
}

Database::~Database() {
  cache_.clear();  // finalize first: sqlite3_close refuses while statements live
  sqlite3_close(db_);
}

Status Database::Exec(std::string_view sql) {
  char* message = nullptr;
  int rc = sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return Error{"database error: " + text, kHttpInternalError};
  }
  return Ok();
}

Result<Statement> Database::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Error{"database error: " + LastError(), kHttpInternalError};
  return Statement(db_, stmt);
}

Result<Statement*> Database::PrepareCached(const std::string& sql) {
  if (auto it = cache_.find(sql); it != cache_.end()) return &it->second;
  auto stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.error();
  return &cache_.emplace(sql, std::move(*stmt)).first->second;
}

int64_t Database::Changes() const { return sqlite3_changes64(db_); }
std::string Database::LastError() const { return sqlite3_errmsg(db_); }

}  // namespace kfpbench::store
