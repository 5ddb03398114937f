#pragma once
// The shape every paginated list shares: page_number and page_size from the query (nothing
// else accepted), `{<plural>: [...], pagination: {...}}` in the answer.
#include <string>
#include <string_view>
#include <type_traits>

#include "api/context.hpp"
#include "api/validation/readers.hpp"
#include "core/json_writer.hpp"
#include "core/page.hpp"

namespace tesoro::api {

// The list's `pagination` object: page_number, page_size, total_items, total_pages.
inline void pagination_text(json_text::Writer& out, const Page& page, std::int64_t total_items) {
  out.begin_object().key("page_number").integer(page.number).key("page_size").integer(page.size);
  out.key("total_items").integer(total_items);
  out.key("total_pages").integer(total_pages(page, total_items)).end_object();
}

// The answer of a list whose items write their own JSON text (the domain's *_text functions):
// {<plural>: [to_text(item)...], pagination: {...}}.
template <class T, class ToText>
http::Response paginated_text(std::string_view plural, const Page& page, const PageOf<T>& found,
                              ToText to_text, std::size_t bytes_per_item = 512) {
  json_text::Writer out(256 + bytes_per_item * found.items.size());
  out.begin_object().key(plural).begin_array();
  for (const T& item : found.items) out.raw(to_text(item));
  out.end_array().key("pagination");
  pagination_text(out, page, found.total_items);
  out.end_object();
  return json_text_response(200, out.take());
}

// The same for items encoded as Boost.JSON objects (each serialised into the text).
template <class T, class Encode>
http::Response paginated_json(std::string_view plural, const Page& page, const PageOf<T>& found,
                              Encode encode) {
  return paginated_text(plural, page, found,
                        [&](const T& item) { return json::serialize(encode(item)); });
}

// How a list reads: in a snapshot (a fetch that runs several statements), or as one statement
// (a fetch that is one store::query_page: no BEGIN and COMMIT on PostgreSQL; an empty page's
// count is then a second statement of its own).
enum class ListRead { snapshot, one_statement };

// fetch(tx, page) -> Result<PageOf<T>>; encode(const T&) -> json::object, or std::string of
// JSON text (then the answer is written as text, without Boost.JSON values).
template <class Fetch, class Encode>
http::Response paginated_list(Context& context, std::string_view plural, Fetch fetch,
                              Encode encode, ListRead how = ListRead::snapshot) {
  Problems problems;
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  auto read = how == ListRead::one_statement ? &Context::read_single : &Context::read;
  return (context.*read)([&](store::Tx& tx) -> Result<http::Response> {
    auto found = fetch(tx, page);
    if (!found) return std::move(found).error();
    using Item = typename std::decay_t<decltype(found->items)>::value_type;
    if constexpr (std::is_same_v<std::invoke_result_t<Encode&, const Item&>, std::string>) {
      return paginated_text(plural, page, found.value(), encode);
    } else {
      return paginated_json(plural, page, found.value(), encode);
    }
  });
}

// GET .../find_successful_by?external_id=...: the one query parameter (422 missing_field
// without it), then answer(tx, external_id) -> Result<http::Response> in a read snapshot.
template <class Answer>
http::Response find_by_external_id(Context& context, Answer answer) {
  Problems problems;
  QueryReader query(context.query, problems);
  auto external_id = query.string("external_id");
  query.reject_unknown();
  if (!external_id && problems.empty()) problems.missing("external_id");
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read(
      [&](store::Tx& tx) -> Result<http::Response> { return answer(tx, *external_id); });
}

}  // namespace tesoro::api
