// Helpers shared by the store's source files: time columns, KFP-shaped
// errors, one-row reads and writes, and the keyset list query.
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "store/list_query.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace kfpbench::store::internal {

inline int64_t ToNs(WallTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
inline WallTime FromNs(int64_t ns) {
  return WallTime(std::chrono::duration_cast<WallClock::duration>(std::chrono::nanoseconds(ns)));
}

// 0 for an unset (epoch) time, as the schema stores "none".
inline int64_t OptNs(WallTime t) { return t.time_since_epoch().count() ? ToNs(t) : 0; }

inline Error NotFound(const char* what, const std::string& id) {
  return Error{fmt::format("{} {} not found", what, id), kHttpNotFound};
}

// The fields of a Listable, by how KFP names them and how the schema keeps
// them: a column under its API name ("description"), under other names
// ({"display_name", "name"} in "display_name"), the id (its API name or "id",
// in "id"), a time ("created_at" in "created_at_ns") and the tags.
inline Field Text(std::string name) { return {{name}, name}; }
inline Field Text(std::vector<std::string> names, std::string column) {
  return {std::move(names), std::move(column)};
}
// KFP accepts "name" for a display name in a filter or sort.
inline Field DisplayName() { return {{"display_name", "name"}, "display_name"}; }
inline Field Id(std::string name) { return {{std::move(name), "id"}, "id"}; }
inline Field Time(std::string name) {
  return {{name}, name + "_ns", FieldType::kTime, FieldKind::kColumn};
}
inline Field TagPrefix() { return {{"tags."}, "tags", FieldType::kString, FieldKind::kTagPrefix}; }
// A field kept in the JSON body rather than a column of its own.
inline Field InJson(std::string name, const char* document) {
  return {{name}, fmt::format("COALESCE(json_extract({}, '$.{}'), '')", document, name)};
}

// How one resource is kept: its table, the columns a read selects (in
// order), how such a row becomes the resource, which field is its id, and
// what errors call it ("run": "run <id> not found").
template <typename T>
struct Table {
  const char* name;
  const char* columns;
  int column_count;  // a list query selects the sort column after these
  T (*read)(const Statement&);
  std::string T::*id;
  const char* what;
};

inline SqlValue SortValue(const Statement& s, int column, const ListPlan& plan);

// Conditions joined by AND, with the values they bind.
struct Where {
  std::string sql;  // empty: no condition
  std::vector<SqlValue> binds;

  void Add(const std::string& condition) { sql += (sql.empty() ? "" : " AND ") + condition; }
  void Add(const std::string& condition, SqlValue value) {
    Add(condition);
    binds.push_back(std::move(value));
  }
  // `condition` on `value` when one is given; none when it is empty.
  void AddIfGiven(const std::string& condition, const std::string& value) {
    if (!value.empty()) Add(condition, value);
  }
  void Add(const Where& other) {
    if (other.sql.empty()) return;
    Add(other.sql);
    binds.insert(binds.end(), other.binds.begin(), other.binds.end());
  }
  std::string Clause() const { return sql.empty() ? "" : " WHERE " + sql; }
};

// Runs one list query: total under the filter, then one page of rows after
// the cursor.
template <typename T>
Result<ListResult<T>> RunList(Database& db, const Table<T>& table, const ListPlan& plan,
                              const Where& scope,
                              std::optional<int64_t> known_total = std::nullopt) {
  Where where = scope;
  where.Add(Where{plan.where, plan.where_binds});
  ListResult<T> out;
  if (known_total) {
    out.total_size = static_cast<int>(*known_total);
  } else {
    auto count = db.Prepare(fmt::format("SELECT COUNT(*) FROM {}{}", table.name, where.Clause()));
    if (!count.ok()) return count.error();
    count->BindAll(where.binds);
    auto row = count->Step();
    if (!row.ok()) return row.error();
    out.total_size = static_cast<int>(count->Int(0));
  }
  Where page = where;
  page.Add(Where{plan.cursor_where, plan.cursor_binds});
  // One row more than the page tells whether there is a next page.
  auto stmt = db.Prepare(fmt::format("SELECT {}, {} FROM {}{} ORDER BY {} LIMIT {}", table.columns,
                                     plan.sort_field->column, table.name, page.Clause(),
                                     plan.order_by, plan.page_size + 1));
  if (!stmt.ok()) return stmt.error();
  stmt->BindAll(page.binds);
  SqlValue last_sort;
  std::string last_id;
  for (int n = 0;; ++n) {
    auto row = stmt->Step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    if (n == plan.page_size) {
      out.next_page_token = NextPageToken(plan, last_sort, last_id);
      break;
    }
    T item = table.read(*stmt);
    last_id = item.*table.id;
    last_sort = SortValue(*stmt, table.column_count, plan);
    out.items.push_back(std::move(item));
  }
  return out;
}

// The sort column is selected last; read it back in its storage type.
inline SqlValue SortValue(const Statement& s, int column, const ListPlan& plan) {
  if (plan.sort_field->type == FieldType::kString) return s.Text(column);
  return s.Int(column);
}

inline Status Insert(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
                     const std::string& conflict_message) {
  auto stmt = db.PrepareCached(sql);
  if (!stmt.ok()) return stmt.error();
  (*stmt)->BindAll(binds);
  Status s = (*stmt)->Run();
  if (!s.ok() && s.error().message.find("UNIQUE") != std::string::npos) {
    return Error{conflict_message, kHttpConflict};
  }
  return s;
}

// The row whose id is `id`, or "<what> <id> not found".
template <typename T>
Result<T> GetById(Database& db, const Table<T>& table, const std::string& id);

template <typename T, typename Read>
Result<T> GetOne(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
                 Read read, Error not_found) {
  auto stmt = db.PrepareCached(sql);
  if (!stmt.ok()) return stmt.error();
  ResetOnExit reset(*stmt);
  (*stmt)->BindAll(binds);
  auto row = (*stmt)->Step();
  if (!row.ok()) return row.error();
  if (!*row) return not_found;
  return read(**stmt);
}

template <typename T>
Result<T> GetById(Database& db, const Table<T>& table, const std::string& id) {
  return GetOne<T>(db, fmt::format("SELECT {} FROM {} WHERE id = ?", table.columns, table.name),
                   {id}, table.read, NotFound(table.what, id));
}

// Runs a write that must change a row; `not_found` when none matched.
inline Status ChangeOne(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
                        Error not_found) {
  auto stmt = db.PrepareCached(sql);
  if (!stmt.ok()) return stmt.error();
  if (Status s = (*stmt)->BindAll(binds).Run(); !s.ok()) return s;
  if (db.Changes() == 0) return not_found;
  return Ok();
}

// Steps through the rows `stmt` selects, `fn(stmt)` on each.
template <typename Fn>
Status ForEachRow(Statement& stmt, Fn&& fn) {
  for (;;) {
    auto row = stmt.Step();
    if (!row.ok()) return row.error();
    if (!*row) return Ok();
    fn(stmt);
  }
}

// Runs a cached read with `binds`, `fn(row)` on each row it selects. The
// statement is reset after, so that no read transaction stays open.
template <typename Fn>
Status ForEachRow(Database& db, const std::string& sql, const std::vector<SqlValue>& binds,
                  Fn&& fn) {
  auto stmt = db.PrepareCached(sql);
  if (!stmt.ok()) return stmt.error();
  ResetOnExit reset(*stmt);
  (*stmt)->BindAll(binds);
  return ForEachRow(**stmt, fn);
}

// Reads of runs, shared by the run queries and the restart recovery.
extern const char* const kRunColumns;
kfp::Run ReadRun(const Statement& s);
std::string StatusJson(const RunStatus& status);
const Listable& RunListable();

}  // namespace kfpbench::store::internal

namespace kfpbench::store {

template <typename Fn>
Status Store::InTransaction(Fn&& fn) {
  if (Status s = db_->Exec("BEGIN IMMEDIATE"); !s.ok()) return s;
  // Rolls back on every way out that did not commit, an exception included
  // (a JSON dump of a bad string throws): a transaction left open would make
  // every later write fail and lose the acknowledged ones at the next start.
  struct Guard {
    Database* db;
    bool open = true;
    ~Guard() {
      if (open) (void)db->Exec("ROLLBACK");
    }
  } guard{db_.get()};
  Status s;
  try {
    s = fn();
  } catch (const std::exception& e) {
    // Storage is a boundary too: a value that cannot be written (a JSON
    // dump of a string that is not UTF-8 throws) fails this write only.
    return Error{std::string("cannot store the value: ") + e.what(), kHttpInternalError};
  }
  if (!s.ok()) return s;  // the guard rolls back
  Status end = db_->Exec("COMMIT");
  if (end.ok()) guard.open = false;
  return end;
}

}  // namespace kfpbench::store
