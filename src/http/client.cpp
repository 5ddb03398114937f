#include "http/client.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <boost/algorithm/string/trim.hpp>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <mutex>
#include <stdexcept>

#include "core/limits.hpp"
#include "core/thread_priority.hpp"

namespace tesoro::http_client {

Resolved resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  Resolved resolved;
  const int code = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (code != 0) {
    resolved.error = std::string("could not resolve host: ") + ::gai_strerror(code);
    return resolved;
  }
  for (addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* address = nullptr;
    if (entry->ai_family == AF_INET) {
      address = &reinterpret_cast<sockaddr_in*>(entry->ai_addr)->sin_addr;
    } else if (entry->ai_family == AF_INET6) {
      address = &reinterpret_cast<sockaddr_in6*>(entry->ai_addr)->sin6_addr;
    }
    if (address == nullptr || ::inet_ntop(entry->ai_family, address, text, sizeof text) == nullptr) {
      continue;
    }
    if (std::find(resolved.addresses.begin(), resolved.addresses.end(), text) ==
        resolved.addresses.end()) {
      resolved.addresses.emplace_back(text);
    }
  }
  ::freeaddrinfo(found);
  if (resolved.addresses.empty()) resolved.error = "could not resolve host: no address";
  return resolved;
}

struct Multi::Slot {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  curl_slist* pins = nullptr;
  std::string request_body;
  std::size_t body_max_bytes = 0;
  std::int64_t timeout_ms = 0;
  Response response;
  char error_buffer[CURL_ERROR_SIZE] = {};
  bool busy = false;

  void free_lists() {
    curl_slist_free_all(headers);
    curl_slist_free_all(pins);
    headers = nullptr;
    pins = nullptr;
  }
};

namespace {

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* slot = static_cast<Multi::Slot*>(user);
  const std::size_t bytes = size * count;
  std::string& body = slot->response.body;
  if (body.size() < slot->body_max_bytes) {
    body.append(data, std::min(bytes, slot->body_max_bytes - body.size()));
  }
  return bytes;  // the rest is read and dropped, so the connection stays usable
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* slot = static_cast<Multi::Slot*>(user);
  const std::size_t bytes = size * count;
  std::string_view line(data, bytes);
  if (line.starts_with("HTTP/")) {
    slot->response.retry_after.reset();  // a new response (after a 100 Continue)
  } else if (boost::algorithm::istarts_with(line, "retry-after:")) {
    slot->response.retry_after = boost::algorithm::trim_copy(std::string(line.substr(12)));
  }
  return bytes;
}

}  // namespace

struct Multi::Events {
  int epoll = -1;
  int wakeup = -1;  // an eventfd in the epoll set: wakeup() makes it readable
  std::optional<std::chrono::steady_clock::time_point> deadline;  // curl's timer, when set

  Events() {
    epoll = epoll_create1(EPOLL_CLOEXEC);
    wakeup = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll < 0 || wakeup < 0) throw std::runtime_error("http_client: no epoll or eventfd");
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = wakeup;
    epoll_ctl(epoll, EPOLL_CTL_ADD, wakeup, &event);
  }
  ~Events() {
    close(wakeup);
    close(epoll);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  // CURLMOPT_SOCKETFUNCTION: watch `socket` for what curl waits on, or stop watching it.
  static int on_socket(CURL*, curl_socket_t socket, int what, void* self, void*) {
    const int epoll = static_cast<Events*>(self)->epoll;
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nullptr);  // already gone when curl closed it
      return 0;
    }
    epoll_event event{};
    event.events = ((what & CURL_POLL_IN) != 0 ? EPOLLIN : 0u) |
                   ((what & CURL_POLL_OUT) != 0 ? EPOLLOUT : 0u);
    event.data.fd = socket;
    // A socket curl closed left the set by itself: a new one may reuse its number.
    if (epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0) {
      epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event);
    }
    return 0;
  }
  // CURLMOPT_TIMERFUNCTION: when curl wants to be called for its timeouts (-1: never).
  static int on_timer(CURLM*, long timeout_ms, void* self) {
    auto& deadline = static_cast<Events*>(self)->deadline;
    if (timeout_ms < 0) {
      deadline.reset();
    } else {
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    }
    return 0;
  }
};

Multi::Multi(std::size_t slots) : events_(std::make_unique<Events>()) {
  outbound_http::curl_global_once();
  auto* multi = curl_multi_init();
  multi_ = multi;
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Events::on_socket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, events_.get());
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Events::on_timer);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, events_.get());
  for (std::size_t i = 0; i < slots; ++i) slots_.push_back(std::make_unique<Slot>());
}

Multi::~Multi() {
  abandon_all();
  for (auto& slot : slots_) {
    if (slot->easy != nullptr) curl_easy_cleanup(slot->easy);
  }
  curl_multi_cleanup(static_cast<CURLM*>(multi_));  // may still call on_socket: events_ lives on
}

void Multi::start(std::size_t index, const Request& request) {
  Slot& slot = *slots_.at(index);
  if (slot.easy == nullptr) slot.easy = curl_easy_init();
  CURL* easy = slot.easy;
  slot.free_lists();
  slot.response = Response{};
  slot.error_buffer[0] = '\0';
  slot.request_body = request.body;
  slot.body_max_bytes = request.body_max_bytes;
  slot.timeout_ms = request.timeout_ms;
  for (const std::string& header : request.headers) {
    slot.headers = curl_slist_append(slot.headers, header.c_str());
  }
  slot.headers = curl_slist_append(slot.headers, "Expect:");  // no 100-continue round trip
  if (!request.pinned_addresses.empty()) {
    if (auto parts = outbound_http::parse_url(request.url)) {
      std::string pin = parts->host + ":" + std::to_string(parts->port) + ":";
      for (std::size_t i = 0; i < request.pinned_addresses.size(); ++i) {
        const std::string& address = request.pinned_addresses[i];
        if (i > 0) pin += ',';
        pin += address.find(':') != std::string::npos ? "[" + address + "]" : address;
      }
      slot.pins = curl_slist_append(slot.pins, pin.c_str());
    }
  }
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_RESOLVE, slot.pins);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, slot.headers);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, slot.request_body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(slot.request_body.size()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout_ms));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &slot);
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &slot);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, slot.error_buffer);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, reinterpret_cast<void*>(index));
  curl_multi_add_handle(static_cast<CURLM*>(multi_), easy);
  slot.busy = true;
  ++running_;
}

std::vector<std::pair<std::size_t, Response>> Multi::poll(int wait_ms) {
  auto* multi = static_cast<CURLM*>(multi_);
  std::vector<std::pair<std::size_t, Response>> finished;
  auto collect = [&] {
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      void* user = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &user);
      const auto index = reinterpret_cast<std::size_t>(user);
      Slot& slot = *slots_.at(index);
      Response& response = slot.response;
      curl_off_t total_micros = 0;
      curl_easy_getinfo(slot.easy, CURLINFO_TOTAL_TIME_T, &total_micros);
      response.latency_ms = static_cast<std::int64_t>(total_micros / 1000);
      const CURLcode result = message->data.result;
      if (result == CURLE_OK) {
        long status = 0;
        curl_easy_getinfo(slot.easy, CURLINFO_RESPONSE_CODE, &status);
        response.status = static_cast<int>(status);
      } else if (result == CURLE_OPERATION_TIMEDOUT) {
        response.timed_out = true;
        response.error = "timed out after " + std::to_string(slot.timeout_ms) + " ms";
      } else {
        std::string detail = slot.error_buffer;
        response.error = detail.empty() ? curl_easy_strerror(result) : detail;
      }
      curl_multi_remove_handle(multi, slot.easy);
      slot.busy = false;
      --running_;
      finished.emplace_back(index, std::move(response));
    }
  };
  collect();
  if (!finished.empty() || running_ == 0) return finished;
  using Clock = std::chrono::steady_clock;
  Events& events = *events_;
  int still_running = 0;
  int wait = wait_ms;
  if (events.deadline) {
    const auto until = std::chrono::ceil<std::chrono::milliseconds>(*events.deadline - Clock::now());
    wait = static_cast<int>(std::clamp<std::int64_t>(until.count(), 0, wait_ms));
  }
  std::array<epoll_event, 64> ready{};
  const int count = epoll_wait(events.epoll, ready.data(), static_cast<int>(ready.size()), wait);
  for (int i = 0; i < count; ++i) {
    const int fd = ready[static_cast<std::size_t>(i)].data.fd;
    const std::uint32_t what = ready[static_cast<std::size_t>(i)].events;
    if (fd == events.wakeup) {
      std::uint64_t ignored = 0;
      static_cast<void>(read(events.wakeup, &ignored, sizeof ignored));
      continue;
    }
    const int flags = ((what & EPOLLIN) != 0 ? CURL_CSELECT_IN : 0) |
                      ((what & EPOLLOUT) != 0 ? CURL_CSELECT_OUT : 0) |
                      ((what & (EPOLLERR | EPOLLHUP)) != 0 ? CURL_CSELECT_ERR : 0);
    curl_multi_socket_action(multi, fd, flags, &still_running);
  }
  if (events.deadline && *events.deadline <= Clock::now()) {
    events.deadline.reset();  // curl sets the next one from this call
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &still_running);
  }
  collect();
  return finished;
}

void Multi::abandon_all() {
  for (auto& slot : slots_) {
    if (!slot->busy) continue;
    curl_multi_remove_handle(static_cast<CURLM*>(multi_), slot->easy);
    slot->busy = false;
  }
  running_ = 0;
  for (auto& slot : slots_) slot->free_lists();
}

void Multi::wakeup() {
  const std::uint64_t one = 1;
  static_cast<void>(write(events_->wakeup, &one, sizeof one));
}

namespace {

class CurlTransport final : public outbound_http::Transport {
 public:
  Resolved resolve(const std::string& host, int port) const override {
    return http_client::resolve(host, port);
  }
  std::unique_ptr<outbound_http::Requests> open(std::size_t slots) const override {
    return std::make_unique<Multi>(slots);
  }
};

}  // namespace

const outbound_http::Transport& transport() {
  static const CurlTransport k_transport;
  return k_transport;
}

AsyncClient::AsyncClient(std::size_t slots) : multi_(slots), in_flight_(slots) {
  thread_ = std::thread([this] {
    thread_priority::name_this_thread("http-client");  // for operators (top -H, perf)
    run();
  });
}

AsyncClient::~AsyncClient() { stop(); }

void AsyncClient::submit(Request request, std::function<void(Response)> done) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      waiting_.push_back({std::move(request), std::move(done), std::chrono::steady_clock::now()});
      done = nullptr;
    }
  }
  if (done) {  // stopped: answered at once
    Response stopped;
    stopped.error = "stopped";
    done(std::move(stopped));
    return;
  }
  wake_.notify_one();
  multi_.wakeup();
}

void AsyncClient::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  multi_.wakeup();
  if (thread_.joinable()) thread_.join();
}

void AsyncClient::run() {
  using Clock = std::chrono::steady_clock;
  auto answer = [](std::function<void(Response)>& done, Response response) {
    auto call = std::move(done);
    done = nullptr;
    call(std::move(response));
  };
  auto expired = [](const Waiting& item, Clock::time_point now) {
    return item.submitted + std::chrono::milliseconds(item.request.timeout_ms) <= now;
  };
  auto timed_out = [](const Waiting& item, Clock::time_point now) {
    Response late;
    late.timed_out = true;
    late.error = "timed out after " + std::to_string(item.request.timeout_ms) + " ms";
    late.latency_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - item.submitted).count();
    return late;
  };
  std::vector<std::size_t> free_slots;
  for (std::size_t slot = in_flight_.size(); slot-- > 0;) free_slots.push_back(slot);
  for (;;) {
    std::vector<Waiting> starting;
    std::vector<Waiting> late;  // their time ran out while they waited for a slot
    bool stopping = false;
    {
      std::unique_lock lock(mutex_);
      if (multi_.running() == 0) {
        wake_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      }
      stopping = stopping_;
      while (!waiting_.empty() && (stopping || starting.size() < free_slots.size())) {
        starting.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      const Clock::time_point now = Clock::now();
      for (auto item = waiting_.begin(); item != waiting_.end();) {
        if (!expired(*item, now)) {
          ++item;
          continue;
        }
        late.push_back(std::move(*item));
        item = waiting_.erase(item);
      }
    }
    if (stopping) {
      multi_.abandon_all();
      Response stopped;
      stopped.error = "stopped";
      for (auto& done : in_flight_) {
        if (done) answer(done, stopped);
      }
      for (Waiting& item : starting) answer(item.done, stopped);
      return;
    }
    const Clock::time_point now = Clock::now();
    for (Waiting& item : late) answer(item.done, timed_out(item, now));
    for (Waiting& item : starting) {
      const std::int64_t remaining =
          item.request.timeout_ms -
          std::chrono::duration_cast<std::chrono::milliseconds>(now - item.submitted).count();
      if (remaining <= 0) {
        answer(item.done, timed_out(item, now));
        continue;
      }
      const std::size_t slot = free_slots.back();
      free_slots.pop_back();
      item.request.timeout_ms = remaining;
      multi_.start(slot, item.request);
      in_flight_[slot] = std::move(item.done);
    }
    bool queued = false;
    {
      std::lock_guard lock(mutex_);
      queued = !waiting_.empty();
    }
    // While requests wait for a slot, they are looked at often enough for their timeouts.
    const int wait_ms =
        queued ? limits::k_async_client_queued_poll_ms : limits::k_async_client_idle_poll_ms;
    for (auto& [slot, response] : multi_.poll(wait_ms)) {
      answer(in_flight_[slot], std::move(response));
      free_slots.push_back(slot);
    }
  }
}

}  // namespace tesoro::http_client
