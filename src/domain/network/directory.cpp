#include "domain/network/directory.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <vector>

#include "core/crypto.hpp"
#include "core/limits.hpp"
#include "domain/collections/attempts.hpp"
#include "domain/collections/collections.hpp"
#include "domain/ledger/accounts.hpp"

namespace tesoro::network {
namespace {

// A participant of the sandbox network (a bank or a wallet): its NIT's nine digits (the check
// digit is computed) and its code on the network. Fictitious, so that no sandbox payment names a
// real institution.
struct Participant {
  std::string_view nit_digits;
  std::string_view spbvi;
};
constexpr std::array<Participant, 8> k_participants = {{{"900500101", "1001"},
                                                        {"900500202", "1002"},
                                                        {"900500303", "1003"},
                                                        {"900500404", "1004"},
                                                        {"900500505", "1005"},
                                                        {"900500606", "1006"},
                                                        {"900500707", "1007"},
                                                        {"900500808", "1008"}}};
// This Tesoro as a participant: the keys of its collections resolve to it.
constexpr Participant k_tesoro_participant = {"900500000", "1000"};

// The currency of the network's accounts.
constexpr std::string_view k_network_currency = "COP";

// Documented sandbox keys (docs/network.md): the ending of a key's value that never resolves,
// and those whose transfers fail, with the failure.
constexpr std::string_view k_never_resolves_suffix = "404";
struct FailingSuffix {
  std::string_view suffix;
  std::string_view failure;
};
constexpr std::array<FailingSuffix, 4> k_failing_suffixes = {{{"991", "unknown"},
                                                              {"992", "risk_control"},
                                                              {"993", "breb_timeout"},
                                                              {"994", "provider_unavailable"}}};

// Businesses the synthetic directory's legal creditors are named after (fictitious).
constexpr std::array<std::string_view, 16> k_companies = {
    "Tienda La Esperanza S.A.S.",       "Distribuciones El Progreso S.A.S.",
    "Panadería San Jorge S.A.S.",       "Ferretería El Tornillo Ltda.",
    "Comercializadora Andina S.A.S.",   "Inversiones Los Almendros S.A.S.",
    "Droguería Santa Lucía S.A.S.",     "Café del Quindío S.A.S.",
    "Textiles La Montaña S.A.S.",       "Transportes El Cóndor S.A.",
    "Supermercado La Economía S.A.S.",  "Restaurante El Fogón Ltda.",
    "Papelería Alfa y Omega S.A.S.",    "Agropecuaria El Llano S.A.S.",
    "Confecciones María José S.A.S.",   "Servicios Integrales del Caribe S.A.S."};

// A key of a given type with its normalised value: what the directory is asked for.
struct Candidate {
  std::string type;
  std::string value;
};

using Digest = std::array<unsigned char, 32>;

// SHA-256 of the key: the one source of everything the synthetic directory says about it.
Digest digest_of(const Candidate& key) { return crypto::sha256(key.type + ":" + key.value); }

// `count` decimal digits drawn from bytes[from..from+count).
std::string digits_from(const Digest& bytes, std::size_t from, std::size_t count) {
  std::string out;
  for (std::size_t i = from; i < from + count; ++i) out += static_cast<char>('0' + bytes[i] % 10);
  return out;
}

std::string nit_with_check_digit(std::string_view digits) {
  return std::string(digits) + "-" + std::to_string(nit_check_digit(digits));
}

// A cellphone written +57 followed by its 10 national digits: those digits; any other value
// as it is (normalize_key judges it).
std::string national_cellphone(std::string_view value) {
  constexpr std::string_view k_country = "+57";
  if (value.size() == k_country.size() + 10 && value.starts_with(k_country)) {
    return std::string(value.substr(k_country.size()));
  }
  return std::string(value);
}

// The types a plain key's value could be, most specific first, each with its normalised value
// (see the header). Empty when it is no valid key of any type.
std::vector<Candidate> candidates_of(std::string_view raw) {
  std::vector<Candidate> out;
  auto add = [&](const std::string& type, const std::string& value) {
    auto normalized = collections::normalize_key(type, value);
    if (normalized) out.push_back({type, std::move(normalized).value()});
  };
  if (raw.starts_with('@')) {
    add("alphanumeric", std::string(raw));
  } else if (raw.find('@') != std::string_view::npos) {
    add("email", std::string(raw));
  } else if (const std::string national = national_cellphone(raw); national != raw) {
    add("cellphone", national);  // +57...: nothing else is written that way
  } else {
    add("cellphone", national);
    add("identification", national);
    add("merchant_code", national);
  }
  return out;
}

Error not_found(std::string_view path, std::string message) {
  return errors::of(ErrorCode::target_not_found, std::string(path), std::move(message));
}

Error no_creditor(std::string_view path, const Candidate& key) {
  return not_found(path, "no creditor has the " + key.type + " key " + key.value +
                             " in the network directory");
}

Error not_a_key(std::string_view path) {
  using std::to_string;
  return not_found(path, "is not a key of any type: an identification (" +
                             to_string(limits::k_identification_key_min_digits) + " to " +
                             to_string(limits::k_identification_key_max_digits) +
                             " digits), a cellphone (10 digits starting with 3), an email, an "
                             "alphanumeric key (@ and " +
                             to_string(limits::k_alphanumeric_key_min_chars) + " to " +
                             to_string(limits::k_alphanumeric_key_max_chars) +
                             " letters or digits) or a merchant code (" +
                             to_string(limits::k_merchant_code_key_min_digits) + " to " +
                             to_string(limits::k_merchant_code_key_max_digits) + " digits)");
}

// A key of a known type as the directory holds it (normalised; a cellphone also written +57...).
// target_not_found at `path` when it is no valid key of that type.
Result<Candidate> typed_candidate(const std::string& type, const std::string& value,
                                  std::string_view path) {
  auto normalized =
      collections::normalize_key(type, type == "cellphone" ? national_cellphone(value) : value);
  if (!normalized) {
    const Error& error = normalized.error();
    return not_found(path, error.errors.empty() ? std::string("is not a valid key")
                                              : error.errors.front().message);
  }
  return Candidate{type, std::move(normalized).value()};
}

// The creditors of the collections of these active entries not read before, into `creditors`:
// for each tenant, its collections' accounts and those accounts, a statement per 250 of each.
void read_creditors(store::Tx& tx, const std::vector<const collections::DirectoryEntry*>& entries,
                    CollectionCreditors& creditors) {
  std::map<std::string, std::vector<std::string>> collections_of;  // by tenant
  for (const collections::DirectoryEntry* entry : entries) {
    if (creditors.try_emplace({entry->tenant_id, entry->collection_id}).second) {
      collections_of[entry->tenant_id].push_back(entry->collection_id);
    }
  }
  for (const auto& [tenant_id, collection_ids] : collections_of) {
    const std::map<std::string, std::string> account_of =
        collections::collection_accounts(tx, tenant_id, collection_ids);
    std::set<std::string> unique;
    for (const auto& [collection_id, account_id] : account_of) unique.insert(account_id);
    const std::map<std::string, ledger::Account> accounts = ledger::get_accounts(
        tx, tenant_id, {unique.begin(), unique.end()}, ledger::Surface::participant);
    for (const auto& [collection_id, account_id] : account_of) {
      auto account = accounts.find(account_id);
      if (account == accounts.end() || !account->second.beneficiary) continue;  // stays nullopt
      const ledger::Beneficiary& beneficiary = *account->second.beneficiary;
      creditors[{tenant_id, collection_id}] = CollectionCreditor{
          {beneficiary.full_name, beneficiary.document_type, beneficiary.document_number,
           beneficiary.type},
          {account->second.number, account->second.type, account->second.currency}};
    }
  }
}

// Reads the directory's entries of those `candidates` not asked before into `found`, and the
// creditors of the active ones into `creditors`.
void look_up(store::Tx& tx, const std::vector<Candidate>& candidates,
             std::set<collections::KeyName>& asked,
             std::map<collections::KeyName, collections::DirectoryEntry>& found,
             CollectionCreditors& creditors) {
  std::vector<collections::KeyName> missing;
  for (const Candidate& candidate : candidates) {
    collections::KeyName name{candidate.type, candidate.value};
    if (asked.insert(name).second) missing.push_back(std::move(name));
  }
  if (missing.empty()) return;
  std::map<collections::KeyName, collections::DirectoryEntry> fresh =
      collections::find_keys(tx, missing);
  std::vector<const collections::DirectoryEntry*> active;
  for (const auto& [name, entry] : fresh) {
    if (entry.state == "active") active.push_back(&entry);
  }
  read_creditors(tx, active, creditors);
  found.merge(fresh);
}

// The part of a key the documented endings are read from: an email's part before '@', any
// other key's whole value.
std::string_view ending_part(const Candidate& key) {
  std::string_view value = key.value;
  return key.type == "email" ? value.substr(0, value.find('@')) : value;
}

std::optional<std::string> sandbox_failure_of(const Candidate& key) {
  for (const FailingSuffix& failing : k_failing_suffixes) {
    if (ending_part(key).ends_with(failing.suffix)) return std::string(failing.failure);
  }
  return std::nullopt;
}

Creditor synthetic_person(const Digest& bytes) {
  unsigned char seed[collections::k_payer_seed_bytes];
  std::copy_n(bytes.begin() + 2, sizeof seed, seed);
  collections::Payer payer = collections::payer_from(seed);
  return {payer.name, payer.document_type, payer.document_number, "natural"};
}

Creditor synthetic_company(const Digest& bytes) {
  // NITs of companies are nine digits starting with 8 or 9.
  const std::string digits = "9" + digits_from(bytes, 3, 8);
  return {std::string(k_companies[bytes[2] % k_companies.size()]), "NIT",
          nit_with_check_digit(digits), "legal"};
}

// Who the synthetic directory says owns a key. An identification key is its owner's own
// document number: a CC when it has 6 to 10 digits, a CE otherwise. A merchant code belongs to a
// business; any other key to a business one time in five, else to a person.
Creditor synthetic_creditor(const Candidate& key, const Digest& bytes) {
  if (key.type == "identification") {
    Creditor person = synthetic_person(bytes);
    const bool citizen = key.value.size() >= 6 && key.value.size() <= 10;
    person.document_type = citizen ? "CC" : "CE";
    person.document_number = key.value;
    return person;
  }
  const bool legal = key.type == "merchant_code" || bytes[1] % 5 == 0;
  return legal ? synthetic_company(bytes) : synthetic_person(bytes);
}

Resolution synthetic(const Candidate& key) {
  const Digest bytes = digest_of(key);
  const Participant& participant = k_participants[bytes[0] % k_participants.size()];
  Resolution resolution;
  resolution.key_type = key.type;
  resolution.key_value = key.value;
  resolution.participant_nit = nit_with_check_digit(participant.nit_digits);
  resolution.spbvi = participant.spbvi;
  resolution.creditor = synthetic_creditor(key, bytes);
  static constexpr std::array<std::string_view, 4> k_person_accounts = {
      "savings_account", "savings_account", "savings_account", "low_amount_deposit"};
  static constexpr std::array<std::string_view, 2> k_company_accounts = {"checking_account",
                                                                         "savings_account"};
  const bool legal = resolution.creditor.type == "legal";
  resolution.account.number = digits_from(bytes, 13, 11);
  resolution.account.type = legal ? k_company_accounts[bytes[24] % k_company_accounts.size()]
                                   : k_person_accounts[bytes[24] % k_person_accounts.size()];
  resolution.account.currency_code = std::string(k_network_currency);
  resolution.sandbox_failure = sandbox_failure_of(key);
  return resolution;
}

// A key of a collection of this Tesoro: its creditor is the collection's tenant account.
Result<Resolution> registered(const Candidate& key, const collections::DirectoryEntry& entry,
                              const CollectionCreditors& creditors, std::string_view path) {
  auto creditor = creditors.find({entry.tenant_id, entry.collection_id});
  if (creditor == creditors.end() || !creditor->second) return no_creditor(path, key);
  Resolution resolution;
  resolution.key_type = key.type;
  resolution.key_value = key.value;
  resolution.participant_nit = nit_with_check_digit(k_tesoro_participant.nit_digits);
  resolution.spbvi = k_tesoro_participant.spbvi;
  resolution.creditor = creditor->second->creditor;
  resolution.account = creditor->second->account;
  resolution.collection_tenant_id = entry.tenant_id;
  resolution.collection_id = entry.collection_id;
  return resolution;
}

// Registered keys first (an active one of any candidate type wins; an inactive one alone means
// not found), then the synthetic directory for the most specific type.
// `found`: the directory's entries for (at least) these candidates (collections::find_keys);
// `creditors`: those of the active ones' collections (read_creditors).
Result<Resolution> resolve_candidates(
    const std::vector<Candidate>& candidates, std::string_view path,
    const std::map<collections::KeyName, collections::DirectoryEntry>& found,
    const CollectionCreditors& creditors) {
  bool inactive = false;
  for (const Candidate& candidate : candidates) {
    auto entry = found.find({candidate.type, candidate.value});
    if (entry == found.end()) continue;
    if (entry->second.state == "active") {
      return registered(candidate, entry->second, creditors, path);
    }
    inactive = true;
  }
  const Candidate& key = candidates.front();
  if (inactive || ending_part(key).ends_with(k_never_resolves_suffix)) {
    return no_creditor(path, key);
  }
  return synthetic(key);
}

// A code point's length in bytes from its lead byte; a stray byte counts as one.
std::size_t code_point_bytes(unsigned char lead) {
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// The code points of `text` (as byte ranges), in order.
std::vector<std::string_view> code_points(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length =
        std::min(code_point_bytes(static_cast<unsigned char>(text[i])), text.size() - i);
    out.push_back(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace

std::optional<std::string> plain_key_type(std::string_view value) {
  std::vector<Candidate> candidates = candidates_of(value);
  if (candidates.empty()) return std::nullopt;
  return candidates.front().type;
}

Result<Resolution> resolve_plain_key(store::Tx& tx, std::string_view value,
                                     std::string_view path) {
  const std::string key(value);
  return KeySet(tx, {key}, {}).plain(key, path);
}

Result<Resolution> resolve_key(store::Tx& tx, std::string_view key_type, std::string_view value,
                               std::string_view path) {
  const std::string type(key_type);
  const std::string key(value);
  return KeySet(tx, {}, {{type, key}}).typed(type, key, path);
}

KeySet::KeySet(store::Tx& tx, const std::vector<std::string>& plain_values,
               const std::vector<collections::KeyName>& typed)
    : tx_(tx) {
  // A batch names a thousand keys, most of them more than once: each is looked at once.
  std::vector<std::string_view> distinct(plain_values.begin(), plain_values.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<Candidate> candidates;
  for (std::string_view value : distinct) {
    for (Candidate& candidate : candidates_of(value)) candidates.push_back(std::move(candidate));
  }
  for (const auto& [type, value] : typed) {
    auto candidate = typed_candidate(type, value, "");
    if (candidate) candidates.push_back(std::move(candidate).value());
  }
  look_up(tx_, candidates, asked_, found_, creditors_);
}

Result<Resolution> KeySet::plain(const std::string& value, std::string_view path) {
  const std::vector<Candidate> candidates = candidates_of(value);
  if (candidates.empty()) return not_a_key(path);
  look_up(tx_, candidates, asked_, found_, creditors_);
  return resolve_candidates(candidates, path, found_, creditors_);
}

Result<Resolution> KeySet::typed(const std::string& type, const std::string& value,
                                 std::string_view path) {
  auto candidate = typed_candidate(type, value, path);
  if (!candidate) return std::move(candidate).error();
  const std::vector<Candidate> candidates = {std::move(candidate).value()};
  look_up(tx_, candidates, asked_, found_, creditors_);
  return resolve_candidates(candidates, path, found_, creditors_);
}

std::string mask_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  bool word_start = true;
  for (std::string_view point : code_points(name)) {
    if (point == " ") {
      out += ' ';
      word_start = true;
    } else if (word_start) {
      out += point;
      word_start = false;
    } else {
      out += '*';
    }
  }
  return out;
}

std::string mask_number(std::string_view number) {
  constexpr std::size_t k_visible = 4;
  const std::vector<std::string_view> points = code_points(number);
  // A number of 4 characters or fewer is masked whole: a mask never shows all of one.
  const std::size_t hidden = points.size() > k_visible ? points.size() - k_visible : points.size();
  std::string out(hidden, '*');
  for (std::size_t i = hidden; i < points.size(); ++i) out += points[i];
  return out;
}

int nit_check_digit(std::string_view digits) {
  static constexpr std::array<int, 15> k_weights = {3,  7,  13, 17, 19, 23, 29, 37,
                                                    41, 43, 47, 53, 59, 67, 71};
  if (digits.empty() || digits.size() > k_weights.size()) return -1;
  int sum = 0;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    const char digit = digits[digits.size() - 1 - i];  // weights apply from the right
    if (digit < '0' || digit > '9') return -1;
    sum += (digit - '0') * k_weights[i];
  }
  const int remainder = sum % 11;
  return remainder <= 1 ? remainder : 11 - remainder;
}

}  // namespace tesoro::network
