// KFP list semantics turned into SQL, as KFP's list_request_util.go and
// list/list.go read them: page_size (default 20, at most 200, negative is an
// error), sort_by split on white space and lowercased ("field", "field asc",
// "Field  DESC"), the JSON filter URL-unescaped once more and with camelCase
// value keys, on the fields KFP's model allows per resource
// (APIToModelFieldMap), with keyset pagination through an opaque page_token
// that remembers its sort and filter. Values are always bound, never spliced
// into SQL, so a filter cannot inject anything.
#pragma once

#include <string>
#include <vector>

#include "store/sqlite.h"
#include "util/result.h"

namespace kfpbench::store {

enum class FieldType { kString, kTime /* stored as ns since epoch */, kInt };

enum class FieldKind {
  kColumn,
  // The api_names are prefixes ("metric:") of names that can be sorted on but
  // not filtered on, as KFP's Run.GetField allows "metric:<name>".
  kSortPrefix,
  // "tags.<key>": filtered on with EQUALS on a string only, never sorted on,
  // as KFP's extractTagFiltersFromFilterSpec reads them. `column` holds the
  // tags as a JSON object.
  kTagPrefix,
};

struct Field {
  std::vector<std::string> api_names;  // names KFP accepts, e.g. {"name", "display_name"}
  std::string column;                  // a column, or an SQL expression over the row
  FieldType type = FieldType::kString;
  FieldKind kind = FieldKind::kColumn;
};

// What a list runs over: KFP's model name (quoted in its errors, e.g.
// "Invalid sorting field: \"x\" on listable type Run"), its fields, the field
// sorted on by default and the column that breaks ties.
struct Listable {
  const char* model = "";
  std::vector<Field> fields;
  std::string default_sort;
  std::string id_column;
};

// Which API's Filter message the filter is read as: v1beta1's Predicate
// names its operation `op` (enum Op, 0 = UNKNOWN), v2beta1's `operation`
// (enum Operation, 0 = OPERATION_UNSPECIFIED); protojson refuses the other's.
enum class FilterApi { kV2beta1, kV1beta1 };

struct ListRequest {
  std::string page_size;  // as given in the query; empty for the default
  std::string page_token;
  std::string sort_by;
  std::string filter;  // KFP filter JSON
  FilterApi api = FilterApi::kV2beta1;
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
  std::string sort_by;  // normalised ("created_at desc"), carried into the next page token
  std::string filter;   // as the client sent it, carried into the next page token
  FilterApi filter_api = FilterApi::kV2beta1;  // how `filter` reads, carried with it
  // The filter as column = value pairs, when it has EQUALS predicates only:
  // lets a store answer total_size from maintained counts instead of COUNT(*).
  bool equals_only = true;
  std::vector<std::pair<std::string, SqlValue>> equals;
};

// Errors carry KFP's external message (the one in its error details).
Result<ListPlan> PlanList(const ListRequest& request, const Listable& listable);

// Go's url.QueryUnescape: '+' is a space, '%' takes two hex digits.
Result<std::string> QueryUnescape(std::string_view text);

// The token for the page after a row whose sort value and id are given.
std::string NextPageToken(const ListPlan& plan, const SqlValue& last_sort_value,
                          const std::string& last_id);

}  // namespace kfpbench::store
