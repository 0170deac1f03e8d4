# DRAGOMAN_SANITIZE: every target of this build is compiled and linked with the sanitizer. Errors stop the
# program (no recovery), so a test that triggers one fails.
if(DRAGOMAN_SANITIZE STREQUAL "address")
    add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
    # libFuzzer comes with clang; a g++ sanitizer build replays the fuzz corpus instead.
    # Every library is instrumented for coverage too, so the fuzzers see the readers' branches, not only their own.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
        set(DRAGOMAN_LIBFUZZER ON)
        add_compile_options(-fsanitize=fuzzer-no-link)
    endif()
elseif(DRAGOMAN_SANITIZE STREQUAL "thread")
    add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
    add_link_options(-fsanitize=thread)
elseif(DRAGOMAN_SANITIZE)
    message(FATAL_ERROR "DRAGOMAN_SANITIZE is 'address' or 'thread', not '${DRAGOMAN_SANITIZE}'")
endif()
