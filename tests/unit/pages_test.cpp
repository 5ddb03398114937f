// store::query_page: one page and the list's size from one statement, on both engines. The
// count follows the filter (not the table), stays right on the last partial page, and is still
// given when the page is empty (an empty list, or an offset past the end).
#include <gtest/gtest.h>

#include "store/pages.hpp"
#include "test_stores.hpp"

using namespace tesoro;

namespace {

class PagesTest : public test_stores::EngineStoreTest {
 protected:
  void SetUp() override {
    EngineStoreTest::SetUp();
    if (IsSkipped()) return;
    static_cast<void>(temp->store->write<int>([](store::Tx& tx) -> Result<int> {
      tx.exec("CREATE TABLE page_rows (tenant_id TEXT NOT NULL, n BIGINT NOT NULL, "
              "PRIMARY KEY (tenant_id, n))");
      for (std::int64_t n = 1; n <= 7; ++n) {
        tx.exec("INSERT INTO page_rows (tenant_id, n) VALUES ('a', ?)", {n});
      }
      for (std::int64_t n = 1; n <= 3; ++n) {
        tx.exec("INSERT INTO page_rows (tenant_id, n) VALUES ('b', ?)", {n});
      }
      return 0;
    }));
  }

  PageOf<std::int64_t> page(const std::string& tenant, std::int64_t offset, std::int64_t limit,
                            std::int64_t above = 0) {
    return temp->store->read<PageOf<std::int64_t>>(
        [&](store::Tx& tx) -> Result<PageOf<std::int64_t>> {
          return store::query_page<std::int64_t>(
              tx, "n", " FROM page_rows WHERE tenant_id = ? AND n > ?", {tenant, above},
              "n DESC", offset, limit, [](const store::Row& row) { return row.integer(0); });
        }).value();
  }
};

}  // namespace

TEST_P(PagesTest, APageAndTheFilteredCountInOrder) {
  auto first = page("a", 0, 3);
  EXPECT_EQ(first.total_items, 7);
  EXPECT_EQ(first.items, (std::vector<std::int64_t>{7, 6, 5}));
  auto last = page("a", 6, 3);
  EXPECT_EQ(last.total_items, 7);
  EXPECT_EQ(last.items, (std::vector<std::int64_t>{1}));
  auto other = page("b", 0, 10);
  EXPECT_EQ(other.total_items, 3) << "the count follows the filter";
  EXPECT_EQ(other.items, (std::vector<std::int64_t>{3, 2, 1}));
  auto filtered = page("a", 1, 2, 4);
  EXPECT_EQ(filtered.total_items, 3) << "every condition of the filter counts";
  EXPECT_EQ(filtered.items, (std::vector<std::int64_t>{6, 5}));
}

TEST_P(PagesTest, AnEmptyPageStillCarriesTheCount) {
  auto past_end = page("a", 20, 5);
  EXPECT_TRUE(past_end.items.empty());
  EXPECT_EQ(past_end.total_items, 7);
  auto none = page("nobody", 0, 5);
  EXPECT_TRUE(none.items.empty());
  EXPECT_EQ(none.total_items, 0);
}

TESORO_ON_BOTH_ENGINES(PagesTest);
