#pragma once
// The request bodies of the two batch endpoints, read: POST /api/v1/outgoing_transfers and
// POST /api/v1/collections. Out of their handlers so that the fuzz targets (tests/fuzz) call
// exactly what the handlers call.
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "api/context.hpp"
#include "core/result.hpp"
#include "domain/collections/collections.hpp"
#include "domain/transfers/outgoing_transfers.hpp"

namespace tesoro::api {

// The batch of transfers: its items decoded, an item with problems among `rejected` (paths
// under `transfers.<index>`); an error when the request as a whole is refused.
Result<transfers::NewBatch> decode_transfer_batch(std::string_view body, const Settings& settings);

// The batch of collections: the document (whose `collections` array the rejected items quote)
// and each item decoded or refused (paths under `collections.<index>`).
struct CollectionBatch {
  boost::json::object document;
  std::vector<Result<collections::NewCollection>> items;
  const boost::json::array& written() const { return document.at("collections").get_array(); }
};
Result<CollectionBatch> decode_collection_batch(std::string_view body, const Settings& settings);

}  // namespace tesoro::api
