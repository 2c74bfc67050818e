// KFP list semantics turned into SQL: page_size (default 20, at most 200,
// negative is an error), sort_by ("field", "field asc", "field desc") and the
// JSON filter, on a whitelist of fields per resource, with keyset pagination
// through an opaque page_token. Values are always bound, never spliced into
// SQL, so a filter cannot inject anything.
#pragma once

#include <string>
#include <vector>

#include "store/sqlite.h"
#include "util/result.h"

namespace kfpbench::store {

enum class FieldType { kString, kTime /* stored as ns since epoch */, kInt };

struct Field {
  std::vector<std::string> api_names;  // names KFP accepts, e.g. {"name", "display_name"}
  std::string column;
  FieldType type = FieldType::kString;
};

struct ListRequest {
  std::string page_size;  // as given in the query; empty for the default
  std::string page_token;
  std::string sort_by;
  std::string filter;  // KFP filter JSON
};

struct ListPlan {
  int page_size = 20;
  std::string where;  // "" or "(...) AND (...)" with ? placeholders
  std::vector<SqlValue> where_binds;
  std::string cursor_where;  // keyset condition for the next page, "" on the first
  std::vector<SqlValue> cursor_binds;
  std::string order_by;  // "col DESC, id DESC"
  const Field* sort_field = nullptr;
  bool descending = false;
  std::string filter;  // carried into the next page token
  // The filter as column = value pairs, when it has EQUALS predicates only:
  // lets a store answer total_size from maintained counts instead of COUNT(*).
  bool equals_only = true;
  std::vector<std::pair<std::string, SqlValue>> equals;
};

// `id_column` breaks ties so pages never skip or repeat rows.
Result<ListPlan> PlanList(const ListRequest& request, const std::vector<Field>& fields,
                          const std::string& default_sort, const std::string& id_column);

// The token for the page after a row whose sort value and id are given.
std::string NextPageToken(const ListPlan& plan, const SqlValue& last_sort_value,
                          const std::string& last_id);

}  // namespace kfpbench::store
