// POST /v1/cards/configuration_groups, GET /v1/cards/configuration_groups[/{id}],
// PATCH /v1/cards/configuration_groups/{id}.
#include "api/context.hpp"
#include "api/lists.hpp"
#include "api/validation/fields.hpp"
#include "core/limits.hpp"
#include "domain/cards/configuration_groups.hpp"

namespace tesoro::api {
namespace {


json::object configuration_group_json(const cards::ConfigurationGroup& group) {
  return json::object{{"id", group.id},
                      {"name", group.name},
                      {"spending_control_id", optional_json(group.spending_control_id)},
                      {"default", group.is_default},
                      {"inserted_at", group.inserted_at},
                      {"updated_at", group.updated_at}};
}

struct NewGroup {
  std::string name;
  std::optional<std::string> spending_control_id;
};

Result<NewGroup> decode_new_group(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  NewGroup input;
  input.name = required_text(reader, "name", limits::k_name_max_chars, problems);
  input.spending_control_id = reader.id("spending_control_id", Need::optional, "spc");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return input;
}

Result<cards::ConfigurationGroupChanges> decode_changes(std::string_view body) {
  auto parsed = parse_object(body);
  if (!parsed) return std::move(parsed).error();
  Problems problems;
  ObjectReader reader(parsed.value(), "", problems);
  cards::ConfigurationGroupChanges changes;
  if (reader.is_null("name")) {
    problems.invalid("name", "must not be null");
  } else if (reader.present("name")) {
    std::string name = required_text(reader, "name", limits::k_name_max_chars, problems);
    if (!name.empty()) changes.name = std::move(name);
  }
  // null clears the group's control.
  auto control = reader.patch<std::string>(
      "spending_control_id", [&] { return reader.id("spending_control_id", Need::optional, "spc"); });
  if (control.is_null()) changes.spending_control_id.emplace();  // engaged, holding none
  if (control.has_value()) changes.spending_control_id.emplace(control.value());
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return changes;
}

std::string path_id(Context& context, Problems& problems) {
  return check_path_id(context.param("id"), "ccg", "a configuration group", problems);
}

http::Response create(Context& context) {
  auto input = decode_new_group(context.request.body);
  if (!input) return context.error(input.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto group = cards::create_configuration_group(tx, context.tenant_id(), input->name,
                                                   input->spending_control_id, context.now());
    if (!group) return std::move(group).error();
    return json_response(201, configuration_group_json(group.value()));
  });
}

http::Response show(Context& context) {
  Problems problems;
  std::string id = path_id(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  return context.read([&](store::Tx& tx) -> Result<http::Response> {
    auto group = cards::get_configuration_group(tx, context.tenant_id(), id);
    if (!group) return std::move(group).error();
    return json_response(200, configuration_group_json(group.value()));
  });
}

http::Response update(Context& context) {
  Problems problems;
  std::string id = path_id(context, problems);
  if (!problems.empty()) return context.error(problems.to_error());
  auto changes = decode_changes(context.request.body);
  if (!changes) return context.error(changes.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto group = cards::update_configuration_group(tx, context.tenant_id(), id, changes.value(),
                                                   context.now());
    if (!group) return std::move(group).error();
    return json_response(200, configuration_group_json(group.value()));
  });
}

http::Response list(Context& context) {
  return paginated_list(
      context, "configuration_groups",
      [&](store::Tx& tx, const Page& page) {
        return cards::list_configuration_groups(tx, context.tenant_id(), page.offset(),
                                                page.size);
      },
      configuration_group_json);
}

}  // namespace

void add_configuration_group_routes(Routes& routes) {
  const std::string base = "/v1/cards/configuration_groups";
  routes.push_back({"POST", base, AuthKind::core, "cards", create});
  routes.push_back({"GET", base, AuthKind::core, "cards", list});
  routes.push_back({"GET", base + "/{id}", AuthKind::core, "cards", show});
  routes.push_back({"PATCH", base + "/{id}", AuthKind::core, "cards", update});
}

}  // namespace tesoro::api
