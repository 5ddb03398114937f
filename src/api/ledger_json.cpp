#include "api/ledger_json.hpp"

#include <cctype>
#include <charconv>

#include "api/lists.hpp"
#include "core/limits.hpp"

namespace tesoro::api {
namespace {

// Account JSON is written as text: a page of ten accounts built as Boost.JSON values cost about
// two thirds of the instructions of GET /v1/accounts (callgrind, docs/scaling.md).
// available: what may be spent now (the balance less what is held by moving outgoing transfers
// and payouts); held: what they hold; current: the balance itself (available + held).
void balance_text(json_text::Writer& out, const ledger::Account& account) {
  out.begin_object().key("available");
  money_text(out, account.balance_minor - account.held_minor, account.currency);
  out.key("held");
  money_text(out, account.held_minor, account.currency);
  out.key("current");
  money_text(out, account.balance_minor, account.currency);
  out.key("updated_at").string(account.balance_updated_at).end_object();
}

}  // namespace

std::string account_text(const ledger::Account& account) {
  json_text::Writer out(512);
  out.begin_object().key("id").string(account.id).key("name").string(account.name);
  out.key("number").string(account.number).key("provider").string("tesoro");
  out.key("state").string(account.state).key("type").string(account.type);
  out.key("currency").string(account.currency).key("account_holder_id");
  optional_text(out, account.account_holder_id);
  out.key("balance");
  balance_text(out, account);
  out.key("inserted_at").string(account.inserted_at);
  out.key("updated_at").string(account.updated_at).end_object();
  return out.take();
}

std::string tenant_account_text(const ledger::Account& account) {
  json_text::Writer out(512);
  out.begin_object().key("id").string(account.id).key("number").string(account.number);
  out.key("currency_code").string(account.currency).key("type").string(account.type);
  out.key("role");
  optional_text(out, account.role);
  out.key("state").string(account.state).key("beneficiary").begin_object();
  if (account.beneficiary) {
    out.key("document_number").string(account.beneficiary->document_number);
    out.key("document_type").string(account.beneficiary->document_type);
    out.key("full_name").string(account.beneficiary->full_name);
    out.key("type").string(account.beneficiary->type);
  }
  out.end_object().key("balance");
  balance_text(out, account);
  out.key("inserted_at").string(account.inserted_at);
  out.key("updated_at").string(account.updated_at).end_object();
  return out.take();
}

namespace {

struct FundingRequest {
  Money amount;
  std::string description;
};

// `problems` may already hold problems of the path, so that one answer lists them all.
Result<FundingRequest> decode_funding(std::string_view body,
                                      const std::vector<std::string>& currencies,
                                      Problems& problems) {
  auto parsed = parse_object(body);
  if (!parsed) {
    problems.add(parsed.error());
    return problems.to_error();
  }
  ObjectReader reader(parsed.value(), "", problems);
  FundingRequest request;
  auto amount = read_money(reader, "amount", Need::required, currencies, problems);
  if (amount) request.amount = *amount;
  request.description =
      reader.string("description", Need::optional, limits::k_description_max_chars)
          .value_or("sandbox funding");
  reader.reject_unknown();
  if (!problems.empty()) return problems.to_error();
  return request;
}

// The quality (RFC 9110, section 12.4.2) the Accept field gives `type`/`subtype`: that of the
// most specific range that matches it (type/subtype, then type/*, then */*), 0 when none does.
// No Accept field accepts everything.
double quality_of(const std::string* accept, std::string_view type, std::string_view subtype) {
  if (accept == nullptr) return 1.0;
  auto trim = [](std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
    return text;
  };
  auto lower_equal = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    }
    return true;
  };
  int best_specificity = -1;
  double best = 0.0;
  std::string_view rest(*accept);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view range = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const std::size_t semicolon = range.find(';');
    std::string_view media = trim(range.substr(0, semicolon));
    double quality = 1.0;
    for (std::string_view params = semicolon == std::string_view::npos
                                       ? std::string_view()
                                       : range.substr(semicolon + 1);
         !params.empty();) {
      const std::size_t next = params.find(';');
      std::string_view param = trim(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
        // A number from 0 to 1 (from_chars: no locale); anything else accepts nothing.
        const std::string_view value = param.substr(2);
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(),
                                                  quality, std::chars_format::fixed);
        const bool valid = error == std::errc() && end == value.data() + value.size() &&
                           quality >= 0.0 && quality <= 1.0;
        if (!valid) quality = 0.0;
      }
    }
    const std::size_t slash = media.find('/');
    if (slash == std::string_view::npos) continue;
    std::string_view range_type = media.substr(0, slash), range_subtype = media.substr(slash + 1);
    int specificity = -1;
    if (lower_equal(range_type, type) && lower_equal(range_subtype, subtype)) {
      specificity = 2;
    } else if (lower_equal(range_type, type) && range_subtype == "*") {
      specificity = 1;
    } else if (range_type == "*" && range_subtype == "*") {
      specificity = 0;
    }
    if (specificity > best_specificity) {
      best_specificity = specificity;
      best = quality;
    }
  }
  return best;
}

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
void csv_field(std::string& out, std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += text;
    return;
  }
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string entries_csv(const PageOf<ledger::StatementEntry>& found) {
  std::string out =
      "id,created_at,direction,amount,currency,balance_after,description,reference_type,"
      "reference_id,journal_entry_id\r\n";
  for (const ledger::StatementEntry& entry : found.items) {
    const bool credit = entry.amount_minor > 0;
    out += entry.id;
    out += ',';
    out += entry.created_at;
    out += credit ? ",credit," : ",debit,";
    // A debit is never INT64_MIN: no posting that large can leave a customer account.
    out += std::to_string(credit ? entry.amount_minor : -entry.amount_minor);
    out += ',';
    out += entry.currency;
    out += ',';
    out += std::to_string(entry.balance_after_minor);
    out += ',';
    csv_field(out, entry.description);
    out += ',';
    csv_field(out, entry.reference_type);
    out += ',';
    csv_field(out, entry.reference_id);
    out += ',';
    out += entry.journal_entry_id;
    out += "\r\n";
  }
  return out;
}

}  // namespace

std::string statement_entry_text(const ledger::StatementEntry& entry) {
  const bool credit = entry.amount_minor > 0;
  json_text::Writer out(512);
  out.begin_object().key("id").string(entry.id).key("amount");
  money_text(out, credit ? entry.amount_minor : -entry.amount_minor, entry.currency);
  out.key("direction").string(credit ? "credit" : "debit").key("balance_after");
  money_text(out, entry.balance_after_minor, entry.currency);
  out.key("description").string(entry.description);
  out.key("reference").begin_object().key("type").string(entry.reference_type);
  out.key("id").string(entry.reference_id).end_object();
  out.key("journal_entry_id").string(entry.journal_entry_id);
  out.key("created_at").string(entry.created_at).end_object();
  return out.take();
}

http::Response entries_response(Context& context, std::string_view prefix, std::string_view what,
                                ledger::Surface surface) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), prefix, what, problems);
  QueryReader query(context.query, problems);
  Page page = read_page(query);
  ledger::StatementFilter filter;
  filter.created_from = query.timestamp("created_at[gte]");
  filter.created_to = query.timestamp("created_at[lte]");
  query.reject_unknown();
  if (!problems.empty()) return context.error(problems.to_error());
  const std::string* accept = context.request.header("accept");
  const bool csv = quality_of(accept, "text", "csv") > quality_of(accept, "application", "json");
  // One statement (ledger::list_entries), but for a page with no rows.
  return context.read_single([&](store::Tx& tx) -> Result<http::Response> {
    auto found = ledger::list_entries(tx, context.tenant_id(), id, surface, filter, page.offset(),
                                      page.size);
    if (!found) return std::move(found).error();
    if (!csv) return paginated_text("entries", page, found.value(), statement_entry_text);
    http::Response response;
    response.content_type = "text/csv; charset=utf-8";
    response.body = entries_csv(found.value());
    response.set_header("Content-Disposition",
                        "attachment; filename=\"" + id + "-entries-page-" +
                            std::to_string(page.number) + ".csv\"");
    return response;
  });
}

http::Response fund_account_response(Context& context, std::string_view prefix,
                                     std::string_view what, ledger::Surface surface,
                                     std::string (*encode)(const ledger::Account&)) {
  Problems problems;
  std::string id = check_path_id(context.param("id"), prefix, what, problems);
  auto request =
      decode_funding(context.request.body, context.services.settings.currencies, problems);
  if (!request) return context.error(request.error());
  return context.write([&](store::Tx& tx) -> Result<http::Response> {
    auto account = ledger::fund_account(tx, context.tenant_id(), id, surface,
                                        request->amount.amount_minor, request->amount.currency,
                                        request->description, context.now());
    if (!account) return std::move(account).error();
    return json_text_response(201, encode(account.value()));
  });
}

}  // namespace tesoro::api
