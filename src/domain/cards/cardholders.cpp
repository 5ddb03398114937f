#include "domain/cards/cardholders.hpp"

#include <boost/json.hpp>

#include "core/ids.hpp"
#include "store/json_columns.hpp"
#include "domain/events/events.hpp"
#include "store/pages.hpp"

namespace tesoro::cards {
namespace {

namespace json = boost::json;

using json_columns::text;

// The document is a JSON text column, like the address (whose codec the ledger shares).
std::string encode_document(const CardholderDocument& d) {
  return json::serialize(json::object{{"country_code", d.country_code},
                                      {"number", d.number},
                                      {"person_type", d.person_type},
                                      {"type", d.type}});
}

CardholderDocument decode_document(const std::string& text_json) {
  json::object o = json::parse(text_json).as_object();
  return {text(o, "country_code"), text(o, "number"), text(o, "person_type"), text(o, "type")};
}

constexpr const char* k_columns =
    "id, first_name, middle_name, last_name, second_last_name, birthdate, nationality, email, "
    "phone_number, address, document, inserted_at, updated_at";

Cardholder from_row(const store::Row& row) {
  Cardholder holder;
  holder.id = row.text(0);
  CardholderFields& f = holder.fields;
  f.first_name = row.text(1);
  f.middle_name = row.optional_text(2);
  f.last_name = row.text(3);
  f.second_last_name = row.optional_text(4);
  f.birthdate = row.optional_text(5);
  f.nationality = row.optional_text(6);
  f.email = row.optional_text(7);
  f.phone_number = row.optional_text(8);
  if (auto address = row.optional_text(9)) f.address = ledger::decode_address(*address);
  if (auto document = row.optional_text(10)) f.document = decode_document(*document);
  holder.inserted_at = row.text(11);
  holder.updated_at = row.text(12);
  return holder;
}

// The values of the field columns, in k_columns order (from first_name to document).
store::Params field_values(const CardholderFields& f) {
  return {f.first_name,
          store::optional_value(f.middle_name),
          f.last_name,
          store::optional_value(f.second_last_name),
          store::optional_value(f.birthdate),
          store::optional_value(f.nationality),
          store::optional_value(f.email),
          store::optional_value(f.phone_number),
          f.address ? store::Value(ledger::encode_address(*f.address)) : store::Value(nullptr),
          f.document ? store::Value(encode_document(*f.document)) : store::Value(nullptr)};
}

std::string event_data(const std::string& id) {
  return json::serialize(json::object{{"cardholder_id", id}});
}

Result<Cardholder> select_cardholder(store::Tx& tx, const std::string& tenant_id,
                                     const std::string& id, std::string_view lock) {
  auto row = tx.query_one(std::string("SELECT ") + k_columns +
                              " FROM cardholders WHERE tenant_id = ? AND id = ?" +
                              std::string(lock),
                          {tenant_id, id});
  if (!row) return errors::item_not_found("cardholder");
  return from_row(*row);
}

}  // namespace

Result<Cardholder> create_cardholder(store::Tx& tx, const std::string& tenant_id,
                                     const CardholderFields& fields, time::Micros now) {
  Cardholder holder;
  holder.id = ids::generate("carh");
  holder.fields = fields;
  holder.inserted_at = holder.updated_at = time::iso(now);
  store::Params params = {tenant_id, holder.id};
  for (store::Value& value : field_values(fields)) params.push_back(std::move(value));
  params.push_back(holder.inserted_at);
  params.push_back(holder.updated_at);
  tx.exec(
      "INSERT INTO cardholders (tenant_id, id, first_name, middle_name, last_name, "
      "second_last_name, birthdate, nationality, email, phone_number, address, document, "
      "inserted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      params);
  events::emit(tx, tenant_id, "cardholder.created", event_data(holder.id), now);
  return holder;
}

Result<Cardholder> get_cardholder(store::Tx& tx, const std::string& tenant_id,
                                  const std::string& id) {
  return select_cardholder(tx, tenant_id, id, "");
}

Result<Cardholder> lock_cardholder(store::Tx& tx, const std::string& tenant_id,
                                   const std::string& id) {
  return select_cardholder(tx, tenant_id, id, tx.lock_rows());
}

Result<Cardholder> replace_cardholder(store::Tx& tx, const std::string& tenant_id,
                                      const std::string& id, const CardholderFields& fields,
                                      time::Micros now) {
  auto holder = lock_cardholder(tx, tenant_id, id);
  if (!holder) return holder;
  holder->fields = fields;
  holder->updated_at = time::iso(now);
  store::Params params = field_values(fields);
  params.push_back(holder->updated_at);
  params.push_back(tenant_id);
  params.push_back(id);
  tx.exec(
      "UPDATE cardholders SET first_name = ?, middle_name = ?, last_name = ?, "
      "second_last_name = ?, birthdate = ?, nationality = ?, email = ?, phone_number = ?, "
      "address = ?, document = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
      params);
  events::emit(tx, tenant_id, "cardholder.updated", event_data(id), now);
  return holder;
}

Result<PageOf<Cardholder>> list_cardholders(store::Tx& tx, const std::string& tenant_id,
                                            std::int64_t offset, std::int64_t limit) {
  return store::query_page<Cardholder>(tx, k_columns, " FROM cardholders WHERE tenant_id = ?", {tenant_id}, "inserted_at DESC, id DESC", offset, limit,
                                 from_row);
}

}  // namespace tesoro::cards
