#pragma once
// Console users: people who sign in to one tenant's console (docs/console.md). An email is
// unique across the server and compared in lower case; every user of a tenant may do everything
// in its console (no roles yet). Passwords are stored only as scrypt hashes (passwords.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "core/time.hpp"
#include "store/store.hpp"

namespace tesoro::console {

struct User {
  std::string id;  // cusr_...
  std::string tenant_id;
  std::string email;  // lower case
  std::string inserted_at;
};

// A one-time password and its hash, made outside the write unit that stores the hash (hashing
// takes tens of milliseconds).
struct NewPassword {
  std::string plain;  // shown once, never stored
  std::string hash;
};
NewPassword make_password();

// ASCII letters in lower case: how emails are stored and compared.
std::string normalise_email(std::string_view email);
// validation_error at `path` unless `email` is an address of at most 254 characters.
std::optional<Error> check_email(std::string_view email, const std::string& path = "email");
// The owner's email when none is given: owner+<tenant id in lower case>@tesoro.local.
std::string default_owner_email(std::string_view tenant_id);

// A user of `tenant_id` with `email` (normalised here) and a password hash. Errors:
// item_not_found for an unknown tenant; validation_error at `email` for a malformed one;
// email_taken (outside the API's catalog: only the command line creates users) when the email
// already has a user (of any tenant).
Result<User> create_user(store::Tx& tx, std::string_view tenant_id, std::string_view email,
                         const std::string& password_hash, time::Micros now);
// A tenant's users, oldest first; item_not_found for an unknown tenant.
Result<std::vector<User>> list_users(store::Tx& tx, std::string_view tenant_id);

}  // namespace tesoro::console
