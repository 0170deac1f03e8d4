# Every third-party dependency is found here, once, from Debian's packages (installer/packages.txt).
find_package(Torch REQUIRED)
find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Svg Test Network)
find_package(spdlog REQUIRED)
find_package(simdjson REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(ICU REQUIRED COMPONENTS uc i18n)
# oneDNN: libtorch already loads it; the engine calls it directly for bf16 prompt products on AVX512-BF16/AMX.
find_package(dnnl CONFIG REQUIRED)
find_package(PkgConfig REQUIRED)
# Debian's libsentencepiece bundles protobuf-lite 3.14 and exports its symbols, while libtorch needs the
# system libprotobuf 3.21: in one symbol scope the process crashes at start-up whichever loads first.
# So sentencepiece is only ever linked into a small shim library that the engine opens with
# RTLD_LOCAL | RTLD_DEEPBIND (engine/text/spm_shim.*), never into a target that links libtorch.
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
# Documents (app/documents): PDF text, the .docx package and its XML, YAML.
pkg_check_modules(POPPLER_CPP REQUIRED IMPORTED_TARGET poppler-cpp)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(PUGIXML REQUIRED IMPORTED_TARGET pugixml)
# YAML documents: libyaml reports where each scalar is, so the file is rewritten around them.
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
# dragoman-cli serve (app/server): Debian's cpp-httplib, compiled (its .pc carries the feature defines).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)

# TorchConfig exposes variables rather than one target: wrap them so targets can link "torch_deps".
add_library(torch_deps INTERFACE)
target_link_libraries(torch_deps INTERFACE ${TORCH_LIBRARIES})
target_include_directories(torch_deps SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(torch_deps INTERFACE ${_torch_flags})
