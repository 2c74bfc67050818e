// Multi-user mode's authorization, route by route: which resource a request
// touches, with which verb and in which namespace, found as KFP's servers
// find it (the namespace of a v2beta1 request or of the experiment it names;
// v1beta1's resource references; a stored resource's own), and whether the
// caller may. One rule per route: a route without one is refused, so a new
// endpoint cannot slip through unchecked.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http/message.h"
#include "http/router.h"
#include "server/auth.h"
#include "server/create_requests.h"
#include "store/store.h"

namespace kfpbench::server {

// What one request reaches: KFP's SubjectAccessReview resource attributes.
struct AccessTarget {
  std::string resource;  // "pipelines", "experiments", "runs", "jobs"; empty: none
  std::string verb;      // "get", "list", "create", ... (KFP's RBAC verbs)
  std::string namespace_;
  std::string name;  // for the message
  std::string id;    // for the message
};

// The routes that have a rule.
std::vector<std::string_view> AccessRuleRoutes();

// Where a request to `route` reaches, or the error KFP answers before it
// authorizes (a namespace or experiment missing in multi-user mode, one
// that does not exist, a body that does not parse). `body`: for a route
// with HasCreateBody, the body as read once (ReadCreateBody), which the
// handler then acts on; the rule reads nothing else of the request's.
Result<AccessTarget> AccessTargetOf(std::string_view route, const http::Request& request,
                                    const http::PathParams& params, store::Store& store,
                                    const CreateBody* body);

// Nullopt when `caller` may reach `target`; otherwise KFP's answer: 400 for
// a namespace that may not be empty, 403 with its PermissionDenied message.
std::optional<http::Response> CheckAccess(const AccessTarget& target, const Caller& caller,
                                          const Authenticator& auth);

// Both steps, for Backend::Handle: nullopt when the request may go on.
std::optional<http::Response> Authorize(std::string_view route, const http::Request& request,
                                        const http::PathParams& params, store::Store& store,
                                        const CreateBody* body, const Caller& caller,
                                        const Authenticator& auth);

}  // namespace kfpbench::server
