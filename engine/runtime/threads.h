#pragma once
// libtorch's thread pools are sized once per process, on the engine thread, before any inference.

namespace dragoman {

// `threads` <= 0: $DRAGOMAN_THREADS, else the number of online CPUs. That many threads go to OpenBLAS, which
// does the heavy products; ATen's own OpenMP pool gets one thread unless $DRAGOMAN_ATEN_THREADS says more:
// on 2 cores its spin-waiting workers and OpenBLAS's workers took turns and halved decoding speed
// (bench generate, opus-mt-base shapes: 34 tokens/s with both pools at 2, 69 with ATen at 1).
// Later calls do nothing. Returns the BLAS thread count in force.
int configureThreads(int threads = 0);

}  // namespace dragoman
