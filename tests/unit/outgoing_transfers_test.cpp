// Outgoing transfers below the API, on both engines: acceptance of a batch (one hold for all),
// the processor (a late pass walks every due step with the schedule's timemarks; two nodes'
// passes settle each transfer once), and what `tesoro verify` finds in tampered books.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>
#include <thread>

#include <boost/json.hpp>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "domain/events/events.hpp"
#include "domain/ledger/accounts.hpp"
#include "domain/network/targets.hpp"
#include "domain/transfers/outgoing_transfers.hpp"
#include "domain/transfers/processor.hpp"
#include "domain/transfers/transfer_rows.hpp"
#include "emitted_events.hpp"
#include "test_stores.hpp"

using namespace tesoro;

TEST(TransferRows, TimemarksAreAddedInOrderWithoutAZone) {
  const time::Micros at = *time::parse_iso("2026-11-23T12:00:00.5Z");
  const std::string t110 = transfers::rows::with_timemark("{}", "T110", at);
  EXPECT_EQ(t110, R"({"T110":"2026-11-23T12:00:00.500000"})");
  EXPECT_EQ(transfers::rows::with_timemark(t110, "T120", at + 4'000'000),
            R"({"T110":"2026-11-23T12:00:00.500000","T120":"2026-11-23T12:00:04.500000"})");
}

TEST(TransferRows, TimemarksUntilATimeKeepTheMarksSetByThenAsTheyWereWritten) {
  const time::Micros at = *time::parse_iso("2026-11-23T12:00:00.5Z");
  std::string marks = transfers::rows::with_timemark("{}", "T110", at);
  marks = transfers::rows::with_timemark(marks, "T120", at + 4'000'000);
  marks = transfers::rows::with_timemark(marks, "T130", at + 5'000'000);
  const std::string t110 = transfers::rows::with_timemark("{}", "T110", at);
  EXPECT_EQ(transfers::rows::timemarks_until(marks, time::iso(at - 1)), "{}");
  EXPECT_EQ(transfers::rows::timemarks_until(marks, time::iso(at)), t110)
      << "a mark set at that very time";
  EXPECT_EQ(transfers::rows::timemarks_until(marks, time::iso(at + 3'999'999)), t110);
  EXPECT_EQ(transfers::rows::timemarks_until(marks, time::iso(at + 4'000'000)),
            transfers::rows::with_timemark(t110, "T120", at + 4'000'000));
  EXPECT_EQ(transfers::rows::timemarks_until(marks, time::iso(at + 5'000'000)), marks);
  EXPECT_EQ(transfers::rows::timemarks_until("{}", time::iso(at)), "{}");
}

TEST(TransferRows, ATransferAsOfAStateShowsThatStateItsTimeAndNoLaterMark) {
  const time::Micros at = *time::parse_iso("2026-11-23T12:00:00Z");
  transfers::Transfer t;
  t.id = "bbot_0000000000000000000001";
  t.state = "failed";
  t.state_reason = "risk_control";
  t.timemarks_json = transfers::rows::with_timemark(
      transfers::rows::with_timemark(transfers::rows::with_timemark("{}", "T110", at), "T120",
                                     at + 4'000'000),
      "T130", at + 5'000'000);
  t.inserted_at = time::iso(at);
  t.updated_at = time::iso(at + 5'000'000);
  t.stored_target =
      R"(["plain_key","900500202-1","1002",null,"******4050","CC","A** M**** G****","natural",)"
      R"("COP","******1894","savings_account","2026-11-23T12:15:00.000000Z",)"
      R"("2026-11-23T12:00:00.000000Z"])";
  const transfers::Transfer held = transfers::as_of(t, "held", time::iso(at + 3'000'000));
  EXPECT_EQ(held.state, "held");
  EXPECT_FALSE(held.state_reason) << "a reason is the failure's";
  EXPECT_EQ(held.updated_at, time::iso(at + 3'000'000));
  EXPECT_EQ(held.timemarks_json, transfers::rows::with_timemark("{}", "T110", at));
  EXPECT_EQ(held.inserted_at, t.inserted_at);
  const transfers::Transfer failed = transfers::as_of(t, "failed", t.updated_at);
  EXPECT_EQ(transfers::transfer_text(failed), transfers::transfer_text(t))
      << "as of its last state, the transfer as it is";
}

TEST(TransferRows, TheFlowGoesFromCreatedToSuccessful) {
  std::vector<std::string> walked = {"created"};
  while (!transfers::rows::next_state(walked.back()).empty()) {
    walked.emplace_back(transfers::rows::next_state(walked.back()));
  }
  EXPECT_EQ(walked, (std::vector<std::string>{"created", "processing", "target_resolved", "held",
                                              "sent_to_breb_provider", "successful"}));
  EXPECT_TRUE(transfers::rows::next_state("failed").empty());
  EXPECT_TRUE(transfers::rows::is_final("failed"));
  EXPECT_FALSE(transfers::rows::is_final("held"));
  // Until target_resolved, a transfer's key is still to be resolved again.
  std::vector<std::string> before;
  for (const std::string& state : transfers::states()) {
    if (transfers::rows::before_target_resolved(state)) before.push_back(state);
  }
  EXPECT_EQ(before, (std::vector<std::string>{"created", "processing"}));
  // states() lists the flow, then failed.
  std::vector<std::string> listed = transfers::states();
  EXPECT_EQ(listed.back(), "failed");
  listed.pop_back();
  EXPECT_EQ(listed, walked);
}

namespace {

const std::string k_tenant = "ten_outgoingtransfersAAAA";

class OutgoingTransfersTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    // Real time: the processor reads it through tenant_clock (offset 0 for this tenant).
    now = time::now_micros();
    source = write<ledger::Account>([&](store::Tx& tx) -> Result<ledger::Account> {
      tx.exec("INSERT INTO tenants (id, name, environment, inserted_at) VALUES (?, 't', "
              "'sandbox', ?)",
              {k_tenant, time::iso(now)});
      auto account = ledger::open_tenant_account(
          tx, k_tenant, {"savings_account", "originator", "COP", {"900123456", "NIT", "Acme", "legal"}},
          now);
      if (!account) return account;
      return ledger::fund_account(tx, k_tenant, account->id, ledger::Surface::participant,
                                  1'000'000, "COP", "unit", now);
    }).id;
  }

  template <class T, class F>
  T write(F&& fn) {
    return test_stores::write_ok<T>(*temp->store, std::forward<F>(fn));
  }

  transfers::Batch send(int count, std::int64_t amount, const std::string& description = "") {
    transfers::NewBatch input;
    input.tenant_account_id = source;
    input.max_amount_minor = 1'000'000;
    if (!description.empty()) input.description = description;
    for (int i = 0; i < count; ++i) {
      transfers::BatchItem item;
      item.external_id = "u-" + std::to_string(sent++);
      item.amount_minor = amount;
      item.currency = "COP";
      item.query = transfers::Query{"plain_key", "300123" + std::to_string(1000 + i % 50) + "5"};
      input.items.emplace_back(static_cast<std::size_t>(i), std::move(item));
    }
    return write<transfers::Batch>(
        [&](store::Tx& tx) { return transfers::create_batch(tx, k_tenant, input, now); });
  }

  transfers::NewBatch input_of(const std::string& prefix, const std::vector<std::int64_t>& amounts) {
    std::vector<std::pair<std::string, std::int64_t>> items;
    for (std::size_t i = 0; i < amounts.size(); ++i) {
      items.emplace_back(prefix + "-" + std::to_string(i), amounts[i]);
    }
    return input_with(items);
  }

  // A batch from the source of these (external id, amount) items, each to a key of its own.
  transfers::NewBatch input_with(const std::vector<std::pair<std::string, std::int64_t>>& items) {
    transfers::NewBatch input;
    input.tenant_account_id = source;
    input.max_amount_minor = 1'000'000;
    for (std::size_t i = 0; i < items.size(); ++i) {
      transfers::BatchItem item;
      item.external_id = items[i].first;
      item.amount_minor = items[i].second;
      item.currency = "COP";
      item.query = transfers::Query{"plain_key", "300123" + std::to_string(1000 + i) + "5"};
      input.items.emplace_back(i, std::move(item));
    }
    return input;
  }

  // PostgreSQL: accepts `input`, prepared and begun while another node's unit has accepted a
  // batch of one transfer of `taken` and holds the source's lock without committing: the unit
  // reads the balance as it was, writes its rows, and waits for the lock; the other unit
  // commits once it waits. What the unit decided, then.
  transfers::AcceptedBatch accept_while_another_batch_commits(const transfers::NewBatch& input,
                                                              std::int64_t taken,
                                                              transfers::PreparedBatch& prepared) {
    auto other = temp->open_again();
    std::promise<void> other_locked;
    std::promise<void> other_may_commit;
    auto may_commit = other_may_commit.get_future().share();
    auto first = std::async(std::launch::async, [&] {
      return other->write<int>([&](store::Tx& tx) -> Result<int> {
        auto batch = transfers::create_batch(tx, k_tenant, input_of("other", {taken}), now);
        if (!batch) return std::move(batch).error();
        if (batch->accepted.size() != 1) return errors::internal();
        other_locked.set_value();
        may_commit.wait_for(std::chrono::seconds(10));  // 10 s: the test fails below
        return 0;
      });
    });
    other_locked.get_future().wait();
    prepared = temp->store
                   ->read<transfers::PreparedBatch>([&](store::Tx& tx) {
                     return transfers::prepare_batch(tx, k_tenant, input, now);
                   })
                   .value();
    auto second = std::async(std::launch::async, [&] {
      return temp->store->write<transfers::AcceptedBatch>([&](store::Tx& tx) {
        return transfers::accept_batch(tx, k_tenant, prepared);
      });
    });
    // Until the second unit waits for a lock (at most 10 s).
    bool waiting = false;
    for (int i = 0; i < 2000 && !waiting; ++i) {
      waiting = integer("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND datname = current_database()") > 0;
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    other_may_commit.set_value();
    EXPECT_TRUE(waiting) << "the second unit never waited for the source's lock";
    EXPECT_TRUE(first.get().ok());
    auto done = second.get();
    EXPECT_TRUE(done.ok()) << (done.ok() ? "" : done.error().first_code());
    return done.ok() ? std::move(done).value() : transfers::AcceptedBatch{};
  }

  std::int64_t process(store::Store& store, time::Micros real_now) {
    return store
        .write<std::int64_t>([&](store::Tx& tx) -> Result<std::int64_t> {
          return transfers::process_due(tx, real_now, 1000);
        })
        .value();
  }

  // Every event written so far (emitted_events.hpp).
  std::int64_t count_events(const std::string& condition, const store::Params& params = {}) {
    const std::string events = emitted_events::table(GetParam() == store::Engine::postgres);
    return integer("SELECT COUNT(*) FROM " + events + " WHERE " + condition, params);
  }
  std::int64_t integer(const std::string& sql, const store::Params& params = {}) {
    return test_stores::read_integer(*temp->store, sql, params);
  }

  std::vector<std::string> violations() {
    return temp->store
        ->read<std::vector<std::string>>([](store::Tx& tx) -> Result<std::vector<std::string>> {
          return transfers::verify(tx);
        })
        .value();
  }

  void tamper(const std::string& sql, const store::Params& params = {}) {
    write<int>([&](store::Tx& tx) -> Result<int> {
      tx.exec(sql, params);
      return 0;
    });
  }

  time::Micros now = 0;
  std::string source;
  int sent = 0;
};

}  // namespace

TEST_P(OutgoingTransfersTest, ABatchHoldsTheSumOfItsTransfersOnce) {
  const transfers::Batch batch = send(300, 1'000);
  ASSERT_EQ(batch.accepted.size(), 300u);
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 300'000);
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {source}), 1'000'000);
  EXPECT_EQ(integer("SELECT SUM(held) FROM outgoing_transfers"), 300'000);
  EXPECT_EQ(count_events("type = 'outgoing_transfer.created'"), 300);
  EXPECT_TRUE(violations().empty());
}

// The API answers a batch from the texts the preparation wrote, picked by the indexes the unit
// accepted: each must be the text of the transfer as stored, and only the accepted ones.
TEST_P(OutgoingTransfersTest, TheAnswerFromPreparedTextsShowsTheTransfersAsStored) {
  const transfers::NewBatch input =
      input_with({{"p-1", 300'000}, {"p-2", 2'000'000}, {"p-3", 300'000},
                  {"p-1", 300'000}, {"p-4", 300'000},   {"p-5", 200'000}});
  auto prepared = temp->store->read<transfers::PreparedBatch>(
      [&](store::Tx& tx) { return transfers::prepare_batch(tx, k_tenant, input, now); });
  ASSERT_TRUE(prepared.ok());
  // A unit that runs and rolls back (as before a PostgreSQL retry) leaves the preparation as
  // it was: the next run decides the same.
  auto rolled_back = temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
    auto first = transfers::accept_batch(tx, k_tenant, prepared.value());
    if (!first || first->accepted.size() != 3) return errors::internal();
    return errors::of(ErrorCode::validation_error, std::nullopt, "rolled back on purpose");
  });
  ASSERT_FALSE(rolled_back.ok());
  EXPECT_EQ(rolled_back.error().first_code(), "validation_error");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 0);
  const auto done = write<transfers::AcceptedBatch>(
      [&](store::Tx& tx) { return transfers::accept_batch(tx, k_tenant, prepared.value()); });
  // p-2 is over the maximum, the second p-1 a duplicate, p-5 finds 100,000 left of 1,000,000.
  EXPECT_EQ(done.accepted, (std::vector<std::size_t>{0, 2, 4}));
  const auto answer = boost::json::parse(transfers::batch_text(prepared.value(), done));
  const auto& accepted = answer.at("accepted_transfers").as_array();
  ASSERT_EQ(accepted.size(), 3u);
  for (const auto& shown : accepted) {
    const std::string id(shown.at("id").as_string());
    auto stored = temp->store->read<transfers::Transfer>(
        [&](store::Tx& tx) { return transfers::get_transfer(tx, k_tenant, id); });
    ASSERT_TRUE(stored.ok()) << id;
    EXPECT_EQ(boost::json::serialize(shown), transfers::transfer_text(stored.value()));
  }
  ASSERT_EQ(answer.at("duplicated_transfers").as_array().size(), 1u);
  EXPECT_EQ(answer.at("duplicated_transfers").at(0).at("id"), accepted.at(0).at("id"));
  const auto& rejected = answer.at("rejected_transfers").as_array();
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected.at(0).at("error_code"), "amount_exceeds_max_limit");
  EXPECT_EQ(rejected.at(1).at("error_code"), "insufficient_funds");
  EXPECT_EQ(rejected.at(1).at("index"), 5);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 3);
  EXPECT_EQ(integer("SELECT accepted_count FROM outgoing_transfer_batches"), 3);
  // Each accepted transfer's created event is the one its preparation made (id and data), and
  // the only one: the rolled-back run left none. On SQLite the transfer's row keeps it
  // (migration 23), its id evt_ and the transfer id's characters; elsewhere it is a row of its
  // own, made by the preparation.
  const bool row_keeps_event = GetParam() == store::Engine::sqlite;
  EXPECT_EQ(count_events("type = 'outgoing_transfer.created'"), 3);
  for (std::size_t item : done.accepted) {
    const transfers::PreparedItem& made = prepared.value().items[item];
    std::string event_id = made.created_event_id;
    if (row_keeps_event) {
      EXPECT_EQ(event_id, "");
      event_id = "evt_" + std::string(prepared.value().transfer_id(made).substr(5));
    }
    EXPECT_TRUE(ids::has_prefix(event_id, "evt")) << event_id;
    EXPECT_EQ(count_events("id = ? AND type = 'outgoing_transfer.created' AND data = ? "
                           "AND tenant_id = ?",
                           {event_id,
                            "@outgoing_transfer:" + std::string(prepared.value().transfer_id(made)),
                            k_tenant}),
              1);
  }
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 900'000);
  EXPECT_TRUE(violations().empty());
}

// An external id repeated within a batch: an item is a duplicate of the one before it with that
// id which was accepted; one before it that was rejected (over the maximum, or for the funds)
// takes nothing, and the next item with the id is accepted in its place.
TEST_P(OutgoingTransfersTest, ARepeatedExternalIdIsADuplicateOnlyOfTheItemAccepted) {
  const transfers::NewBatch input = input_with({
      {"e-1", 2'000'000}, {"e-1", 1'000},     {"e-1", 1'000},  // over the max, accepted, duplicate
      {"e-2", 1'000},     {"e-3", 5'000'000}, {"e-2", 3'000},  // accepted, over the max, duplicate
      {"e-4", 999'000},   {"e-4", 997'000},   {"e-4", 5}});    // no funds, accepted, duplicate
  const transfers::Batch batch = write<transfers::Batch>(
      [&](store::Tx& tx) { return transfers::create_batch(tx, k_tenant, input, now); });
  // Of 1,000,000: e-1 and e-2 take 2,000, so e-4's 999,000 is refused and 997,000 accepted.
  std::vector<std::pair<std::string, std::int64_t>> accepted;
  for (const transfers::Transfer& t : batch.accepted) {
    accepted.emplace_back(*t.external_id, t.amount_minor);
  }
  EXPECT_EQ(accepted, (std::vector<std::pair<std::string, std::int64_t>>{
                          {"e-1", 1'000}, {"e-2", 1'000}, {"e-4", 997'000}}));
  std::vector<std::string> duplicated_of;  // the id each duplicate shows
  for (const transfers::Transfer& t : batch.duplicated) duplicated_of.push_back(t.id);
  ASSERT_EQ(batch.accepted.size(), 3u);
  EXPECT_EQ(duplicated_of, (std::vector<std::string>{batch.accepted[0].id, batch.accepted[1].id,
                                                     batch.accepted[2].id}));
  std::vector<std::pair<std::size_t, std::string>> rejected;
  for (const transfers::RejectedItem& item : batch.rejected) {
    rejected.emplace_back(item.index, item.error.first_code());
  }
  EXPECT_EQ(rejected, (std::vector<std::pair<std::size_t, std::string>>{
                          {0, "amount_exceeds_max_limit"},
                          {4, "amount_exceeds_max_limit"},
                          {6, "insufficient_funds"}}));
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 999'000);
  EXPECT_TRUE(violations().empty());
}

// A batch makes the stored Target of a key once for all its transfers to that key: each transfer
// shows its own key's Target, as that key resolved alone shows it, with ids of its own.
TEST_P(OutgoingTransfersTest, EachTransferShowsTheTargetOfItsOwnKey) {
  const std::vector<std::string> keys = {"3001231005", "3001231015", "3001231005", "3001231025"};
  transfers::NewBatch input;
  input.tenant_account_id = source;
  input.max_amount_minor = 1'000'000;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    transfers::BatchItem item;
    item.external_id = "own-key-" + std::to_string(i);
    item.amount_minor = 1'000;
    item.currency = "COP";
    item.query = transfers::Query{"plain_key", keys[i]};
    input.items.emplace_back(i, std::move(item));
  }
  const transfers::Batch batch = write<transfers::Batch>(
      [&](store::Tx& tx) { return transfers::create_batch(tx, k_tenant, input, now); });
  ASSERT_EQ(batch.accepted.size(), keys.size());
  // A Target without the ids each resolution or transfer has of its own.
  auto shared_part = [](boost::json::object target) {
    for (const char* own : {"id", "resolution_request_id", "payment_id"}) target.erase(own);
    return target;
  };
  std::vector<boost::json::object> shown;
  std::set<std::string> target_ids;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const transfers::Transfer& t = batch.accepted[i];
    ASSERT_EQ(t.external_id, "own-key-" + std::to_string(i));
    const boost::json::object target =
        boost::json::parse(transfers::transfer_text(t)).at("target").as_object();
    target_ids.insert(std::string(target.at("id").as_string()));
    const network::Target alone = write<network::Target>([&](store::Tx& tx) {
      return network::resolve_target(tx, k_tenant, {"plain_key", keys[i], std::nullopt, ""}, now);
    });
    EXPECT_EQ(shared_part(target),
              shared_part(boost::json::parse(alone.json).as_object()))
        << keys[i];
    shown.push_back(shared_part(target));
  }
  EXPECT_EQ(target_ids.size(), keys.size());  // two transfers to one key, two Targets
  EXPECT_EQ(shown[0], shown[2]);
  EXPECT_NE(shown[0].at("creditor"), shown[1].at("creditor"));  // the keys' creditors differ
  EXPECT_NE(shown[1].at("creditor"), shown[3].at("creditor"));
}

// A row keeps its Target without the fields it has in columns (network::stored_target), and a
// row written before that form, with the whole Target, reads the same.
TEST_P(OutgoingTransfersTest, ARowKeepsItsTargetWithoutItsOwnFieldsAndOlderRowsReadTheSame) {
  transfers::NewBatch input;
  input.tenant_account_id = source;
  input.max_amount_minor = 1'000'000;
  transfers::BatchItem item;
  item.external_id = "stored-target";
  item.amount_minor = 1'000;
  item.currency = "COP";
  item.query = transfers::Query{"plain_key", "3001230005"};
  input.items.emplace_back(0, std::move(item));
  auto prepared = temp->store->read<transfers::PreparedBatch>(
      [&](store::Tx& tx) { return transfers::prepare_batch(tx, k_tenant, input, now); });
  ASSERT_TRUE(prepared.ok());
  const auto done = write<transfers::AcceptedBatch>(
      [&](store::Tx& tx) { return transfers::accept_batch(tx, k_tenant, prepared.value()); });
  ASSERT_EQ(done.accepted.size(), 1u);
  const auto answer = boost::json::parse(transfers::batch_text(prepared.value(), done));
  const auto& shown = answer.at("accepted_transfers").at(0);
  const std::string id(shown.at("id").as_string());
  const std::string whole = boost::json::serialize(shown.at("target"));
  EXPECT_TRUE(ids::has_prefix(std::string(shown.at("target").at("id").as_string()), "bbtgt"));
  EXPECT_EQ(shown.at("target").at("resolution_request_id"), shown.at("resolution_request_id"));
  EXPECT_EQ(shown.at("target").at("payment_id"), shown.at("payment_id"));
  EXPECT_EQ(shown.at("target").at("key_value").as_string(), "3001230005");
  auto read_text = [&] {
    auto stored = temp->store->read<transfers::Transfer>(
        [&](store::Tx& tx) { return transfers::get_transfer(tx, k_tenant, id); });
    EXPECT_TRUE(stored.ok()) << id;
    return stored.ok() ? transfers::transfer_text(stored.value()) : std::string();
  };
  const std::string text = read_text();
  EXPECT_EQ(text, boost::json::serialize(shown));
  // The row has no copy of its ids or key in the target column: a third of the Target's size.
  const std::string column = [&] {
    auto row = temp->store->read<std::string>([&](store::Tx& tx) -> Result<std::string> {
      return tx.query_one("SELECT target FROM outgoing_transfers WHERE id = ?", {id})->text(0);
    });
    return row.value();
  }();
  EXPECT_EQ(column.front(), '[');
  EXPECT_EQ(column.find(id), std::string::npos);
  EXPECT_EQ(column.find("3001230005"), std::string::npos);
  EXPECT_LT(column.size() * 2, whole.size()) << column;
  // A row of the whole Target (as written before the stored form) shows the same transfer.
  tamper("UPDATE outgoing_transfers SET target = ? WHERE id = ?", {whole, id});
  EXPECT_EQ(read_text(), text);
}

// An external id another unit committed between the preparation's snapshot and the unit is
// found by the insert: that item is listed as duplicated (the other unit's transfer), the rest
// of the batch is accepted, and only what was accepted is held.
TEST_P(OutgoingTransfersTest, AnExternalIdTakenAfterThePreparationIsADuplicate) {
  transfers::NewBatch input;
  input.tenant_account_id = source;
  input.max_amount_minor = 1'000'000;
  for (const std::string external_id : {"late-1", "late-2", "late-3"}) {
    transfers::BatchItem item;
    item.external_id = external_id;
    item.amount_minor = 10'000;
    item.currency = "COP";
    item.query = transfers::Query{"plain_key", "3001231234" + std::to_string(input.items.size())};
    input.items.emplace_back(input.items.size(), std::move(item));
  }
  auto prepared = temp->store->read<transfers::PreparedBatch>(
      [&](store::Tx& tx) { return transfers::prepare_batch(tx, k_tenant, input, now); });
  ASSERT_TRUE(prepared.ok());
  // Another batch takes late-2 first.
  transfers::NewBatch other = input;
  other.items.erase(other.items.begin());
  other.items.resize(1);
  const auto winner = write<transfers::Batch>(
      [&](store::Tx& tx) { return transfers::create_batch(tx, k_tenant, other, now); });
  ASSERT_EQ(winner.accepted.size(), 1u);
  const auto done = write<transfers::AcceptedBatch>(
      [&](store::Tx& tx) { return transfers::accept_batch(tx, k_tenant, prepared.value()); });
  EXPECT_EQ(done.accepted, (std::vector<std::size_t>{0, 2}));
  ASSERT_EQ(done.batch.duplicated.size(), 1u);
  EXPECT_EQ(done.batch.duplicated.front().id, winner.accepted.front().id);
  const auto answer = boost::json::parse(transfers::batch_text(prepared.value(), done));
  EXPECT_EQ(answer.at("accepted_transfers").as_array().size(), 2u);
  EXPECT_EQ(answer.at("duplicated_transfers").at(0).at("external_id"), "late-2");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 3);
  EXPECT_EQ(count_events("type = 'outgoing_transfer.created'"), 3);
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 30'000);
  EXPECT_TRUE(violations().empty());
}

TEST_P(OutgoingTransfersTest, ALatePassWalksEveryDueStepWithTheScheduledTimemarks) {
  const transfers::Batch batch = send(3, 10'000);
  // Nothing is due before its first step.
  EXPECT_EQ(process(*temp->store, now), 0);
  // Ten seconds late: every step in one pass, each at its time of the schedule.
  EXPECT_EQ(process(*temp->store, now + 10'000'000), 3);
  const std::string id = batch.accepted.front().id;
  auto moved = temp->store->read<transfers::Transfer>([&](store::Tx& tx) {
    return transfers::get_transfer(tx, k_tenant, id);
  });
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->state, "successful");
  EXPECT_EQ(moved->held_minor, 0);
  EXPECT_FALSE(moved->next_step_at_micros.has_value());
  ASSERT_TRUE(moved->entry_id.has_value());
  const std::string t110 = time::iso_local(now);
  EXPECT_EQ(moved->timemarks_json,
            R"({"T110":")" + t110 + R"(","T120":")" + time::iso_local(now + 4'000'000) +
                R"(","T130":")" + time::iso_local(now + 5'000'000) + R"("})");
  EXPECT_EQ(moved->updated_at, time::iso(now + 5'000'000));
  EXPECT_EQ(count_events("data LIKE ?", {"%" + id + "%"}), 6);
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 0);
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {source}), 970'000);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM journal_entries WHERE kind = 'outgoing_transfer'"), 3);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfer_batches WHERE state = 'completed'"),
            1);
  EXPECT_TRUE(violations().empty());
  // A pass with nothing due changes nothing.
  EXPECT_EQ(process(*temp->store, now + 20'000'000), 0);
}

TEST_P(OutgoingTransfersTest, StepsComeOneSecondApartOnTheTenantClock) {
  const transfers::Batch batch = send(1, 10'000, "fails with tx_breb_timeout");
  const std::string id = batch.accepted.front().id;
  const std::vector<std::string> expected = {"processing", "target_resolved", "held",
                                             "sent_to_breb_provider", "failed"};
  for (std::size_t step = 0; step < expected.size(); ++step) {
    EXPECT_EQ(process(*temp->store, now + static_cast<time::Micros>(step + 1) * 1'000'000), 1);
    auto t = temp->store->read<transfers::Transfer>(
        [&](store::Tx& tx) { return transfers::get_transfer(tx, k_tenant, id); });
    EXPECT_EQ(t->state, expected[step]);
    EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}),
              expected[step] == "failed" ? 0 : 10'000);
  }
  auto failed = temp->store->read<transfers::Transfer>(
      [&](store::Tx& tx) { return transfers::get_transfer(tx, k_tenant, id); });
  EXPECT_EQ(failed->state_reason, "breb_timeout");
  EXPECT_FALSE(failed->entry_id.has_value());
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {source}), 1'000'000);
  EXPECT_TRUE(violations().empty());
}

TEST_P(OutgoingTransfersTest, TwoNodesPassesSettleEachTransferOnce) {
  send(400, 1'000);
  auto other = temp->open_again();
  const time::Micros late = now + 30'000'000;
  std::thread second([&] {
    while (process(*other, late) > 0) {
    }
  });
  while (process(*temp->store, late) > 0) {
  }
  second.join();
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers WHERE state = 'successful'"), 400);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM journal_entries WHERE kind = 'outgoing_transfer'"), 400);
  EXPECT_EQ(count_events("type = 'outgoing_transfer.successful'"), 400);
  EXPECT_EQ(integer("SELECT balance FROM ledger_accounts WHERE id = ?", {source}), 600'000);
  EXPECT_TRUE(violations().empty());
}

TEST_P(OutgoingTransfersTest, VerifyFindsTamperedHoldsEntriesAndBatches) {
  const transfers::Batch batch = send(2, 5'000);
  process(*temp->store, now + 10'000'000);
  EXPECT_TRUE(violations().empty());
  const std::string first = batch.accepted[0].id;
  const std::string second = batch.accepted[1].id;
  tamper("UPDATE ledger_accounts SET held = 7 WHERE id = ?", {source});
  tamper("UPDATE outgoing_transfers SET entry_id = NULL WHERE id = ?", {first});
  tamper("UPDATE outgoing_transfers SET state = 'held', next_step_at_micros = 1 WHERE id = ?",
         {second});
  const std::vector<std::string> found = violations();
  auto mentions = [&](const std::string& what) {
    return std::count_if(found.begin(), found.end(), [&](const std::string& v) {
      return v.find(what) != std::string::npos;
    });
  };
  EXPECT_GE(mentions("account " + source), 1) << ::testing::PrintToString(found);
  EXPECT_GE(mentions(first), 1) << ::testing::PrintToString(found);
  EXPECT_GE(mentions(second), 1) << ::testing::PrintToString(found);
  EXPECT_GE(mentions(batch.id), 1) << ::testing::PrintToString(found);
  EXPECT_GE(mentions("outgoing_transfer journal entries"), 1) << ::testing::PrintToString(found);
}

// A batch's transfers get ids that ascend in the batch's order (made together and sorted), so
// that its rows enter the indexes keyed by id at their ends, one after the other.
TEST_P(OutgoingTransfersTest, ABatchsTransferIdsAscendInItsOrder) {
  const transfers::Batch batch = send(60, 1'000);
  ASSERT_EQ(batch.accepted.size(), 60u);
  for (std::size_t i = 1; i < batch.accepted.size(); ++i) {
    EXPECT_LT(batch.accepted[i - 1].id, batch.accepted[i].id) << i;
    EXPECT_EQ(batch.accepted[i].external_id, "u-" + std::to_string(i));
  }
  std::set<std::string> distinct;
  for (const transfers::Transfer& t : batch.accepted) {
    EXPECT_TRUE(ids::has_prefix(t.id, "bbot")) << t.id;
    distinct.insert(t.id);
  }
  EXPECT_EQ(distinct.size(), 60u);
}

// On SQLite a batch's transfers keep their created events (migration 23): at consecutive
// positions in the batch's order, after every event before them and before every event after,
// none of them an event row's; verify reports a row whose position an event row has too.
TEST_P(OutgoingTransfersTest, OnSqliteABatchsRowsKeepTheirCreatedEventsAtPositionsOfTheirOwn) {
  if (GetParam() != store::Engine::sqlite) GTEST_SKIP() << "PostgreSQL writes event rows";
  auto emit_one = [&] {
    static_cast<void>(temp->store->write<int>([&](store::Tx& tx) -> Result<int> {
      events::emit(tx, k_tenant, "test.between", "{}", now);
      return 0;
    }));
    return integer("SELECT MAX(position) FROM events");
  };
  auto created_position = [&](const std::string& id) {
    return integer("SELECT created_position FROM outgoing_transfers WHERE id = ?", {id});
  };
  const std::int64_t before = emit_one();
  const transfers::Batch first = send(3, 1'000);
  const std::int64_t between = emit_one();
  const transfers::Batch second = send(2, 1'000);
  ASSERT_EQ(first.accepted.size(), 3u);
  ASSERT_EQ(second.accepted.size(), 2u);
  const std::int64_t start = created_position(first.accepted[0].id);
  EXPECT_GT(start, before);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(created_position(first.accepted[i].id), start + static_cast<std::int64_t>(i));
  }
  EXPECT_GT(between, start + 2);
  EXPECT_GT(created_position(second.accepted[0].id), between);
  EXPECT_EQ(created_position(second.accepted[1].id), created_position(second.accepted[0].id) + 1);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM all_events WHERE tenant_id = ?", {k_tenant}),
            integer("SELECT COUNT(DISTINCT position) FROM all_events WHERE tenant_id = ?",
                    {k_tenant}));
  EXPECT_EQ(integer("SELECT COUNT(*) FROM events WHERE type = 'outgoing_transfer.created'"), 0);
  EXPECT_TRUE(violations().empty());
  tamper("UPDATE outgoing_transfers SET created_position = ? WHERE id = ?",
         {between, first.accepted[1].id});
  const std::vector<std::string> found = violations();
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find(first.accepted[1].id), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("keeps its created event at position"), std::string::npos) << found[0];
}

// On SQLite created_position is the rowid (migration 24): rows that keep no created event (a
// payout's leg) take negative ones of their own, each below every one taken, which no reader of
// events sees; the next batch's events still come after the last position.
TEST_P(OutgoingTransfersTest, OnSqliteRowsWithoutACreatedEventTakeNegativePositionsOfTheirOwn) {
  if (GetParam() != store::Engine::sqlite) GTEST_SKIP() << "PostgreSQL keeps the column NULL";
  const transfers::Batch first = send(2, 1'000);
  ASSERT_EQ(first.accepted.size(), 2u);
  auto count_events = [&] {
    return integer("SELECT COUNT(*) FROM all_events WHERE tenant_id = ?", {k_tenant});
  };
  auto last_position = [&] {
    return temp->store->read<std::int64_t>([](store::Tx& tx) -> Result<std::int64_t> {
      return events::last_position(tx);
    }).value();
  };
  const std::int64_t events_before = count_events();
  const std::int64_t last_before = last_position();
  auto leg = [&] {
    transfers::Transfer t = first.accepted[0];
    t.id = ids::generate("bbot");
    t.batch_id.reset();
    t.external_id.reset();
    t.payout_id = ids::generate("pay");
    return t;
  };
  const transfers::Transfer a = leg(), b = leg(), c = leg();
  for (const std::vector<const transfers::Transfer*>& rows :
       {std::vector<const transfers::Transfer*>{&a, &b}, {&c}}) {
    const std::vector<bool> inserted =
        temp->store->write<std::vector<bool>>([&](store::Tx& tx) -> Result<std::vector<bool>> {
          return transfers::rows::insert(tx, k_tenant, rows);
        }).value();
    EXPECT_EQ(inserted, std::vector<bool>(rows.size(), true));
  }
  auto created_position = [&](const std::string& id) {
    return integer("SELECT created_position FROM outgoing_transfers WHERE id = ?", {id});
  };
  EXPECT_EQ(created_position(a.id), -1);
  EXPECT_EQ(created_position(b.id), -2);
  EXPECT_EQ(created_position(c.id), -3);
  EXPECT_EQ(count_events(), events_before);
  EXPECT_EQ(last_position(), last_before);
  // (The legs hold nothing and carry no payout, which verify reports; no position is reported.)
  for (const std::string& found : violations()) {
    EXPECT_EQ(found.find("created event"), std::string::npos) << found;
  }
  const transfers::Batch second = send(1, 1'000);
  ASSERT_EQ(second.accepted.size(), 1u);
  EXPECT_EQ(created_position(second.accepted[0].id), last_before + 1);
  EXPECT_EQ(count_events(), events_before + 1);
}

// A batch's transfers have its inserted_at, through which the time index finds them (there is
// no index by batch): two batches made at the same moment still list apart, each is completed
// only once its own transfers ended, and verify reports a transfer whose time left its batch's.
TEST_P(OutgoingTransfersTest, ABatchsTransfersAreFoundByItsTimeEvenBesideABatchOfTheSameTime) {
  const transfers::Batch first = send(3, 1'000);
  const transfers::Batch second = send(2, 1'000, "tx_risk_control");  // the same `now`
  EXPECT_EQ(first.inserted_at, second.inserted_at);
  auto listed = [&](const std::string& batch_id) {
    transfers::TransferFilter filter;
    filter.batch_id = batch_id;
    auto page = temp->store->read<PageOf<transfers::Transfer>>([&](store::Tx& tx) {
      return transfers::list_transfers(tx, k_tenant, filter, 0, 10);
    });
    EXPECT_TRUE(page.ok());
    std::set<std::string> ids;
    for (const transfers::Transfer& t : page->items) ids.insert(t.id);
    EXPECT_EQ(page->total_items, static_cast<std::int64_t>(ids.size()));
    return ids;
  };
  auto ids_of = [](const transfers::Batch& batch) {
    std::set<std::string> ids;
    for (const transfers::Transfer& t : batch.accepted) ids.insert(t.id);
    return ids;
  };
  EXPECT_EQ(listed(first.id), ids_of(first));
  EXPECT_EQ(listed(second.id), ids_of(second));
  EXPECT_TRUE(listed(ids::generate("bbotb")).empty());
  // One step: nothing ended, neither batch is completed.
  process(*temp->store, now + 1'000'000);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfer_batches WHERE state = 'completed'"), 0);
  // Every step: both ended and completed.
  process(*temp->store, now + 10'000'000);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfer_batches WHERE state = 'completed'"), 2);
  EXPECT_EQ(integer("SELECT SUM(moving_count) FROM outgoing_transfer_batches"), 0);
  EXPECT_TRUE(violations().empty()) << ::testing::PrintToString(violations());
  const std::string moved = first.accepted[0].id;
  tamper("UPDATE outgoing_transfers SET inserted_at = ? WHERE id = ?",
         {time::iso(now + 1), moved});
  const std::vector<std::string> found = violations();
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find(moved), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("but its batch " + first.id), std::string::npos) << found[0];
}

// A batch counts its moving transfers down as they end, over as many passes as they take, and
// is completed when none moves; verify reports a count that does not match the transfers.
TEST_P(OutgoingTransfersTest, ABatchCountsItsMovingTransfersDownToItsCompletion) {
  const transfers::Batch batch = send(3, 1'000);
  auto moving_count = [&] {
    return integer("SELECT moving_count FROM outgoing_transfer_batches WHERE id = ?", {batch.id});
  };
  auto completed = [&] {
    return integer("SELECT COUNT(*) FROM outgoing_transfer_batches WHERE id = ? "
                   "AND state = 'completed'", {batch.id}) == 1;
  };
  EXPECT_EQ(moving_count(), 3) << "every accepted transfer moves";
  // One transfer is a step ahead of the others (as if accepted a second earlier): it ends in a
  // pass of its own.
  const std::string ahead = batch.accepted[0].id;
  tamper("UPDATE outgoing_transfers SET next_step_at_micros = next_step_at_micros - 1000000 "
         "WHERE id = ?", {ahead});
  process(*temp->store, now + 4'500'000);  // the one ahead took its last step, the others not
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers WHERE next_step_at_micros IS NULL "
                    "AND id = ?", {ahead}), 1);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers WHERE next_step_at_micros IS NULL"),
            1);
  EXPECT_EQ(moving_count(), 2);
  EXPECT_FALSE(completed());
  EXPECT_TRUE(violations().empty()) << ::testing::PrintToString(violations());
  process(*temp->store, now + 10'000'000);
  EXPECT_EQ(moving_count(), 0);
  EXPECT_TRUE(completed());
  EXPECT_TRUE(violations().empty()) << ::testing::PrintToString(violations());
  tamper("UPDATE outgoing_transfer_batches SET moving_count = 1 WHERE id = ?", {batch.id});
  const std::vector<std::string> found = violations();
  ASSERT_EQ(found.size(), 1u) << ::testing::PrintToString(found);
  EXPECT_NE(found[0].find(batch.id), std::string::npos) << found[0];
  EXPECT_NE(found[0].find("moving_count 1 but 0 of its transfers moving"), std::string::npos)
      << found[0];
}

TEST_P(OutgoingTransfersTest, AnInactiveSourceIsNotFoundAndHoldsNothing) {
  tamper("UPDATE ledger_accounts SET state = 'inactive' WHERE id = ?", {source});
  transfers::NewBatch input;
  input.tenant_account_id = source;
  input.max_amount_minor = 1'000'000;
  transfers::BatchItem item;
  item.external_id = "inactive";
  item.amount_minor = 10;
  item.currency = "COP";
  item.query = transfers::Query{"plain_key", "3001234565"};
  input.items.emplace_back(0, item);
  auto refused = temp->store->write<transfers::Batch>(
      [&](store::Tx& tx) { return transfers::create_batch(tx, k_tenant, input, now); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().first_code(), "tenant_account_not_found");
  EXPECT_EQ(refused.error().errors.front().path, "tenant_account_id");
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 0);
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 0);
}

// A batch writes its rows against the balance read without the lock and locks its source last:
// when another batch's hold committed in between and the balance still covers every item, its
// decisions stand (both holds are kept).
TEST_P(OutgoingTransfersTest, ABatchsDecisionsStandWhenTheBalanceUnderTheLockStillCoversThem) {
  if (GetParam() == store::Engine::sqlite) GTEST_SKIP() << "one SQLite writer serialises every unit";
  transfers::PreparedBatch prepared;
  const auto done = accept_while_another_batch_commits(
      input_of("mine", {300'000, 300'000, 300'000}), 50'000, prepared);
  EXPECT_EQ(done.accepted, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_TRUE(done.batch.rejected.empty());
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 950'000);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 4);
  EXPECT_EQ(count_events("type = 'outgoing_transfer.created'"), 4);
  EXPECT_TRUE(violations().empty());
}

// ... and when the other batch took funds the items needed, the unit decides again under the
// lock: what it wrote on the old balance is gone, nothing is overdrawn.
TEST_P(OutgoingTransfersTest, ABatchDecidesAgainUnderTheLockWhenAnotherBatchTookItsFunds) {
  if (GetParam() == store::Engine::sqlite) GTEST_SKIP() << "one SQLite writer serialises every unit";
  transfers::PreparedBatch prepared;
  const auto done = accept_while_another_batch_commits(
      input_of("mine", {300'000, 300'000, 300'000}), 950'000, prepared);
  EXPECT_TRUE(done.accepted.empty());
  ASSERT_EQ(done.batch.rejected.size(), 3u);
  for (const transfers::RejectedItem& rejected : done.batch.rejected) {
    EXPECT_EQ(rejected.error.first_code(), "insufficient_funds");
  }
  EXPECT_EQ(done.batch.state, "completed");
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 950'000);
  EXPECT_EQ(integer("SELECT COUNT(*) FROM outgoing_transfers"), 1);
  EXPECT_EQ(count_events("type = 'outgoing_transfer.created'"), 1);
  EXPECT_EQ(integer("SELECT accepted_count FROM outgoing_transfer_batches WHERE id = ?",
                    {prepared.id}),
            0);
  EXPECT_TRUE(violations().empty());
}

// A refusal names the funds left, so a batch that refused an item stands only on the same
// balance: here the other batch's hold leaves enough for the first item, and the refusal of the
// second names what is left under the lock (350,000), not what the unlocked read left (400,000).
TEST_P(OutgoingTransfersTest, ARefusalForFundsNamesTheBalanceUnderTheLock) {
  if (GetParam() == store::Engine::sqlite) GTEST_SKIP() << "one SQLite writer serialises every unit";
  transfers::PreparedBatch prepared;
  const auto done =
      accept_while_another_batch_commits(input_of("mine", {600'000, 600'000}), 50'000, prepared);
  EXPECT_EQ(done.accepted, (std::vector<std::size_t>{0}));
  ASSERT_EQ(done.batch.rejected.size(), 1u);
  const Error& refused = done.batch.rejected.front().error;
  EXPECT_EQ(refused.first_code(), "insufficient_funds");
  EXPECT_NE(refused.errors.front().message.find("(COP 3,500.00)"), std::string::npos)
      << refused.errors.front().message;
  EXPECT_EQ(integer("SELECT held FROM ledger_accounts WHERE id = ?", {source}), 650'000);
  EXPECT_TRUE(violations().empty());
}

TESORO_ON_BOTH_ENGINES(OutgoingTransfersTest);
