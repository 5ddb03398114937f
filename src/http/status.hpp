#pragma once
// HTTP status codes' reason phrases: the status line's, and the error envelope's `code`
// ("404 Not Found").

namespace tesoro::http {

// The phrase of a status Tesoro answers with; "Error" for any other.
const char* reason_phrase(int status);

}  // namespace tesoro::http
