# Project-wide warnings: our code builds warning-free with -Wall -Wextra.
function(dragoman_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
endfunction()
