#pragma once
// The environment variables that override the engine's parameters, all read here, once, at first use: a
// setting has one place to look. Locations (DRAGOMAN_MODELS, XDG_*, HF_*) are paths.h's, read where they are
// used, since a process may move them.
#include <string>

namespace dragoman {

struct EnvironmentOverrides {
    int threads = 0;                // DRAGOMAN_THREADS: kernel threads where EngineParams::threads is 0
    int atenThreads = 1;            // DRAGOMAN_ATEN_THREADS: libtorch's own pool
    std::string device;             // DRAGOMAN_DEVICE: auto, cpu or cuda, over ModelParams::device
    std::string onednn;             // DRAGOMAN_ONEDNN: "0" off, "1" on AVX512-BF16 too; empty: on with AMX
    bool noAvx512 = false;          // DRAGOMAN_NO_AVX512=1: the AVX2 matrix kernels on an AVX-512 CPU (tests, A/B runs)
    bool bf16Activations = true;    // DRAGOMAN_BF16_ACTIVATIONS=0: bf16 models' products with float32 activations (bf16_dot_gemm.h)
    std::string logLevel;           // DRAGOMAN_LOG: spdlog level of the console and the log file
    std::string sentencepieceShim;  // DRAGOMAN_SPM_SHIM: the libdragoman_spm.so to load first
    std::string bundledModels;      // DRAGOMAN_BUNDLED_MODELS: a folder of bundled models, searched first
};

const EnvironmentOverrides& environmentOverrides();

}  // namespace dragoman
