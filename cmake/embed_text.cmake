# Writes INPUT into OUTPUT as a C++ string constant (tesoro::api::k_openapi_yaml).
file(READ ${INPUT} CONTENT)
string(FIND "${CONTENT}" ")TESORO_TEXT\"" CLASH)
if(NOT CLASH EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter")
endif()
file(WRITE ${OUTPUT}.tmp "namespace tesoro::api {\nextern const char* const k_openapi_yaml;\nconst char* const k_openapi_yaml = R\"TESORO_TEXT(${CONTENT})TESORO_TEXT\";\n}\n")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
