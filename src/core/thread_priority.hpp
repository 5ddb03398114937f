#pragma once
// Thread names and priorities, as `top -H`, `perf` and the scheduler see them.
#include <string_view>

namespace tesoro::thread_priority {

// Lowers the calling thread's priority by `levels` nice levels (to 19 at most). Linux keeps a
// nice value per thread, which threads made afterwards by this one inherit; a thread may lower
// its own priority without privileges, never raise it again. False when the system refused
// (logged once per process); the thread then runs as before.
bool lower_this_thread(int levels);

// Names the calling thread (at most 15 characters are kept).
void name_this_thread(std::string_view name);

}  // namespace tesoro::thread_priority
