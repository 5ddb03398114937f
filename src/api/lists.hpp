#pragma once
// The shape every paginated list shares: page_number and page_size from the query (nothing
// else accepted), `{<plural>: [...], pagination: {...}}` in the answer.
#include <string_view>

#include "api/context.hpp"
#include "api/validation/readers.hpp"
#include "core/page.hpp"

namespace tesoro::api {

// fetch(tx, page) -> Result<PageOf<T>>; encode(const T&) -> json::object.
template <class Fetch, class Encode>
http::Response paginated_list(Context& context, std::string_view plural, Fetch fetch,
                              Encode encode) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto found = fetch(tx, page);
    if (!found) return std::move(found).error();
    json::array items;
    for (const auto& item : found->items) items.push_back(encode(item));
    return json_response(200, json::object{{plural, std::move(items)},
                                           {"pagination", pagination_json(page, found->total_items)}});
  });
}

}  // namespace tesoro::api
