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
  std::optional<CachedExecutionRow> found;
  Status s = ForEachRow(*db_,
                        "SELECT run_id, task_id, outputs, created_at_ns FROM task_cache "
                        "WHERE scope = ? AND fingerprint = ?",
                        {scope, fingerprint}, [&](const Statement& row) {
                          found = CachedExecutionRow{scope,       fingerprint, row.Text(0),
                                                     row.Text(1), row.Text(2), FromNs(row.Int(3))};
                        });
  if (!s.ok()) return s.error();
  return found;
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
  std::vector<std::pair<std::string, std::string>> out;
  Status s = ForEachRow(*db_, "SELECT task_key, record FROM retry_tasks WHERE run_id = ?", {run_id},
                        [&](const Statement& row) { out.emplace_back(row.Text(0), row.Text(1)); });
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace kfpbench::store
