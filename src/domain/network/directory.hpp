#pragma once
// The sandbox network's key directory (the role DICE plays for Bre-B): who a key pays.
//
// Two sources, looked up in this order:
// 1. The keys of collections of every tenant of this Tesoro (table network_keys, written by
//    domain/collections). An active one resolves to the collection's tenant account (creditor:
//    its beneficiary); a payment to it is delivered as a payment attempt on that collection, in
//    its own tenant. An inactive one does not resolve.
// 2. A deterministic synthetic directory: every other well-formed key resolves to a creditor
//    derived from a hash of (key type, key value) alone, so the same key always gives the same
//    creditor, participant (with a NIT whose check digit is valid) and account number, on every
//    node and after every restart. Documented sandbox keys of this directory (docs/network.md;
//    a collection's key resolves to its collection whatever it ends in):
//    - a key whose value ends in `404` (an email: whose part before `@` does) never resolves;
//    - one ending in `991`, `992`, `993` or `994` resolves, but a transfer to it fails with
//      `unknown`, `risk_control`, `breb_timeout` or `provider_unavailable`.
//
// A plain key (query format `plain_key`) is its value alone; its type is inferred: `@...`
// alphanumeric, text with `@` inside an email, 10 digits starting with 3 a cellphone (also written
// +57 followed by them), other runs of 5 to 15 digits an identification, 4 or 16 to 20 digits a
// merchant code. A registered key of another type with the same value (a collection's merchant_code
// `12345678`, say) is found as well: the directory is asked for each type the value could be,
// registered keys first.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "domain/collections/collections.hpp"  // KeyName, DirectoryEntry
#include "store/store.hpp"

namespace tesoro::network {

// The network's code in payloads and identifiers (`CO.COM.CRB...`).
inline constexpr std::string_view k_network_code = "CRB";

struct Creditor {
  std::string full_name;
  std::string document_type;    // CC, CE, NIT, PP
  std::string document_number;  // NIT: digits, a dash and the check digit
  std::string type;             // natural | legal
};

struct CreditorAccount {
  std::string number;
  std::string type;  // savings_account, checking_account, ...
  std::string currency_code;
};

struct Resolution {
  std::string key_type;   // one of collections::key_types()
  std::string key_value;  // normalised
  std::string participant_nit;  // the creditor's participant: 9 digits, '-', check digit
  std::string spbvi;            // the participant's code on the network
  Creditor creditor;            // unmasked: callers mask what they show (mask_* below)
  CreditorAccount account;
  // The failure a transfer to this key meets in the sandbox (unknown, risk_control,
  // breb_timeout, provider_unavailable), nullopt when it settles.
  std::optional<std::string> sandbox_failure;
  // A collection of this Tesoro owns the key: delivered as a payment attempt on it.
  std::optional<std::string> collection_tenant_id;
  std::optional<std::string> collection_id;
};

// The key type a plain key's value has, most specific first (see above); nullopt when it is
// no valid key of any type. For tests: the first of the candidates resolve_plain_key tries.
std::optional<std::string> plain_key_type(std::string_view value);

// Resolves a plain key. target_not_found (at `path`) when the value is no valid key, the
// key is registered but inactive, or it is one of the documented keys that never resolve.
Result<Resolution> resolve_plain_key(store::Tx& tx, std::string_view value,
                                     std::string_view path);
// Many keys resolved together (a batch's items, plain keys and the keys of the targets they
// name): the directory's registered keys are read for all of them at once
// (collections::find_keys), not one statement per type per key. Each answers as
// resolve_plain_key or resolve_key in the same unit would; a key not given up front is looked
// up when first asked.
// The creditor a registered key's collection pays: its tenant account's beneficiary and number.
struct CollectionCreditor {
  Creditor creditor;
  CreditorAccount account;
};
// By (tenant, collection); nullopt when the collection or its account is gone.
using CollectionCreditors =
    std::map<std::pair<std::string, std::string>, std::optional<CollectionCreditor>>;

class KeySet {
 public:
  // plain_values: plain keys; typed: (type, value) pairs as a payout or a target names them.
  KeySet(store::Tx& tx, const std::vector<std::string>& plain_values,
         const std::vector<collections::KeyName>& typed);
  Result<Resolution> plain(const std::string& value, std::string_view path);
  Result<Resolution> typed(const std::string& type, const std::string& value,
                           std::string_view path);

 private:
  store::Tx& tx_;
  std::set<collections::KeyName> asked_;
  std::map<collections::KeyName, collections::DirectoryEntry> found_;
  // Those of each active entry found, read together with the entries.
  CollectionCreditors creditors_;
};

// Resolves a key of a known type (a payout's target): the same outcomes.
Result<Resolution> resolve_key(store::Tx& tx, std::string_view key_type, std::string_view value,
                               std::string_view path);

// Masking of what a Target shows (docs/network.md): every word of a name keeps its first
// letter and the rest become `*` ("Ana María Gómez" -> "A** M**** G****"), counting characters
// (code points), not bytes; a document or account number keeps its last 4 characters
// ("1020304050" -> "******4050"), and one of 4 characters or fewer is masked whole.
std::string mask_name(std::string_view name);
std::string mask_number(std::string_view number);

// The check digit of a NIT's digits (reference-notes: weights 3, 7, 13, ... from the right);
// -1 when `digits` is not 1 to 15 decimal digits.
int nit_check_digit(std::string_view digits);

}  // namespace tesoro::network
