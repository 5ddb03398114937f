#include "domain/console/users.hpp"

#include "core/email.hpp"
#include "core/ids.hpp"
#include "core/limits.hpp"
#include "domain/auth/credentials.hpp"
#include "domain/console/passwords.hpp"

namespace tesoro::console {

NewPassword make_password() {
  NewPassword password;
  password.plain = new_password();
  password.hash = hash_password(password.plain);
  return password;
}

std::string normalise_email(std::string_view email) {
  std::string out(email);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<Error> check_email(std::string_view email, const std::string& path) {
  if (email.size() > limits::k_email_max_chars || !email::is_email(email)) {
    return errors::validation("must be an email address of at most " +
                                  std::to_string(limits::k_email_max_chars) + " characters",
                              path);
  }
  for (char c : email) {
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f) {
      return errors::validation("must be an email address without spaces or control characters",
                                path);
    }
  }
  return std::nullopt;
}

std::string default_owner_email(std::string_view tenant_id) {
  return "owner+" + normalise_email(tenant_id) + "@tesoro.local";
}

Result<User> create_user(store::Tx& tx, std::string_view tenant_id, std::string_view email,
                         const std::string& password_hash, time::Micros now) {
  if (auto refused = check_email(email)) return *refused;
  if (!auth::tenant_exists(tx, tenant_id)) return errors::item_not_found("tenant");
  User user{ids::generate("cusr"), std::string(tenant_id), normalise_email(email), time::iso(now)};
  if (tx.query_one("SELECT 1 FROM console_users WHERE email = ?", {user.email})) {
    return errors::make("email_taken", "a console user with this email already exists",
                        "email");
  }
  tx.exec(
      "INSERT INTO console_users (tenant_id, id, email, password_hash, inserted_at) "
      "VALUES (?, ?, ?, ?, ?)",
      {user.tenant_id, user.id, user.email, password_hash, user.inserted_at});
  return user;
}

Result<std::vector<User>> list_users(store::Tx& tx, std::string_view tenant_id) {
  if (!auth::tenant_exists(tx, tenant_id)) return errors::item_not_found("tenant");
  std::vector<User> users;
  for (const store::Row& row :
       tx.query("SELECT id, tenant_id, email, inserted_at FROM console_users WHERE tenant_id = ? "
                "ORDER BY inserted_at, id",
                {std::string(tenant_id)})) {
    users.push_back({row.text(0), row.text(1), row.text(2), row.text(3)});
  }
  return users;
}

}  // namespace tesoro::console
