// The execution cache and what :retry keeps of failed runs.
#include "store/store.h"
#include "store/store_internal.h"

namespace kfpbench::store {

using namespace internal;  // NOLINT: the store's shared helpers

Status Store::PutCachedExecution(const CachedExecutionRow& row) {
  std::lock_guard lock(mu_);
  auto stmt = db_->PrepareCached(
      "INSERT OR REPLACE INTO task_cache (scope, fingerprint, run_id, task_id, outputs, "
      "created_at_ns) VALUES (?, ?, ?, ?, ?, ?)");
  if (!stmt.ok()) return stmt.error();
  return (*stmt)
      ->BindAll(
          {row.scope, row.fingerprint, row.run_id, row.task_id, row.outputs, ToNs(row.created_at)})
      .Run();
}

Result<std::optional<CachedExecutionRow>> Store::GetCachedExecution(
    const std::string& scope, const std::string& fingerprint) {
  std::lock_guard lock(mu_);
  auto stmt = db_->PrepareCached(
      "SELECT run_id, task_id, outputs, created_at_ns FROM task_cache "
      "WHERE scope = ? AND fingerprint = ?");
  if (!stmt.ok()) return stmt.error();
  ResetOnExit reset(*stmt);
  (*stmt)->BindAll({scope, fingerprint});
  auto row = (*stmt)->Step();
  if (!row.ok()) return row.error();
  if (!*row) return std::optional<CachedExecutionRow>();
  const Statement& s = **stmt;
  return std::optional<CachedExecutionRow>(
      CachedExecutionRow{scope, fingerprint, s.Text(0), s.Text(1), s.Text(2), FromNs(s.Int(3))});
}

Status Store::PutRetryTasks(const std::string& run_id,
                            const std::vector<std::pair<std::string, std::string>>& tasks) {
  std::lock_guard lock(mu_);
  return InTransaction([&]() -> Status {
    auto clear = db_->PrepareCached("DELETE FROM retry_tasks WHERE run_id = ?");
    if (!clear.ok()) return clear.error();
    if (Status s = (*clear)->BindAll({run_id}).Run(); !s.ok()) return s;
    auto insert =
        db_->PrepareCached("INSERT INTO retry_tasks (run_id, task_key, record) VALUES (?, ?, ?)");
    if (!insert.ok()) return insert.error();
    for (const auto& [key, record] : tasks) {
      if (Status s = (*insert)->BindAll({run_id, key, record}).Run(); !s.ok()) return s;
    }
    return Ok();
  });
}

Result<std::vector<std::pair<std::string, std::string>>> Store::GetRetryTasks(
    const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto stmt = db_->PrepareCached("SELECT task_key, record FROM retry_tasks WHERE run_id = ?");
  if (!stmt.ok()) return stmt.error();
  ResetOnExit reset(*stmt);
  (*stmt)->BindAll({run_id});
  std::vector<std::pair<std::string, std::string>> out;
  Status s =
      ForEachRow(**stmt, [&](const Statement& row) { out.emplace_back(row.Text(0), row.Text(1)); });
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace kfpbench::store
