# Seeding shared by bench/run and bench/profile (sourced; both set $base to the server's URL).

# participant_token CREDENTIALS: an access token of the OAuth client (every participant scope)
# in CREDENTIALS, the output of `tesoro init --json`.
participant_token() {
  curl -s -X POST "$base/api/v1/oauth/token" -H 'Content-Type: application/json' \
    -d "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(json.dumps({"grant_type":"client_credentials","client_id":c["client_id"],"client_secret":c["client_secret"]}))' "$1")" |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("access_token",""))'
}

# seed_collections N IDS-FILE KEYS-FILE TOKEN: N multiple-use collections on the tenant's
# receptor account whose limits no run can reach (attempts of 100 minor units, QR codes of
# 15,000.00), one collection id per line in IDS-FILE and its alphanumeric key in KEYS-FILE.
# Returns 1 when the build has no collections.
seed_collections() {
  local count=$1 ids=$2 keys=$3 token=$4 account
  account=$(curl -s "$base/api/v1/tenant/accounts?role=receptor" -H "Authorization: Bearer $token" |
    python3 -c 'import json,sys; a=json.load(sys.stdin); print(a[0]["id"] if isinstance(a, list) and a else "")')
  [[ -n "$account" ]] || return 1
  python3 - "$count" "$account" <<'PY' |
import json, sys
count, account = int(sys.argv[1]), sys.argv[2]
def money(amount): return {"amount": amount, "currency": "COP"}
print(json.dumps({"collections": [{
    "external_id": "bench-%d" % i, "tenant_account_id": account, "usage_mode": "multiple_use",
    "minimum_attempt_amount": money(100), "maximum_attempt_amount": money(100000000),
    "total_minimum_amount": money(100), "total_maximum_amount": money(9000000000000000)}
    for i in range(count)]}))
PY
  curl -s -X POST "$base/api/v1/collections" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --data-binary @- |
    python3 -c '
import json, sys
body = json.load(sys.stdin)
created = body.get("created", []) if isinstance(body, dict) else []
with open(sys.argv[1], "w") as ids, open(sys.argv[2], "w") as keys:
    for collection in created:
        ids.write(collection["id"] + "\n")
        keys.write(collection["keys"][0]["value"] + "\n")
sys.exit(0 if created else 1)' "$ids" "$keys" ||
    { echo "bench: POST /api/v1/collections failed: skipping the collection benchmarks" >&2; return 1; }
}
