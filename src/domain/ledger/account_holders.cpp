#include "domain/ledger/account_holders.hpp"

#include <boost/json.hpp>

#include "core/ids.hpp"
#include "store/json_columns.hpp"
#include "domain/events/events.hpp"
#include "store/pages.hpp"

namespace tesoro::ledger {

namespace json = boost::json;

using json_columns::optional_json;
using json_columns::optional_text;
using json_columns::text;

std::string encode_address(const Address& a) {
  return json::serialize(json::object{{"city", a.city},       {"country", a.country},
                                      {"line_1", a.line_1},   {"line_2", optional_json(a.line_2)},
                                      {"state", a.state},     {"zip_code", a.zip_code},
                                      {"extra", optional_json(a.extra)}});
}

Address decode_address(const std::string& text_json) {
  json::object o = json::parse(text_json).as_object();
  return {text(o, "city"),  text(o, "country"),          text(o, "line_1"),
          text(o, "state"), text(o, "zip_code"),         optional_text(o, "line_2"),
          optional_text(o, "extra")};
}

std::string encode_metadata(const Metadata& metadata) {
  // Most records have none: no JSON object to build (a batch encodes a thousand).
  if (metadata.empty()) return "{}";
  json::object o;
  for (const auto& [key, value] : metadata) o[key] = value;
  return json::serialize(o);
}

Metadata decode_metadata(const std::string& text_json) {
  Metadata metadata;
  json::value parsed = json::parse(text_json);
  for (const auto& entry : parsed.as_object()) {
    metadata.emplace_back(std::string(entry.key()), std::string(entry.value().as_string()));
  }
  return metadata;
}

namespace {

std::string encode_person(const Person& p) {
  return json::serialize(json::object{{"country_code", p.country_code},
                                      {"document_number", p.document_number},
                                      {"document_type", p.document_type},
                                      {"first_name", p.first_name},
                                      {"middle_name", optional_json(p.middle_name)},
                                      {"last_name", p.last_name},
                                      {"second_last_name", optional_json(p.second_last_name)},
                                      {"person_type", p.person_type}});
}

Person decode_person(const std::string& text_json) {
  json::object o = json::parse(text_json).as_object();
  return {text(o, "country_code"), text(o, "document_number"), text(o, "document_type"),
          text(o, "first_name"),   text(o, "last_name"),       text(o, "person_type"),
          optional_text(o, "middle_name"), optional_text(o, "second_last_name")};
}

constexpr const char* k_columns =
    "id, external_id, address, person, email, phone_number, metadata, state, state_reason, "
    "state_reason_detail, type, inserted_at, updated_at";

AccountHolder from_row(const store::Row& row) {
  AccountHolder holder;
  holder.id = row.text(0);
  holder.fields.external_id = row.optional_text(1);
  holder.fields.address = decode_address(row.text(2));
  holder.fields.person = decode_person(row.text(3));
  holder.fields.email = row.optional_text(4);
  holder.fields.phone_number = row.optional_text(5);
  if (auto metadata = row.optional_text(6)) holder.fields.metadata = decode_metadata(*metadata);
  holder.state = row.text(7);
  holder.state_reason = row.optional_text(8);
  holder.state_reason_detail = row.optional_text(9);
  holder.type = row.text(10);
  holder.inserted_at = row.text(11);
  holder.updated_at = row.text(12);
  return holder;
}

}  // namespace

Result<AccountHolder> create_account_holder(store::Tx& tx, const std::string& tenant_id,
                                            const NewAccountHolder& input, time::Micros now) {
  AccountHolder holder;
  holder.id = ids::generate("acch");
  holder.fields = input;
  holder.inserted_at = holder.updated_at = time::iso(now);
  std::int64_t inserted = tx.exec(
      "INSERT INTO account_holders (tenant_id, id, external_id, address, person, email, "
      "phone_number, metadata, state, state_reason, state_reason_detail, type, inserted_at, "
      "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (tenant_id, external_id) DO NOTHING",
      {tenant_id, holder.id, store::optional_value(input.external_id), encode_address(input.address),
       encode_person(input.person), store::optional_value(input.email),
       store::optional_value(input.phone_number),
       input.metadata ? store::Value(encode_metadata(*input.metadata)) : store::Value(nullptr),
       holder.state, nullptr, nullptr, holder.type, holder.inserted_at, holder.updated_at});
  if (inserted == 0) {
    return errors::of(ErrorCode::external_id_already_exists, "external_id",
                      "an account holder with this external_id already exists");
  }
  events::emit(tx, tenant_id, "account_holder.created",
               json::serialize(json::object{{"account_holder_id", holder.id},
                                            {"external_id", optional_json(input.external_id)}}),
               now);
  return holder;
}

Result<AccountHolder> get_account_holder(store::Tx& tx, const std::string& tenant_id,
                                         const std::string& id) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM account_holders WHERE tenant_id = ? AND id = ?",
                          {tenant_id, id});
  if (!row) return errors::item_not_found("account holder");
  return from_row(*row);
}

Result<PageOf<AccountHolder>> list_account_holders(store::Tx& tx, const std::string& tenant_id,
                                                   std::int64_t offset, std::int64_t limit) {
  return store::query_page<AccountHolder>(tx, k_columns, " FROM account_holders WHERE tenant_id = ?",
                                          {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                          from_row);
}

}  // namespace tesoro::ledger
