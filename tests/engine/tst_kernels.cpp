// The engine's own matrix kernels (engine/kernels) against a float64 reference: every path the dispatch
// can take (one row, few rows, short and long weight rows, K tails, bf16 and f32 weights, fused GEMVs).
#include "decode/step_batcher.h"
#include "kernels/argmax.h"
#include "kernels/bf16.h"
#include "kernels/bf16_dot_gemm.h"
#include "kernels/bf16_matmul.h"
#include "kernels/causal_attention.h"
#include "kernels/channel_epilogue.h"
#include "kernels/eight_bit_dot_steps.h"
#include "kernels/int8_activation_gemm.h"
#include "kernels/int8_panels.h"
#include "kernels/layer_norm.h"
#include "kernels/onednn_matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "kernels/row_parts.h"
#include "kernels/silu_mul.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"
#include "kernels/thread_roles.h"
#include "kernels/threads.h"
#include "layers/attention.h"
#include "layers/linear.h"

#include <QTest>

#include <torch/torch.h>

#include <dlfcn.h>
#include <sched.h>
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

using namespace dragoman;

namespace {

// Weights rounded to bf16 first, so both dtypes are compared against the same exact values.
torch::Tensor randomWeights(std::int64_t n, std::int64_t k, std::uint64_t seed) {
    auto generator = at::detail::createCPUGenerator(seed);
    return torch::randn({n, k}, generator, torch::kFloat32).to(torch::kBFloat16);
}

// w's values stored `bytes` past a 64-byte line boundary, as a checkpoint's tensors lie wherever its header ends. What
// lies before them is a bf16 NaN (read unmasked, it would show in the sums) or the 8-bit code 0x7F.
torch::Tensor atLineOffset(const torch::Tensor& w, std::int64_t bytes) {
    const auto size = w.element_size();
    auto storage = torch::empty({w.numel() + 64 / size}, w.options());
    if (w.scalar_type() == torch::kBFloat16)
        storage.fill_(std::nanf(""));
    else
        storage.fill_(0x7F);
    const auto address = reinterpret_cast<std::uintptr_t>(storage.data_ptr());
    const auto lead = static_cast<std::int64_t>((64 - address % 64) % 64) + bytes;
    Q_ASSERT(lead % size == 0);
    auto placed = storage.narrow(0, lead / size, w.numel()).view(w.sizes());
    placed.copy_(w);
    Q_ASSERT(reinterpret_cast<std::uintptr_t>(placed.data_ptr()) % 64 == static_cast<std::uintptr_t>(bytes));
    return placed;
}

torch::Tensor reference(const torch::Tensor& x, const torch::Tensor& w) {
    return torch::matmul(x.to(torch::kFloat64), w.to(torch::kFloat64).t());
}

// 8-bit weights of `type` ("int8" or "fp8": every code but the two NaNs) and their exact float32 values.
std::pair<torch::Tensor, torch::Tensor> eightBitWeights(const QString& type, std::int64_t n, std::int64_t k, at::Generator& generator) {
    if (type == "int8") {
        auto w = torch::randint(-128, 128, {n, k}, generator, torch::kInt8);
        return {w, w.to(torch::kFloat32)};
    }
    auto w = torch::randint(0, 254, {n, k}, generator, torch::kInt64);
    w = (w + (w >= 0x7F).to(torch::kInt64)).to(torch::kUInt8);
    return {w, ops::floatWeight(w)};
}

// Float32 accumulation over K terms of unit-variance products: the error grows about like sqrt(K).
double tolerance(std::int64_t k) {
    return 1e-5 * std::sqrt(static_cast<double>(k)) * 8;
}

// bf16 matrices of the given heights sharing K, their outputs filled with NaN (each must be written), and the
// gemvMany targets that name them. Matrix i's weights come from seed + i.
struct GemvCase {
    std::vector<torch::Tensor> weights, outputs;
    std::vector<kernels::GemvOutput> targets;
};
GemvCase gemvCase(const std::vector<std::int64_t>& heights, std::int64_t k, std::uint64_t seed,
                  const std::vector<std::int64_t>& offsets = {}) {
    GemvCase c;
    for (std::size_t i = 0; i < heights.size(); ++i) {
        c.weights.push_back(atLineOffset(randomWeights(heights[i], k, seed + i), offsets.empty() ? 0 : offsets[i]));
        c.outputs.push_back(torch::full({heights[i]}, std::nanf(""), torch::kFloat32));
        c.targets.push_back({c.weights.back().data_ptr(), kernels::WeightType::BF16, c.outputs.back().data_ptr<float>(), heights[i]});
    }
    return c;
}
// The rows of a product of `total` rows (`run(first, m)`: rows [first, first + m) of the same activations) that
// must not depend on the other rows: each listed row computed alone and as the first of the rows after it, and every
// row of the steps of `steps` rows starting at `firsts`, equal to the same row in the whole product. Returns false
// (the failure recorded) at the first difference.
using RowsProduct = std::function<torch::Tensor(std::int64_t first, std::int64_t m)>;
bool rowsStandAlone(const RowsProduct& run, std::int64_t total, std::initializer_list<std::int64_t> rows, const QString& label,
                    std::initializer_list<std::int64_t> steps = {}, std::initializer_list<std::int64_t> firsts = {}) {
    const auto all = run(0, total);
    for (const auto r : rows) {
        if (!QTest::qVerify(torch::equal(run(r, 1)[0], all[r]), "alone", qPrintable(QString("%1 row %2 alone").arg(label).arg(r)), __FILE__,
                            __LINE__))
            return false;
        if (!QTest::qVerify(torch::equal(run(r, total - r)[0], all[r]), "first of the rest",
                            qPrintable(QString("%1 row %2 first of %3").arg(label).arg(r).arg(total - r)), __FILE__, __LINE__))
            return false;
    }
    for (const auto m : steps)
        for (const auto first : firsts) {
            const auto step = run(first, m);
            for (std::int64_t r = 0; r < m; ++r)
                if (!QTest::qVerify(torch::equal(step[r], all[first + r]), "in a step",
                                    qPrintable(QString("%1 row %2 of a step of %3").arg(label).arg(first + r).arg(m)), __FILE__, __LINE__))
                    return false;
        }
    return true;
}
}  // namespace

class TestKernels : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void matmulMatchesReference_data();
    void matmulMatchesReference();
    void gemvManyMatchesSeparateProducts();
    void decodeRowEqualsBatchedRow_data();
    void decodeRowEqualsBatchedRow();
    void packedMatmulMatchesReference_data();
    void packedMatmulMatchesReference();
    void splitToBf16IsExact();
    void onednnProductsMatchReference_data();
    void onednnProductsMatchReference();
    void onednnEightBitProductsMatchReference_data();
    void onednnEightBitProductsMatchReference();
    void bf16DotProductsMatchReference_data();
    void bf16DotProductsMatchReference();
    void bf16DotRowsDoNotDependOnOtherRows();
    void bf16DotGemvManyEqualsSeparateProducts();
    void bf16DotEightBitEqualsWidenedWeights_data();
    void bf16DotEightBitEqualsWidenedWeights();
    void eightBitPromptsOfBf16ModelsTakeTheDotTiles();
    void eightBitDotStepsMatchReference_data();
    void eightBitDotStepsMatchReference();
    void int8ActivationProductsMatchReference_data();
    void int8ActivationProductsMatchReference();
    void int8ActivationProductsTogether();
    void int8ActivationRowsStandAlone();
    void eightBitDotStepRowsDoNotDependOnOtherRows();
    void eightBitFloatRowsDoNotDependOnOtherRows();
    void eightBitDotStepsGemvManyEqualsSeparateProducts();
    void int8StepsTakeExtremeRows();
    void eightBitStepsOfBf16ModelsTakeTheStepKernels();
    void promptKernelIsNamed();
    void projectMatchesReference_data();
    void projectMatchesReference();
    void widenIsExact();
    void scaledLinearMatchesDequantized_data();
    void scaledLinearMatchesDequantized();
    void firstArgmaxIsTorchArgmax_data();
    void firstArgmaxIsTorchArgmax();
    void siluMulMatchesReference_data();
    void siluMulMatchesReference();
    void channelEpilogueEqualsLibtorch_data();
    void channelEpilogueEqualsLibtorch();
    void misshapenScaleIsNamed();
    void quantizedWeightNeedsScale();
    void fusedProjectionsOfEightBitWeights();
    void manyProjectsWeightsNoKernelReads();
    void attentionMatchesReference_data();
    void attentionMatchesReference();
    void attentionAppendsTheStep_data();
    void attentionAppendsTheStep();
    void causalPromptMatchesReference_data();
    void causalPromptMatchesReference();
    void encoderAttentionMatchesReference_data();
    void encoderAttentionMatchesReference();
    void addLayerNormMatchesLibtorch();
    void rmsNormMatchesLibtorch_data();
    void rmsNormMatchesLibtorch();
    void ropeMatchesLibtorch_data();
    void ropeMatchesLibtorch();
    void openMpTeamRunsEveryPartOnce();
    void parallelForCoversEveryIndexOnce_data();
    void parallelForCoversEveryIndexOnce();
    void parallelForGivesEachThreadItsRun_data();
    void parallelForGivesEachThreadItsRun();
    void parallelForRethrowsWhatAChunkThrows_data();
    void parallelForRethrowsWhatAChunkThrows();
    void rowsSplitIntoEvenParts_data();
    void rowsSplitIntoEvenParts();
    void lineFeedHandsOutItsRangesInOrder();
    void partsRunOnThePoolAndRethrow();
    void kernelThreadsDoNotYieldToRequests();
    void blasThreadsFollowProductSize_data();
    void blasThreadsFollowProductSize();
};

void TestKernels::matmulMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // K = 8 and 24 leave tails after 16/32-wide steps; 512 is a short f32 row (2 KiB), 1032 a long f32 row
    // but a short bf16 one, 4096 long in both. N = 3, 13 and 130 leave tails after 2-row tiles and the
    // 8-row groups of a decoding step, and 130 also splits unevenly over the thread pool. M = 5 and 9 run a
    // full group of 4 rows and a rest.
    for (int k : {8, 24, 512, 1032, 4096})
        for (int m : {1, 2, 3, 4, 5, 9})
            for (int n : {1, 3, 13, 130})
                QTest::addRow("m%d_n%d_k%d", m, n, k) << m << n << k;
}

void TestKernels::matmulMatchesReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    const auto w = randomWeights(n, k, 7);
    const auto x = torch::randn({m, k}, at::detail::createCPUGenerator(11), torch::kFloat32);
    const auto expected = reference(x, w);

    auto yBf16 = torch::empty({m, n}, torch::kFloat32);
    kernels::bf16MatmulTransposed(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()),
                                  yBf16.data_ptr<float>(), m, n, k);
    const auto wF32 = w.to(torch::kFloat32).contiguous();
    auto yF32 = torch::empty({m, n}, torch::kFloat32);
    kernels::f32MatmulTransposed(x.data_ptr<float>(), wF32.data_ptr<float>(), yF32.data_ptr<float>(), m, n, k);

    const double bf16Error = (yBf16.to(torch::kFloat64) - expected).abs().max().item<double>();
    const double f32Error = (yF32.to(torch::kFloat64) - expected).abs().max().item<double>();
    QVERIFY2(bf16Error < tolerance(k), qPrintable(QString("bf16 weights: max error %1").arg(bf16Error)));
    QVERIFY2(f32Error < tolerance(k), qPrintable(QString("f32 weights: max error %1").arg(f32Error)));
}

void TestKernels::gemvManyMatchesSeparateProducts() {
    // q/k/v-like outputs of different heights sharing one activation row, long and short rows.
    for (std::int64_t k : {64, 2048}) {
        const std::vector<std::int64_t> heights{130, 16, 3};
        const auto x = torch::randn({1, k}, at::detail::createCPUGenerator(3), torch::kFloat32);
        const auto c = gemvCase(heights, k, 20);
        kernels::gemvMany(x.data_ptr<float>(), c.targets.data(), c.targets.size(), k);
        for (std::size_t i = 0; i < heights.size(); ++i) {
            const double error = (c.outputs[i].to(torch::kFloat64) - reference(x, c.weights[i]).squeeze(0)).abs().max().item<double>();
            QVERIFY2(error < tolerance(k), qPrintable(QString("k=%1 output %2: max error %3").arg(k).arg(i).arg(error)));
        }
    }
}

void TestKernels::decodeRowEqualsBatchedRow_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("k");
    // Short rows (the AVX2 family's sequential walk) and long ones (its interleaved walk and batched tiles); on
    // AVX-512, K = 264, 2056 and 4104 end in a group of 8 after 16-wide steps.
    for (const char* type : {"f32", "bf16", "int8", "fp8"})
        for (int k : {256, 264, 2048, 2056, 4104})
            QTest::addRow("%s_k%d", type, k) << QString(type) << k;
}

// A sequence decoded alone (one activation row: the decoding GEMV) must get exactly the numbers it gets in a
// batch (the batched tiles: 4 rows at a time on AVX2, up to 8 on AVX-512; tst_kernels_avx2 runs the AVX2 family on
// AVX-512 machines): greedy output may not depend on who else is decoding. Every row of a batch of 4 and of 9 is checked. Every 8-bit code
// is drawn, float8 subnormals included (not 0x7F/0xFF: NaN).
void TestKernels::decodeRowEqualsBatchedRow() {
    QFETCH(QString, type);
    QFETCH(int, k);
    const std::int64_t n = 131;  // blocks of 64, 64 and 3 rows: full tiles, and rows left over
    auto generator = at::detail::createCPUGenerator(5);
    torch::Tensor w, exact;
    if (type == "f32") {
        w = torch::randn({n, k}, generator, torch::kFloat32);
        exact = w;
    } else if (type == "bf16") {
        w = randomWeights(n, k, 9);
        exact = w.to(torch::kFloat32);
    } else if (type == "int8") {
        w = torch::randint(-128, 128, {n, k}, generator, torch::kInt8);
        exact = w.to(torch::kFloat32);
    } else {
        w = torch::randint(0, 254, {n, k}, generator, torch::kInt64);
        w = (w + (w >= 0x7F).to(torch::kInt64)).to(torch::kUInt8);  // skips 0x7F; 0xFF is never drawn
        exact = torch::empty({n, k}, torch::kFloat32);
        const auto* codes = w.data_ptr<std::uint8_t>();
        auto* out = exact.data_ptr<float>();
        for (std::int64_t i = 0; i < n * k; ++i)
            out[i] = kernels::widen(kernels::Fp8E4M3{codes[i]});
    }
    const auto x = torch::randn({9, k}, generator, torch::kFloat32);
    const auto run = [&](std::int64_t first, std::int64_t m) {
        auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
        const float* rows = x.data_ptr<float>() + first * k;
        if (type == "f32")
            kernels::f32MatmulTransposed(rows, w.data_ptr<float>(), y.data_ptr<float>(), m, n, k);
        else if (type == "bf16")
            kernels::bf16MatmulTransposed(rows, reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()), y.data_ptr<float>(), m,
                                          n, k);
        else if (type == "int8")
            kernels::i8MatmulTransposed(rows, w.data_ptr<std::int8_t>(), y.data_ptr<float>(), m, n, k);
        else
            kernels::fp8MatmulTransposed(rows, w.data_ptr<std::uint8_t>(), y.data_ptr<float>(), m, n, k);
        return y;
    };
    // A decoding step's fused projections (Linear::many) take gemvMany; they must agree with the rest too.
    const auto fused = [&](std::int64_t row) {
        auto y = torch::full({n}, std::nanf(""), torch::kFloat32);
        const auto weightType = type == "bf16"   ? kernels::WeightType::BF16
                                : type == "int8" ? kernels::WeightType::I8
                                                 : kernels::WeightType::FP8;
        const kernels::GemvOutput output{w.data_ptr(), weightType, y.data_ptr<float>(), n};
        kernels::gemvMany(x.data_ptr<float>() + row * k, &output, 1, k);
        return y;
    };
    const auto inFour = run(0, 4), inNine = run(0, 9);
    for (std::int64_t r = 0; r < 9; ++r) {
        const auto alone = run(r, 1);
        if (r < 4) QVERIFY2(torch::equal(alone[0], inFour[r]), qPrintable(QString("row %1 of 4").arg(r)));
        QVERIFY2(torch::equal(alone[0], inNine[r]), qPrintable(QString("row %1 of 9").arg(r)));
        if (type != "f32") QVERIFY2(torch::equal(fused(r), inNine[r]), qPrintable(QString("row %1 through gemvMany").arg(r)));
    }
    const auto alone = run(0, 1);
    const auto scale = exact.abs().max().item<double>();
    const double error = (alone.to(torch::kFloat64) - reference(x.slice(0, 0, 1), exact)).abs().max().item<double>();
    QVERIFY2(error < tolerance(k) * scale, qPrintable(QString("max error %1").arg(error)));
}

void TestKernels::packedMatmulMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // The packed GEMM's edges: M around its 6-row panels, N around its 16-row weight panels, K below 8 (no
    // vector step), not a multiple of 8 (a scalar tail), and past one 512-deep block (partial sums added up).
    for (int m : {1, 5, 6, 7, 40})
        for (int n : {1, 15, 16, 17, 130})
            for (int k : {3, 8, 20, 1032})
                QTest::addRow("m%d_n%d_k%d", m, n, k) << m << n << k;
}

void TestKernels::packedMatmulMatchesReference() {
    if (!kernels::hasAvx2()) QSKIP("the packed GEMM needs AVX2/FMA");
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    const auto w = randomWeights(n, k, 3);
    const auto x = torch::randn({m, k}, at::detail::createCPUGenerator(17), torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);  // every output must be written
    kernels::bf16PackedMatmulTransposed(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()),
                                        y.data_ptr<float>(), m, n, k);
    const double error = (y.to(torch::kFloat64) - reference(x, w)).abs().max().item<double>();
    QVERIFY2(error < tolerance(k), qPrintable(QString("max error %1").arg(error)));
}

void TestKernels::splitToBf16IsExact() {
    auto x = torch::randn({4099}, at::detail::createCPUGenerator(21), torch::kFloat32) * 1000;
    x[0] = 0.0f;
    x[1] = -1e-30f;
    x[2] = 3.0e38f;
    x[3] = 1.0f + 1.0f / 256;             // halfway between two bf16 values: ties go to the even one (1.0)
    x[4] = 1.0f + std::ldexp(1.0f, -23);  // the last mantissa bit, only the third term can carry it
    std::vector<std::uint16_t> hi(x.numel()), mid(x.numel()), lo(x.numel());
    kernels::splitToBf16(x.data_ptr<float>(), hi.data(), mid.data(), lo.data(), x.numel());
    const auto torchRounded = x.to(torch::kBFloat16);  // round to nearest even, like the split's high term
    const auto* expectHi = reinterpret_cast<const std::uint16_t*>(torchRounded.data_ptr<at::BFloat16>());
    for (std::int64_t i = 0; i < x.numel(); ++i) {
        QCOMPARE(hi[i], expectHi[i]);
        const double value = x[i].item<float>();
        const double sum = static_cast<double>(kernels::widen(hi[i])) + kernels::widen(mid[i]) + kernels::widen(lo[i]);
        // 8 + 8 + 8 bits: the whole 24-bit mantissa of a normal float32.
        QVERIFY2(sum == value, qPrintable(QString("x[%1] = %2, terms sum to %3").arg(i).arg(value).arg(sum)));
    }
}

void TestKernels::onednnProductsMatchReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // One row, a prompt, exactly one 256-row chunk and past it (two shapes compiled), odd N and K.
    for (int m : {1, 40, 256, 300})
        for (int n : {17, 130})
            for (int k : {20, 1032})
                QTest::addRow("m%d_n%d_k%d", m, n, k) << m << n << k;
}

void TestKernels::onednnProductsMatchReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    const auto w = randomWeights(n, k, 7);
    const auto x = torch::randn({m, k}, at::detail::createCPUGenerator(19), torch::kFloat32);
    // float32 weights take the same call path (layout, chunks, primitive cache) and work on any x86 CPU.
    const auto w32 = w.to(torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    QVERIFY(kernels::onednnF32MatmulTransposed(x.data_ptr<float>(), w32.data_ptr<float>(), y.data_ptr<float>(), m, n, k));
    double error = (y.to(torch::kFloat64) - reference(x, w)).abs().max().item<double>();
    QVERIFY2(error < tolerance(k), qPrintable(QString("float32: max error %1").arg(error)));

    if (!kernels::onednnBf16Ready())
        QSKIP(qPrintable(
            QString("oneDNN has no bf16 dot products here; prompts use %1").arg(QString::fromStdString(kernels::promptKernelName()))));
    y.fill_(std::nanf(""));
    QVERIFY(kernels::onednnBf16MatmulTransposed(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()),
                                                y.data_ptr<float>(), m, n, k));
    error = (y.to(torch::kFloat64) - reference(x, w)).abs().max().item<double>();
    // Three exact terms leave only float32 accumulation error (~2e-6 sqrt(K) here); two terms, which missed the
    // HunYuan fixture's 1e-4, give 2-3x this bound on these rows (3.6e-4 at K = 1032, 6.4e-5 at K = 20).
    const double splitTolerance = 6e-6 * std::sqrt(static_cast<double>(k));
    QVERIFY2(error < splitTolerance, qPrintable(QString("bf16 split: max error %1, allowed %2").arg(error).arg(splitTolerance)));
}

void TestKernels::onednnEightBitProductsMatchReference_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // One panel; three uneven panels (1100 rows of K = 1032: 367, 367, 366, two compiled shapes); one 256-row
    // chunk of a prompt and past it.
    for (const char* type : {"int8", "fp8"})
        for (int m : {40, 300})
            for (auto [n, k] : {std::pair{17, 20}, std::pair{1100, 1032}, std::pair{130, 2048}})
                QTest::addRow("%s_m%d_n%d_k%d", type, m, n, k) << QString(type) << m << n << k;
}

// 8-bit weights through oneDNN on panels widened to bf16: the raw products of the exact weight values, to float32
// accumulation error (as the bf16 weights above), every output column written once.
void TestKernels::onednnEightBitProductsMatchReference() {
    if (!kernels::onednnBf16Ready()) QSKIP("oneDNN has no bf16 dot products here; 8-bit prompts use the engine's own kernel");
    configureThreads();  // the panels are widened on OpenMP's team, as in the engine
    QFETCH(QString, type);
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    auto generator = at::detail::createCPUGenerator(23);
    const auto [w, exact] = eightBitWeights(type, n, k, generator);
    const auto x = torch::randn({m, k}, generator, torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    QVERIFY(kernels::onednnEightBitMatmulTransposed(x.data_ptr<float>(), w.data_ptr(),
                                                    type == "int8" ? kernels::WeightType::I8 : kernels::WeightType::FP8,
                                                    y.data_ptr<float>(), m, n, k));
    const double error = (y.to(torch::kFloat64) - reference(x, exact)).abs().max().item<double>();
    const double allowed = 6e-6 * std::sqrt(static_cast<double>(k)) * exact.abs().max().item<double>();
    QVERIFY2(error < allowed, qPrintable(QString("max error %1, allowed %2").arg(error).arg(allowed)));
}

void TestKernels::bf16DotProductsMatchReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("offset");
    // M around the 4-row tiles (a batched step's 8, 13 and 16 rows too) and past one sweep of rows (248 rows of
    // K = 1032), N around the 6-row tiles, K below one 32-wide step, exactly one, with a tail, and past one 1024-deep
    // pass (accumulators kept between passes).
    for (int m : {1, 4, 5, 8, 13, 16, 40, 300})
        for (int n : {1, 6, 7, 130})
            for (int k : {3, 32, 1032, 2080})
                QTest::addRow("m%d_n%d_k%d", m, n, k) << m << n << k << 0;
    // Weights starting inside a 64-byte line (a checkpoint's header of any length): read from the line's start when
    // K is a multiple of 32 (one lane to 31 lanes in), where they start otherwise.
    for (int offset : {2, 8, 62})
        for (int m : {1, 8, 40})
            for (int k : {32, 1032, 2080})
                QTest::addRow("m%d_n7_k%d_at%d", m, k, offset) << m << 7 << k << offset;
}

// The AVX512-BF16 prompt kernel: bf16-rounded activations (torch's rounding) times the bf16 weights, to float32
// accumulation error, every output written.
void TestKernels::bf16DotProductsMatchReference() {
    if (!kernels::hasAvx512Bf16()) QSKIP("no AVX512-BF16 on this CPU (or DRAGOMAN_NO_AVX512=1)");
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, offset);
    const auto w = atLineOffset(randomWeights(n, k, 31), offset);
    const auto x = torch::randn({m, k}, at::detail::createCPUGenerator(29), torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    kernels::bf16DotMatmulTransposed(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()),
                                     y.data_ptr<float>(), m, n, k);
    const auto expected = reference(x.to(torch::kBFloat16), w);
    const double error = (y.to(torch::kFloat64) - expected).abs().max().item<double>();
    const double allowed = tolerance(k) * w.to(torch::kFloat32).abs().max().item<double>();
    QVERIFY2(error < allowed, qPrintable(QString("max error %1, allowed %2").arg(error).arg(allowed)));
    // Against float32 activations the error is bf16's (~2^-9 relative per activation): the test would see a wrong rounding.
    const double fromFloat32 = (y.to(torch::kFloat64) - reference(x, w)).abs().max().item<double>();
    if (k >= 32 && m * n >= 40)
        QVERIFY2(fromFloat32 > allowed, qPrintable(QString("bf16 activations should differ from float32 ones: %1").arg(fromFloat32)));
}

// A row gets the same numbers whatever the other rows are (alone as a decoding step, in a batched step of 5-16 rows,
// in a prompt, at a tile's edge).
void TestKernels::bf16DotRowsDoNotDependOnOtherRows() {
    if (!kernels::hasAvx512Bf16()) QSKIP("no AVX512-BF16 on this CPU (or DRAGOMAN_NO_AVX512=1)");
    const std::int64_t n = 37, k = 2080;
    const auto x = torch::randn({41, k}, at::detail::createCPUGenerator(35), torch::kFloat32);
    for (std::int64_t offset : {0, 8}) {  // the weights at a line's start, and read from one 4 lanes before them
        const auto w = atLineOffset(randomWeights(n, k, 33), offset);
        const auto run = [&](std::int64_t first, std::int64_t m) {
            auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
            kernels::bf16DotMatmulTransposed(x.data_ptr<float>() + first * k,
                                             reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()), y.data_ptr<float>(), m, n,
                                             k);
            return y;
        };
        if (!rowsStandAlone(run, 41, {0, 3, 4, 33, 36, 39, 40}, QString("bf16 at %1").arg(offset), {5, 8, 9, 13, 16}, {0, 3, 25})) return;
    }
}

// A decoding step's fused projections on the bf16 dot path (Linear::many): each output exactly what the kernel
// gives it alone, heights around the 6-row tiles and the claims of 16 tiles, K with a tail.
void TestKernels::bf16DotGemvManyEqualsSeparateProducts() {
    if (!kernels::hasAvx512Bf16()) QSKIP("no AVX512-BF16 on this CPU (or DRAGOMAN_NO_AVX512=1)");
    for (std::int64_t k : {40, 2048}) {
        const std::vector<std::int64_t> heights{130, 1, 96, 7, 600};
        const auto x = torch::randn({1, k}, at::detail::createCPUGenerator(41), torch::kFloat32);
        // Outputs whose weights start at different places in a line, each read from its own line's start.
        const auto c = gemvCase(heights, k, 50, {8, 0, 8, 62, 2});
        kernels::bf16DotGemvMany(x.data_ptr<float>(), c.targets.data(), c.targets.size(), k);
        for (std::size_t i = 0; i < heights.size(); ++i) {
            auto alone = torch::full({heights[i]}, std::nanf(""), torch::kFloat32);
            kernels::bf16DotMatmulTransposed(x.data_ptr<float>(),
                                             reinterpret_cast<const std::uint16_t*>(c.weights[i].data_ptr<at::BFloat16>()),
                                             alone.data_ptr<float>(), 1, heights[i], k);
            QVERIFY2(torch::equal(c.outputs[i], alone), qPrintable(QString("k=%1 output %2").arg(k).arg(i)));
        }
    }
}

void TestKernels::bf16DotEightBitEqualsWidenedWeights_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    // A prompt's rows (32 and up) around the 4-row tiles and past one sweep (248 rows of K = 1032), N around the
    // 6-row blocks; K below one 32-wide step, two steps exactly (64), three and a part (120), with a tail (1032),
    // and long (2080).
    for (const char* type : {"int8", "fp8"})
        for (int m : {13, 32, 45, 300})
            for (auto [n, k] : {std::pair{7, 20}, std::pair{5, 64}, std::pair{6, 120}, std::pair{130, 1032}, std::pair{13, 2080}})
                QTest::addRow("%s_m%d_n%d_k%d", type, m, n, k) << QString(type) << m << n << k;
}

// 8-bit weights on the AVX512-BF16 tiles: bit for bit what the bf16 kernel gives for the codes' exact values as
// bf16 weights (int8 and E4M3 values are bf16 values; FP8's 2^8 comes back exactly), every output written.
void TestKernels::bf16DotEightBitEqualsWidenedWeights() {
    if (!kernels::hasAvx512Bf16()) QSKIP("no AVX512-BF16 on this CPU (or DRAGOMAN_NO_AVX512=1)");
    QFETCH(QString, type);
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    auto generator = at::detail::createCPUGenerator(43);
    const auto [w, exact] = eightBitWeights(type, n, k, generator);
    const auto widened = exact.to(torch::kBFloat16);
    QVERIFY(torch::equal(widened.to(torch::kFloat32), exact));
    const auto x = torch::randn({m, k}, generator, torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    kernels::bf16DotEightBitMatmulTransposed(x.data_ptr<float>(), w.data_ptr(),
                                             type == "int8" ? kernels::WeightType::I8 : kernels::WeightType::FP8, y.data_ptr<float>(), m, n,
                                             k);
    auto expected = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    kernels::bf16DotMatmulTransposed(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(widened.data_ptr<at::BFloat16>()),
                                     expected.data_ptr<float>(), m, n, k);
    QVERIFY(torch::equal(y, expected));
}

// ops::project for 8-bit weights of a bf16 model (Linear's bf16Activations): a prompt's rows take the tiles above
// where bf16 models' products do, decoding steps' few rows the step kernels where they are used (below), else the
// float32-activation kernel.
void TestKernels::eightBitPromptsOfBf16ModelsTakeTheDotTiles() {
    auto generator = at::detail::createCPUGenerator(47);
    const std::int64_t n = 130, k = 1032;
    const auto w = eightBitWeights("int8", n, k, generator).first;
    for (std::int64_t m : {8, 40}) {
        const auto x = torch::randn({m, k}, generator, torch::kFloat32);
        const auto bf16Model = ops::project(x, w, true);
        auto expected = ops::project(x, w, false);
        if (m >= 32 && kernels::bf16DotProducts()) {
            kernels::bf16DotEightBitMatmulTransposed(x.data_ptr<float>(), w.data_ptr(), kernels::WeightType::I8, expected.data_ptr<float>(),
                                                     m, n, k);
        } else if (m < 32 && kernels::eightBitDotSteps()) {
            kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>(), w.data_ptr(), kernels::WeightType::I8,
                                                      expected.data_ptr<float>(), m, n, k);
        }
        QVERIFY2(torch::equal(bf16Model, expected), qPrintable(QString("m=%1").arg(m)));
    }
}

void TestKernels::eightBitDotStepsMatchReference_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("offset");
    // M around the 4-row groups (a batched step has up to 16 rows), N around the tiles of 8, 6, 4 and 3 weight rows,
    // K below one 64-code step, exactly one, with a tail, and long.
    for (const char* type : {"int8", "fp8"})
        for (int m : {1, 2, 3, 4, 5, 16})
            for (int n : {1, 7, 8, 9, 130})
                for (int k : {20, 64, 100, 2048})
                    QTest::addRow("%s_m%d_n%d_k%d", type, m, n, k) << QString(type) << m << n << k << 0;
    // Codes starting anywhere in a 64-byte line (a checkpoint's header of any length).
    for (const char* type : {"int8", "fp8"})
        for (int offset : {1, 8, 63})
            for (int m : {1, 5})
                for (int k : {64, 100, 2048})
                    QTest::addRow("%s_m%d_n9_k%d_at%d", type, m, k, offset) << QString(type) << m << 9 << k << offset;
}

// 8-bit decoding steps of a bf16 model (eight_bit_dot_steps.h), every output written. FP8 through byte tables:
// bf16-rounded activations times the codes' exact values (every E4M3 code but the NaNs, subnormals and both zeros
// included), to float32 accumulation error. int8 through digit planes (int8_digit_steps.h): the activations
// themselves, unrounded, to the fixed point's bound (max|x| / 8355000 per code magnitude) and a float32 rounding, far
// inside what bf16 rounding would err (every int8 including -128).
void TestKernels::eightBitDotStepsMatchReference() {
    if (!kernels::eightBitDotSteps()) QSKIP("no AVX512-BF16 with AVX512-VBMI on this CPU (or turned off)");
    QFETCH(QString, type);
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, offset);
    auto generator = at::detail::createCPUGenerator(53);
    const auto [codes, exact] = eightBitWeights(type, n, k, generator);
    const auto w = atLineOffset(codes, offset);
    const auto x = torch::randn({m, k}, generator, torch::kFloat32);
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>(), w.data_ptr(),
                                              type == "int8" ? kernels::WeightType::I8 : kernels::WeightType::FP8, y.data_ptr<float>(), m,
                                              n, k);
    const bool int8 = type == "int8";
    const auto expected = reference(int8 ? x : x.to(torch::kBFloat16), exact);
    const double error = (y.to(torch::kFloat64) - expected).abs().max().item<double>();
    const double allowed =
        int8 ? x.abs().max().item<double>() / 8355000 * exact.abs().sum(1).max().item<double>() + expected.abs().max().item<double>() * 6e-8
             : tolerance(k) * exact.abs().max().item<double>();
    QVERIFY2(error < allowed, qPrintable(QString("max error %1, allowed %2").arg(error).arg(allowed)));
}

// compressed-tensors' dynamic per-token int8 quantization of the rows, then integer products, in libtorch's own
// operations: scale = max|x| / 127.5 (at least float32's epsilon), codes round(x / scale) half to even, clamped.
torch::Tensor int8ActivationReference(const torch::Tensor& x, const torch::Tensor& codes) {
    const auto scale = (x.abs().amax(1, true) / 127.5f).clamp_min(std::numeric_limits<float>::epsilon());
    const auto q = (x / scale).round().clamp(-128, 127).to(torch::kInt64);
    const auto totals = torch::matmul(q, codes.to(torch::kInt64).t());
    return totals.to(torch::kFloat32) * scale;
}

void TestKernels::int8ActivationProductsMatchReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("offset");
    QTest::addColumn<QString>("rows");  // "random", or a special row 0: "zero", "nan", "spike" (one huge value)
    // M around the 8-row groups and their 16-accumulator tiles (1-16 weight rows), N around those tiles, K below one
    // 64-code step, exactly one, with a tail and long.
    // M also around VNNI's 6-row panel tiles (from 4 rows on), N past 64-column panels.
    for (int m : {1, 2, 3, 5, 7, 8, 9, 12, 16, 33})
        for (int n : {1, 15, 16, 17, 130})
            for (int k : {20, 64, 100, 384, 2048})
                QTest::addRow("m%d_n%d_k%d", m, n, k) << m << n << k << 0 << "random";
    // Codes starting anywhere in a 64-byte line (a checkpoint's header of any length).
    for (int offset : {1, 8, 63})
        for (int m : {1, 8, 11})
            for (int k : {64, 100, 384})
                QTest::addRow("m%d_n19_k%d_at%d", m, k, offset) << m << 19 << k << offset << "random";
    for (const char* rows : {"zero", "nan", "spike"})
        for (int m : {2, 5})
            QTest::addRow("%s row of %d", rows, m) << m << 17 << 384 << 8 << QString(rows);
}

// W8A8 products (int8_activation_gemm.h) equal libtorch's computation of the same semantics bit for bit, on whichever
// instruction set this CPU takes (tst_kernels_avx2 runs the AVX2 code on AVX-512 machines); a row with a NaN gives NaN
// in that row only, a zero row zeros.
void TestKernels::int8ActivationProductsMatchReference() {
    QFETCH(int, m);
    QFETCH(int, n);
    QFETCH(int, k);
    QFETCH(int, offset);
    QFETCH(QString, rows);
    auto generator = at::detail::createCPUGenerator(61);
    const auto codes = eightBitWeights("int8", n, k, generator).first;
    const auto w = atLineOffset(codes, offset);
    auto x = torch::randn({m, k}, generator, torch::kFloat32) * 3;
    if (rows == "zero") x[0].zero_();
    if (rows == "nan") x[0][k / 2] = std::nanf("");
    if (rows == "spike") x[0][k - 1] = 1e6f;
    auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    kernels::int8ActivationMatmulTransposed(x.data_ptr<float>(), w.data_ptr<std::int8_t>(), y.data_ptr<float>(), m, n, k);
    if (rows == "nan") {
        QVERIFY(y[0].isnan().all().item<bool>());
        x = x.narrow(0, 1, m - 1);
        y = y.narrow(0, 1, m - 1);
    }
    const auto expected = int8ActivationReference(x, codes);
    QVERIFY2(
        torch::equal(y, expected),
        qPrintable(QString("%1: max difference %2").arg(kernels::int8ActivationKernel()).arg((y - expected).abs().max().item<double>())));
    if (rows == "zero") QVERIFY(y[0].eq(0).all().item<bool>());
    // A layer's scale (per channel or per tensor) and bias applied with the stores: the bits of the separate pass.
    const auto all = torch::randn({m, k}, generator, torch::kFloat32);
    const auto scales = torch::rand({n}, generator, torch::kFloat32) + 0.01, bias = torch::randn({n}, generator, torch::kFloat32);
    for (const bool perTensor : {false, true}) {
        kernels::ChannelEpilogue epilogue;
        epilogue.scale = scales.data_ptr<float>();
        epilogue.scalePerTensor = perTensor;
        epilogue.bias = bias.data_ptr<float>();
        auto separate = torch::empty({m, n}, torch::kFloat32), fused = torch::full({m, n}, std::nanf(""), torch::kFloat32);
        kernels::int8ActivationMatmulTransposed(all.data_ptr<float>(), w.data_ptr<std::int8_t>(), separate.data_ptr<float>(), m, n, k);
        kernels::scaleAndBiasRows(separate.data_ptr<float>(), m, n, epilogue);
        kernels::int8ActivationMatmulTransposed(all.data_ptr<float>(), w.data_ptr<std::int8_t>(), fused.data_ptr<float>(), m, n, k, nullptr,
                                                &epilogue);
        QVERIFY2(torch::equal(fused, separate), perTensor ? "per tensor" : "per channel");
    }
    // The same with the weights' panels made once (what a layer keeps) instead of per call.
    if (!kernels::panelProductsAvailable()) return;
    const kernels::Int8Panels panels(w.data_ptr<std::int8_t>(), n, k);
    const auto first = rows == "nan" ? 1 : 0;
    auto kept = torch::full({m, n}, std::nanf(""), torch::kFloat32);
    auto input = torch::randn({m, k}, generator, torch::kFloat32);
    input.narrow(0, first, m - first).copy_(x);
    kernels::int8ActivationMatmulTransposed(input.data_ptr<float>(), w.data_ptr<std::int8_t>(), kept.data_ptr<float>(), m, n, k, &panels);
    QVERIFY(torch::equal(kept.narrow(0, first, m - first), expected));
}

// Several products of the same rows in one call (a layer's queries, keys and values) give each what it gets alone:
// different widths, kept panels or none, epilogues or none, weights at different places in a line.
void TestKernels::int8ActivationProductsTogether() {
    auto generator = at::detail::createCPUGenerator(63);
    const std::int64_t k = 384;
    const std::vector<std::int64_t> widths{384, 130, 17};
    std::vector<torch::Tensor> weights;
    for (std::size_t i = 0; i < widths.size(); ++i)
        weights.push_back(atLineOffset(eightBitWeights("int8", widths[i], k, generator).first, i == 2 ? 8 : 0));
    const auto scales = torch::rand({384}, generator, torch::kFloat32) + 0.01, bias = torch::randn({384}, generator, torch::kFloat32);
    kernels::ChannelEpilogue epilogue;
    epilogue.scale = scales.data_ptr<float>();
    epilogue.bias = bias.data_ptr<float>();
    const kernels::Int8Panels panels(weights[0].data_ptr<std::int8_t>(), widths[0], k);
    for (const std::int64_t m : {1, 3, 4, 16, 40}) {
        const auto x = torch::randn({m, k}, generator, torch::kFloat32);
        std::vector<torch::Tensor> together, alone;
        std::vector<kernels::Int8Product> products;
        for (std::size_t i = 0; i < widths.size(); ++i) {
            together.push_back(torch::full({m, widths[i]}, std::nanf(""), torch::kFloat32));
            alone.push_back(torch::full({m, widths[i]}, std::nanf(""), torch::kFloat32));
            const auto* kept = i == 0 && m >= kernels::kPanelRows && kernels::panelProductsAvailable() ? &panels : nullptr;
            const auto* applied = i == 1 ? nullptr : &epilogue;
            products.push_back({weights[i].data_ptr<std::int8_t>(), widths[i], together.back().data_ptr<float>(), kept, applied});
            kernels::int8ActivationMatmulTransposed(x.data_ptr<float>(), weights[i].data_ptr<std::int8_t>(), alone.back().data_ptr<float>(),
                                                    m, widths[i], k, nullptr, applied);
        }
        kernels::int8ActivationProducts(x.data_ptr<float>(), m, k, products.data(), products.size());
        for (std::size_t i = 0; i < widths.size(); ++i)
            QVERIFY2(torch::equal(together[i], alone[i]), qPrintable(QString("m=%1, product %2").arg(m).arg(i)));
    }
}

// A row gets the same numbers alone (a decoding step) as in a batched step or an encoder pass of many rows.
void TestKernels::int8ActivationRowsStandAlone() {
    const std::int64_t n = 37, k = 384;
    auto generator = at::detail::createCPUGenerator(62);
    const auto w = atLineOffset(eightBitWeights("int8", n, k, generator).first, 8);
    const auto x = torch::randn({40, k}, generator, torch::kFloat32);
    const auto run = [&](std::int64_t first, std::int64_t m) {
        auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
        kernels::int8ActivationMatmulTransposed(x.data_ptr<float>() + first * k, w.data_ptr<std::int8_t>(), y.data_ptr<float>(), m, n, k);
        return y;
    };
    rowsStandAlone(run, 40, {0, 7, 8, 9, 15, 39}, "w8a8", {3, 16}, {0, 5});
}

// A row gets the same numbers alone (a decoding step) as in a batched step, wherever it falls in the 4-row groups.
void TestKernels::eightBitDotStepRowsDoNotDependOnOtherRows() {
    if (!kernels::eightBitDotSteps()) QSKIP("no AVX512-BF16 with AVX512-VBMI on this CPU (or turned off)");
    const std::int64_t n = 37;
    // K with a tail, and codes starting 8 bytes into a line.
    for (const auto& [type, k, offset] : {std::tuple{QString("int8"), 2100, 0}, std::tuple{QString("fp8"), 2100, 0},
                                          std::tuple{QString("int8"), 2048, 8}, std::tuple{QString("fp8"), 2048, 8}}) {
        auto generator = at::detail::createCPUGenerator(55);
        const auto w = atLineOffset(eightBitWeights(type, n, k, generator).first, offset);
        const auto x = torch::randn({16, k}, generator, torch::kFloat32);
        const auto run = [&](std::int64_t first, std::int64_t m) {
            auto y = torch::full({m, n}, std::nanf(""), torch::kFloat32);
            kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>() + first * k, w.data_ptr(),
                                                      type == "int8" ? kernels::WeightType::I8 : kernels::WeightType::FP8,
                                                      y.data_ptr<float>(), m, n, k);
            return y;
        };
        if (!rowsStandAlone(run, 16, {0, 3, 4, 5, 14, 15}, type)) return;
    }
}

// 8-bit weights with float32 activations (a float32 model's copy, the bundled model) take one kernel at every row
// count on AVX2 CPUs, so a prompt of many rows (an encoder pass over several sources) gives each row what it gets
// alone, past the 32 rows where the packed kernel used to take over; a scaled Linear says it is row-stable.
void TestKernels::eightBitFloatRowsDoNotDependOnOtherRows() {
    if (!kernels::hasAvx2()) QSKIP("no AVX2: long prompts of 8-bit weights go to libtorch");
    const std::int64_t n = 70, k = 392;
    for (const QString type : {"int8", "fp8"}) {
        auto generator = at::detail::createCPUGenerator(61);
        const auto w = eightBitWeights(type, n, k, generator).first;
        const auto x = torch::randn({100, k}, generator, torch::kFloat32);
        const auto run = [&](std::int64_t first, std::int64_t m) { return ops::project(x.narrow(0, first, m), w); };
        if (!rowsStandAlone(run, 100, {0, 31, 32, 57, 99}, type)) return;
        dragoman::WeightTable table{
            {"proj.weight", w}, {"proj.weight_scale", torch::rand({n, 1}) * 0.01 + 0.001}, {"proj.bias", torch::randn({n})}};
        dragoman::WeightBinder binder(table);
        const dragoman::Linear layer(binder, "proj.", n, k, true);
        binder.finish("scaled");
        QVERIFY(layer.rowStable());
        const auto rows = layer(x);
        QVERIFY(torch::equal(layer(x.narrow(0, 57, 1))[0], rows[57]));
    }
}

// The fused projections of a decoding step (Linear::many): each output exactly what the kernel gives it alone, int8
// and FP8 matrices in one call.
void TestKernels::eightBitDotStepsGemvManyEqualsSeparateProducts() {
    if (!kernels::eightBitDotSteps()) QSKIP("no AVX512-BF16 with AVX512-VBMI on this CPU (or turned off)");
    auto generator = at::detail::createCPUGenerator(57);
    for (std::int64_t k : {40, 2048}) {
        const std::vector<std::int64_t> heights{130, 1, 96, 7, 600};
        const auto x = torch::randn({1, k}, generator, torch::kFloat32);
        std::vector<torch::Tensor> weights, outputs;
        std::vector<kernels::GemvOutput> targets;
        for (std::size_t i = 0; i < heights.size(); ++i) {
            const auto type = i % 2 ? kernels::WeightType::I8 : kernels::WeightType::FP8;
            // Codes starting at different places in a line.
            weights.push_back(atLineOffset(eightBitWeights(i % 2 ? "int8" : "fp8", heights[i], k, generator).first, (8 * i) % 64 + i % 2));
            outputs.push_back(torch::full({heights[i]}, std::nanf(""), torch::kFloat32));
            targets.push_back({weights.back().data_ptr(), type, outputs.back().data_ptr<float>(), heights[i]});
        }
        kernels::eightBitDotStepsGemvMany(x.data_ptr<float>(), targets.data(), targets.size(), k);
        for (std::size_t i = 0; i < heights.size(); ++i) {
            auto alone = torch::full({heights[i]}, std::nanf(""), torch::kFloat32);
            kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>(), weights[i].data_ptr(), targets[i].type, alone.data_ptr<float>(),
                                                      1, heights[i], k);
            QVERIFY2(torch::equal(outputs[i], alone), qPrintable(QString("k=%1 output %2").arg(k).arg(i)));
        }
    }
}

// int8 steps' digit planes at their edges: a zero row gives zeros, a row with a NaN or an infinity NaN everywhere (as
// float products would give NaN or infinities), a row spanning 1e30 to 1e-30 and one of values below 1e-33
// (subnormals among them, where the factor to integers passes float's range) stay within the fixed point's bound, and
// K = 20000 of -128 codes against the largest activation (every digit plane's integer sums at their largest) is exact.
void TestKernels::int8StepsTakeExtremeRows() {
    if (!kernels::eightBitDotSteps()) QSKIP("no AVX512-BF16 with AVX512-VBMI on this CPU (or turned off)");
    auto generator = at::detail::createCPUGenerator(63);
    const std::int64_t n = 9, k = 100;
    const auto [w, exact] = eightBitWeights("int8", n, k, generator);
    auto x = torch::randn({6, k}, generator, torch::kFloat32);
    x[0].zero_();
    x[1][7] = std::nanf("");
    x[2][99] = -std::numeric_limits<float>::infinity();
    x[3] = torch::logspace(-30, 30, k, 10.0, torch::kFloat32) * (torch::randint(0, 2, {k}, generator, torch::kFloat32) * 2 - 1);
    x[5] = torch::randn({k}, generator, torch::kFloat32) * 1e-33f;
    x[5][3] = 1e-40f;  // subnormal
    auto y = torch::full({6, n}, 7.0f, torch::kFloat32);
    kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>(), w.data_ptr(), kernels::WeightType::I8, y.data_ptr<float>(), 6, n, k);
    QVERIFY(torch::equal(y[0], torch::zeros({n})));
    QVERIFY(y[1].isnan().all().item<bool>());
    QVERIFY(y[2].isnan().all().item<bool>());
    const auto expected = reference(x[3].unsqueeze(0), exact)[0];
    const double bound = 1e30 / 8355000 * exact.abs().sum(1).max().item<double>() + expected.abs().max().item<double>() * 6e-8;
    QVERIFY2((y[3].to(torch::kFloat64) - expected).abs().max().item<double>() < bound, "dynamic range");
    const auto tiny = reference(x[5].unsqueeze(0), exact)[0];
    const double tinyBound =
        x[5].abs().max().item<double>() / 8355000 * exact.abs().sum(1).max().item<double>() + tiny.abs().max().item<double>() * 6e-8;
    QVERIFY2((y[5].to(torch::kFloat64) - tiny).abs().max().item<double>() < tinyBound, "values below 1e-33");
    QVERIFY(y[5].abs().max().item<float>() > 0.0f);
    const auto rest = reference(x[4].unsqueeze(0), exact)[0];
    QVERIFY((y[4].to(torch::kFloat64) - rest).abs().max().item<double>() < 1e-3);  // the other rows untouched by these

    const std::int64_t longK = 20000;
    const auto lowest = torch::full({2, longK}, -128, torch::kInt8);
    const auto largest = torch::ones({1, longK}, torch::kFloat32);
    auto sums = torch::zeros({1, 2}, torch::kFloat32);
    kernels::eightBitDotStepsMatmulTransposed(largest.data_ptr<float>(), lowest.data_ptr(), kernels::WeightType::I8, sums.data_ptr<float>(),
                                              1, 2, longK);
    QVERIFY(torch::equal(sums, torch::full({1, 2}, -128.0f * longK)));
}

// ops::project for 8-bit weights of a bf16 model: a decoding step's rows take the step kernels (FP8 byte tables, int8
// digit planes) where they are used; a float32 model's 8-bit weights keep the float32-activation kernel (exact to
// their twins).
void TestKernels::eightBitStepsOfBf16ModelsTakeTheStepKernels() {
    auto generator = at::detail::createCPUGenerator(59);
    const std::int64_t n = 130, k = 1032;
    for (const QString type : {"int8", "fp8"}) {
        const auto w = eightBitWeights(type, n, k, generator).first;
        for (std::int64_t m : {1, 8, 16}) {
            const auto x = torch::randn({m, k}, generator, torch::kFloat32);
            const auto bf16Model = ops::project(x, w, true);
            auto expected = ops::project(x, w, false);
            if (kernels::eightBitDotSteps())
                kernels::eightBitDotStepsMatmulTransposed(x.data_ptr<float>(), w.data_ptr(),
                                                          type == "int8" ? kernels::WeightType::I8 : kernels::WeightType::FP8,
                                                          expected.data_ptr<float>(), m, n, k);
            QVERIFY2(torch::equal(bf16Model, expected), qPrintable(QString("%1 m=%2").arg(type).arg(m)));
        }
    }
}

void TestKernels::promptKernelIsNamed() {
    const auto name = kernels::promptKernelName();
    QCOMPARE(name.rfind("onednn", 0) == 0, kernels::onednnBf16Ready());
    QCOMPARE(name.rfind("avx512-bf16", 0) == 0, kernels::bf16DotProducts());
    const bool packed = !kernels::onednnBf16Ready() && !kernels::bf16DotProducts();
    QCOMPARE(name == "avx512 packed", packed && kernels::hasAvx512());
    QCOMPARE(name == "avx2 packed", packed && kernels::hasAvx2() && !kernels::hasAvx512());
}

void TestKernels::projectMatchesReference_data() {
    QTest::addColumn<int>("m");
    QTest::addColumn<int>("k");
    // ops::project picks the engine's dot-product tiles for a few rows and the packed GEMM from 32 rows on (on
    // a CPU without AVX2: widened blocks through OpenBLAS from 96 rows); K = 20 is not a multiple of 8.
    for (int m : {1, 31, 32, 40, 96, 130})
        for (int k : {20, 1032})
            QTest::addRow("m%d_k%d", m, k) << m << k;
}

void TestKernels::projectMatchesReference() {
    QFETCH(int, m);
    QFETCH(int, k);
    const auto w = randomWeights(1100, k, 5);  // more than one widened block of 1024 rows
    const auto x = torch::randn({m, k}, at::detail::createCPUGenerator(13), torch::kFloat32);
    const auto got = ops::project(x, w);
    QCOMPARE(got.sizes(), (std::vector<std::int64_t>{m, 1100}));
    const double error = (got.to(torch::kFloat64) - reference(x, w)).abs().max().item<double>();
    QVERIFY2(error < tolerance(k), qPrintable(QString("max error %1").arg(error)));
    // A bf16 model's rows take the AVX512-BF16 kernel where it is used, decoding steps too: bf16 activations
    // (bf16_dot_gemm.h).
    const auto bf16Model = ops::project(x, w, true);
    const bool bf16Activations = kernels::bf16DotProducts();
    const double bf16Error =
        (bf16Model.to(torch::kFloat64) - reference(bf16Activations ? x.to(torch::kBFloat16) : x, w)).abs().max().item<double>();
    QVERIFY2(bf16Error < tolerance(k), qPrintable(QString("bf16 model: max error %1").arg(bf16Error)));
}

void TestKernels::widenIsExact() {
    const auto w = randomWeights(1, 100003, 5).flatten();  // odd length: a scalar tail after 8-wide steps
    auto out = torch::empty({w.numel()}, torch::kFloat32);
    kernels::widenBf16(reinterpret_cast<const std::uint16_t*>(w.data_ptr<at::BFloat16>()), out.data_ptr<float>(), w.numel());
    QVERIFY(torch::equal(out, w.to(torch::kFloat32)));
}

void TestKernels::attentionMatchesReference_data() {
    QTest::addColumn<int>("batch");
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("length");
    QTest::addColumn<bool>("sharedCache");
    QTest::addColumn<int>("headDim");
    // Beams over a shared cross-attention cache, grouped-query heads (HunYuan: 16 over 4), head sizes with
    // and without an 8-wide tail, and a cache long enough to go to the thread pool.
    QTest::newRow("greedy self") << 1 << 8 << 8 << 1 << false << 64;
    QTest::newRow("beams self") << 4 << 8 << 8 << 37 << false << 64;
    QTest::newRow("beams shared cross") << 4 << 8 << 8 << 23 << true << 64;
    QTest::newRow("short, many requests") << 16 << 6 << 6 << 12 << false << 64;  // the bundled model's batched step
    QTest::newRow("grouped") << 1 << 16 << 4 << 50 << false << 128;
    QTest::newRow("odd head size") << 2 << 3 << 1 << 9 << false << 20;
    QTest::newRow("long, parallel") << 1 << 16 << 4 << 700 << false << 128;
}

// One head of a decoding step in the order of the AVX2 kernel (dotAvx2: two 8-lane partial sums, then sum8's
// tree; one multiply-add per output value per cached row), in plain C++, for head sizes in multiples of 16: the
// AVX-512 head kernel must give these very bits.
static std::vector<float> attendHeadInKernelOrder(const float* q, const float* k, std::int64_t kStride, const float* v,
                                                  std::int64_t vStride, std::int64_t length, std::int64_t headDim, float scale) {
    const auto sum8 = [](const float* s) {
        const float t0 = s[0] + s[4], t1 = s[1] + s[5], t2 = s[2] + s[6], t3 = s[3] + s[7];
        return (t0 + t2) + (t1 + t3);
    };
    std::vector<float> weights(static_cast<std::size_t>(length)), o(static_cast<std::size_t>(headDim), 0.0f);
    float maximum = -std::numeric_limits<float>::infinity();
    for (std::int64_t t = 0; t < length; ++t) {
        const float* kt = k + t * kStride;
        float lanes[16] = {};
        for (std::int64_t i = 0; i + 16 <= headDim; i += 16)
            for (int l = 0; l < 16; ++l)
                lanes[l] = std::fma(q[i + l], kt[i + l], lanes[l]);
        float both[8];
        for (int l = 0; l < 8; ++l)
            both[l] = lanes[l] + lanes[l + 8];
        weights[t] = sum8(both) * scale;
        maximum = std::max(maximum, weights[t]);
    }
    float sum = 0;
    for (std::int64_t t = 0; t < length; ++t)
        sum += (weights[t] = std::exp(weights[t] - maximum));
    const float inverse = 1.0f / sum;
    for (std::int64_t t = 0; t < length; ++t)
        for (std::int64_t j = 0; j < headDim; ++j)
            o[j] = std::fma(weights[t] * inverse, v[t * vStride + j], o[j]);
    return o;
}

void TestKernels::attentionMatchesReference() {
    QFETCH(int, batch);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, length);
    QFETCH(bool, sharedCache);
    QFETCH(int, headDim);
    auto generator = at::detail::createCPUGenerator(17);
    const int cacheBatch = sharedCache ? 1 : batch;
    // Caches with spare capacity, as a decoder's preallocated ones: only `length` rows are attended.
    const auto keys = torch::randn({cacheBatch, kvHeads, length + 5, headDim}, generator).narrow(2, 0, length);
    const auto values = torch::randn({cacheBatch, kvHeads, length + 5, headDim}, generator).narrow(2, 0, length);
    const auto queries = torch::randn({batch, heads * headDim}, generator);
    const auto got = attention::oneQuery(queries, keys, values, heads);

    const auto group = heads / kvHeads;
    const auto q = queries.to(torch::kFloat64).view({batch, heads, 1, headDim});
    const auto k = keys.to(torch::kFloat64).repeat_interleave(group, 1).expand({batch, heads, length, headDim});
    const auto v = values.to(torch::kFloat64).repeat_interleave(group, 1).expand({batch, heads, length, headDim});
    const auto weights = torch::softmax(torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(headDim)), -1);
    const auto expected = torch::matmul(weights, v).view({batch, heads * headDim});
    const double error = (got.to(torch::kFloat64) - expected).abs().max().item<double>();
    QVERIFY2(error < 1e-5, qPrintable(QString("max error %1").arg(error)));

    // Bit for bit the kernel's own order, whichever instruction set ran it, where every operation is an explicit
    // vector one (a scalar tail may be contracted into a multiply-add or not, as the compiler likes).
    if (headDim % 16 != 0) return;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)));
    for (int b = 0; b < batch; ++b) {
        for (int h = 0; h < heads; ++h) {
            const auto kv = h / group;
            const auto keyRows = keys.select(0, sharedCache ? 0 : b).select(0, kv),
                       valueRows = values.select(0, sharedCache ? 0 : b).select(0, kv);
            const auto want =
                attendHeadInKernelOrder(queries.data_ptr<float>() + (b * heads + h) * headDim, keyRows.data_ptr<float>(), keyRows.stride(0),
                                        valueRows.data_ptr<float>(), valueRows.stride(0), length, headDim, scale);
            const float* have = got.data_ptr<float>() + (b * heads + h) * headDim;
            for (int j = 0; j < headDim; ++j)
                QVERIFY2(have[j] == want[static_cast<std::size_t>(j)],
                         qPrintable(QString("batch %1 head %2 value %3: %4 against %5").arg(b).arg(h).arg(j).arg(have[j]).arg(want[j])));
        }
    }
}

void TestKernels::attentionAppendsTheStep_data() {
    QTest::addColumn<QList<int>>("batches");  // hypotheses per request
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("length");  // cached rows after the step
    QTest::newRow("one request, first step") << QList<int>{1} << 6 << 6 << 1;
    QTest::newRow("the bundled model's batched step") << QList<int>(16, 1) << 6 << 6 << 14;
    QTest::newRow("beams and greedy") << QList<int>{4, 1, 2} << 8 << 8 << 9;
    QTest::newRow("grouped, parallel") << QList<int>{2, 3} << 16 << 4 << 300;
}

// A step's new keys and values stored by the attention itself (KvAppend): the caches afterwards hold them at the last
// position, and every row attends as it does over caches filled beforehand, bit for bit.
void TestKernels::attentionAppendsTheStep() {
    QFETCH(QList<int>, batches);
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, length);
    constexpr int headDim = 64, capacity = 320;
    auto generator = at::detail::createCPUGenerator(41);
    int rows = 0;
    for (const int b : batches)
        rows += b;
    const auto queries = torch::randn({rows, heads * headDim}, generator);
    const auto newKeys = torch::randn({rows, kvHeads * headDim}, generator), newValues = torch::randn({rows, kvHeads * headDim}, generator);
    std::vector<torch::Tensor> filledKeys, filledValues, appendedKeys, appendedValues;
    std::vector<kernels::AttentionRequest> filled, appended;
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)));
    for (int r = 0, row = 0; r < batches.size(); row += batches[r++]) {
        const int batch = batches[r];
        // [batch, kvHeads, capacity, headDim] as a decoder's caches; the appending ones poisoned at the new position.
        auto keys = torch::randn({batch, kvHeads, capacity, headDim}, generator),
             values = torch::randn({batch, kvHeads, capacity, headDim}, generator);
        appendedKeys.push_back(keys.clone());
        appendedValues.push_back(values.clone());
        appendedKeys.back().select(2, length - 1).fill_(std::numeric_limits<float>::quiet_NaN());
        appendedValues.back().select(2, length - 1).fill_(std::numeric_limits<float>::quiet_NaN());
        keys.select(2, length - 1).copy_(newKeys.narrow(0, row, batch).view({batch, kvHeads, headDim}));
        values.select(2, length - 1).copy_(newValues.narrow(0, row, batch).view({batch, kvHeads, headDim}));
        filledKeys.push_back(keys);
        filledValues.push_back(values);
        const auto layout = [&](const torch::Tensor& t) {
            return kernels::KvLayout{t.data_ptr<float>(), t.stride(0), t.stride(1), t.stride(2)};
        };
        filled.push_back({layout(keys), layout(values), batch, length});
        auto& ak = appendedKeys.back();
        auto& av = appendedValues.back();
        appended.push_back({layout(ak),
                            layout(av),
                            batch,
                            length,
                            {newKeys.data_ptr<float>() + row * kvHeads * headDim, newValues.data_ptr<float>() + row * kvHeads * headDim,
                             kvHeads * headDim, ak.data_ptr<float>(), av.data_ptr<float>()}});
    }
    auto want = torch::empty({rows, heads * headDim}), got = torch::empty({rows, heads * headDim});
    kernels::attendOneQueryEach(queries.data_ptr<float>(), filled.data(), static_cast<std::int64_t>(filled.size()), want.data_ptr<float>(),
                                heads, heads / kvHeads, headDim, scale);
    kernels::attendOneQueryEach(queries.data_ptr<float>(), appended.data(), static_cast<std::int64_t>(appended.size()),
                                got.data_ptr<float>(), heads, heads / kvHeads, headDim, scale);
    QVERIFY(torch::equal(got, want));
    for (std::size_t r = 0; r < filled.size(); ++r) {
        QVERIFY(torch::equal(appendedKeys[r], filledKeys[r]));
        QVERIFY(torch::equal(appendedValues[r], filledValues[r]));
    }
}

void TestKernels::causalPromptMatchesReference_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kvHeads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<int>("start");
    QTest::addColumn<int>("rows");
    // HY-MT 1.8B's heads (16 over 4, 128 wide) on a 40- and a 300-row prompt, a prompt after cached tokens (a
    // conversation's next turn), ordinary multi-head attention, one key/value head for all, a 256-wide head (two
    // passes of the weighted sum), the tiny fixtures' 16-wide heads, and one row (an odd query left in its tile).
    QTest::newRow("hy-mt, 40 rows") << 16 << 4 << 128 << 0 << 40;
    QTest::newRow("hy-mt, 300 rows") << 16 << 4 << 128 << 0 << 300;
    QTest::newRow("after 77 cached") << 16 << 4 << 128 << 77 << 21;
    QTest::newRow("multi-head") << 6 << 6 << 64 << 3 << 19;
    QTest::newRow("one kv head") << 12 << 1 << 32 << 0 << 9;
    QTest::newRow("256 wide") << 4 << 2 << 256 << 5 << 11;
    QTest::newRow("tiny fixture") << 4 << 2 << 16 << 0 << 7;
    QTest::newRow("one row") << 3 << 1 << 48 << 30 << 1;
}

// The prompt kernel against float64 attention with a causal mask, and each row against itself computed alone (its
// numbers do not depend on the rows computed with it).
void TestKernels::causalPromptMatchesReference() {
    QFETCH(int, heads);
    QFETCH(int, kvHeads);
    QFETCH(int, headDim);
    QFETCH(int, start);
    QFETCH(int, rows);
    if (!kernels::causalAttentionKernel(headDim)) QSKIP("no AVX-512 here: prompts take libtorch's operations");
    auto generator = at::detail::createCPUGenerator(29);
    const int total = start + rows, capacity = total + 9;
    // A decoder's cache: spare capacity past the rows, poisoned so a read past a row's last key shows.
    auto keys = torch::full({kvHeads, capacity, headDim}, std::numeric_limits<float>::quiet_NaN());
    auto values = keys.clone();
    keys.narrow(1, 0, total).copy_(torch::randn({kvHeads, total, headDim}, generator) * 2);
    values.narrow(1, 0, total).copy_(torch::randn({kvHeads, total, headDim}, generator));
    const auto queries = torch::randn({heads, rows, headDim}, generator) * 2;
    const auto attend = [&](std::int64_t first, std::int64_t count) {
        const auto q = queries.narrow(1, first, count).contiguous();
        auto out = torch::empty({count, heads * headDim});
        kernels::attendCausal({q.data_ptr<float>(), q.stride(0), q.stride(1)}, {keys.data_ptr<float>(), 0, keys.stride(0), keys.stride(1)},
                              {values.data_ptr<float>(), 0, values.stride(0), values.stride(1)}, out.data_ptr<float>(), count,
                              start + first, heads, heads / kvHeads, headDim, static_cast<float>(1.0 / std::sqrt(headDim)));
        return out;
    };
    const auto got = attend(0, rows);

    const auto group = heads / kvHeads;
    const auto k = keys.narrow(1, 0, total).to(torch::kFloat64).repeat_interleave(group, 0);
    const auto v = values.narrow(1, 0, total).to(torch::kFloat64).repeat_interleave(group, 0);
    const auto mask = attention::causalMask(start, rows, total).to(torch::kFloat64);
    const auto scores = torch::matmul(queries.to(torch::kFloat64), k.transpose(-1, -2)) / std::sqrt(static_cast<double>(headDim)) + mask;
    const auto expected = torch::matmul(torch::softmax(scores, -1), v).transpose(0, 1).reshape({rows, heads * headDim});
    const double error = (got.to(torch::kFloat64) - expected).abs().max().item<double>();
    QVERIFY2(error < 1e-5, qPrintable(QString("max error %1").arg(error)));
    for (int i = 0; i < rows; i += std::max(1, rows / 7))
        QVERIFY2(torch::equal(attend(i, 1), got.narrow(0, i, 1)), qPrintable(QString("row %1 alone differs").arg(i)));
}

void TestKernels::encoderAttentionMatchesReference_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("headDim");
    QTest::addColumn<QList<int>>("lengths");
    // An encoder's stacked sources: short ones (the decoding kernel) between long ones (past kKernelRows: the prompt
    // kernel unmasked where it runs), OPUS-MT's 8 heads of 64, the fixtures' 16-wide heads, and one long source alone.
    QTest::newRow("opus-mt, mixed") << 8 << 64 << QList<int>{70, 5, 130, 64, 65, 3};
    QTest::newRow("fixture heads") << 4 << 16 << QList<int>{2, 97, 1};
    QTest::newRow("one long source") << 8 << 64 << QList<int>{300};
}

// attention::withinEach against float64 attention over each source alone, and each source's rows the same whatever
// sources are stacked with it.
void TestKernels::encoderAttentionMatchesReference() {
    QFETCH(int, heads);
    QFETCH(int, headDim);
    QFETCH(QList<int>, lengths);
    auto generator = at::detail::createCPUGenerator(31);
    std::vector<std::int64_t> sizes(lengths.begin(), lengths.end());
    const auto total = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
    const auto width = heads * headDim;
    const auto q = torch::randn({total, width}, generator) * 2, k = torch::randn({total, width}, generator) * 2,
               v = torch::randn({total, width}, generator);
    const auto got = attention::withinEach(q, k, v, sizes, heads);
    std::int64_t offset = 0;
    for (const auto length : sizes) {
        const auto part = [&](const torch::Tensor& t) {
            return t.narrow(0, offset, length).to(torch::kFloat64).view({length, heads, headDim}).transpose(0, 1);
        };
        const auto scores = torch::matmul(part(q), part(k).transpose(-1, -2)) / std::sqrt(static_cast<double>(headDim));
        const auto expected = torch::matmul(torch::softmax(scores, -1), part(v)).transpose(0, 1).reshape({length, width});
        const auto mine = got.narrow(0, offset, length);
        const double error = (mine.to(torch::kFloat64) - expected).abs().max().item<double>();
        QVERIFY2(error < 1e-5, qPrintable(QString("source of %1 rows: max error %2").arg(length).arg(error)));
        const auto alone =
            attention::withinEach(q.narrow(0, offset, length), k.narrow(0, offset, length), v.narrow(0, offset, length), {length}, heads);
        QVERIFY2(torch::equal(alone, mine), qPrintable(QString("source of %1 rows differs alone").arg(length)));
        offset += length;
    }
}

// layer_norm.h's statistics: eight double partial sums (value i in sum i mod 8) added in a fixed order, the
// normalized value rounded to float32 before the weight's multiply and the bias's add.
torch::Tensor addLayerNormSpecification(const torch::Tensor& x, const torch::Tensor& h, const torch::Tensor& weight,
                                        const torch::Tensor& bias, double eps) {
    const auto sum = (x + h).contiguous();
    auto out = torch::empty_like(sum);
    const auto d = sum.size(1);
    const auto total = [](const double* s) { return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])); };
    for (std::int64_t r = 0; r < sum.size(0); ++r) {
        const float* o = sum.data_ptr<float>() + r * d;
        double sums[8] = {}, squares[8] = {};
        for (std::int64_t i = 0; i < d; ++i)
            sums[i % 8] += o[i];
        const double mean = total(sums) / static_cast<double>(d);
        for (std::int64_t i = 0; i < d; ++i) {
            const double centered = o[i] - mean;
            const double square = centered * centered;
            squares[i % 8] += square;
        }
        const double rstd = 1.0 / std::sqrt(total(squares) / static_cast<double>(d) + eps);
        for (std::int64_t i = 0; i < d; ++i) {
            const float normed = static_cast<float>((o[i] - mean) * rstd);
            const float scaled = normed * weight.data_ptr<float>()[i];
            out.data_ptr<float>()[r * d + i] = scaled + bias.data_ptr<float>()[i];
        }
    }
    return out;
}

// Within float32 of libtorch's float64 layer norm, and the same bits on the AVX-512 and portable paths
// (tst_kernels_avx2 runs the latter): the specification above.
void TestKernels::addLayerNormMatchesLibtorch() {
    auto generator = at::detail::createCPUGenerator(23);
    for (std::int64_t d : {7, 13, 256, 385, 512}) {
        const auto x = torch::randn({3, d}, generator) * 4 + 1, h = torch::randn({3, d}, generator);
        const auto weight = torch::randn({d}, generator), bias = torch::randn({d}, generator);
        auto out = torch::empty_like(x);
        kernels::addLayerNorm(x.data_ptr<float>(), h.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                              out.data_ptr<float>(), 3, d, 1e-5);
        const auto expected =
            torch::layer_norm((x + h).to(torch::kFloat64), {d}, weight.to(torch::kFloat64), bias.to(torch::kFloat64), 1e-5);
        const double error = (out.to(torch::kFloat64) - expected).abs().max().item<double>();
        QVERIFY2(error < 1e-5, qPrintable(QString("d=%1: max error %2").arg(d).arg(error)));
        QVERIFY2(torch::equal(out, addLayerNormSpecification(x, h, weight, bias, 1e-5)), qPrintable(QString("d=%1").arg(d)));
        // In place, as a decoding step may use it.
        auto inPlace = x.clone();
        kernels::addLayerNorm(inPlace.data_ptr<float>(), h.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(),
                              inPlace.data_ptr<float>(), 3, d, 1e-5);
        QVERIFY(torch::equal(inPlace, out));
    }
}

// Work between oneDNN products runs on OpenMP's team (libgomp, loaded with libtorch): one part per kernel thread,
// each once, on different threads.
void TestKernels::openMpTeamRunsEveryPartOnce() {
    const int threads = configureThreads();
    std::mutex mutex;
    std::vector<std::pair<int, int>> seen;
    std::set<std::thread::id> ids;
    onOpenMpTeam([&](int part, int parts) {
        std::lock_guard lock(mutex);
        seen.emplace_back(part, parts);
        ids.insert(std::this_thread::get_id());
    });
    if (!::dlsym(RTLD_DEFAULT, "GOMP_parallel") || threads <= 1) {
        QCOMPARE(seen, (std::vector<std::pair<int, int>>{{0, 1}}));
        return;
    }
    std::sort(seen.begin(), seen.end());
    QCOMPARE(static_cast<int>(seen.size()), threads);
    for (int i = 0; i < threads; ++i)
        QCOMPARE(seen[static_cast<std::size_t>(i)], std::make_pair(i, threads));
    QCOMPARE(static_cast<int>(ids.size()), threads);
}

void TestKernels::parallelForCoversEveryIndexOnce_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qint64>("count");
    QTest::addColumn<qint64>("grain");
    QTest::addColumn<QString>("slow");  // whose chunks take a millisecond each: "workers", "caller" or nobody's
    QTest::newRow("empty") << 2 << qint64(0) << qint64(64) << QString();
    QTest::newRow("one chunk, run inline") << 2 << qint64(64) << qint64(64) << QString();
    QTest::newRow("tail chunk") << 2 << qint64(1000) << qint64(64) << QString();
    QTest::newRow("grain 1") << 2 << qint64(17) << qint64(1) << QString();
    QTest::newRow("more threads than chunks") << 4 << qint64(130) << qint64(64) << QString();
    QTest::newRow("many chunks, 3 threads") << 3 << qint64(12081) << qint64(64) << QString();
    QTest::newRow("single thread") << 1 << qint64(500) << qint64(7) << QString();
    QTest::newRow("slow workers, 2 threads") << 2 << qint64(256) << qint64(64) << QString("workers");
    QTest::newRow("slow workers, more threads than cores") << 6 << qint64(1000) << qint64(16) << QString("workers");
    QTest::newRow("slow caller, 2 threads") << 2 << qint64(256) << qint64(16) << QString("caller");
    QTest::newRow("slow caller, 3 threads, uneven runs") << 3 << qint64(100) << qint64(7) << QString("caller");
}

// Each thread has a run of chunks and the others take what is left of it: each index must still be visited exactly
// once, whoever is slow, chunks start on a multiple of the grain, and a pool must serve many calls in a row (a
// decoding step makes hundreds). The caller returns only when every chunk is done, however late a worker's chunk
// ends, and after it returns no worker touches the call's data (each call's counters go out of scope at once; ASan
// builds run this too).
void TestKernels::parallelForCoversEveryIndexOnce() {
    QFETCH(int, threads);
    QFETCH(qint64, count);
    QFETCH(qint64, grain);
    QFETCH(QString, slow);
    ThreadPool pool(threads);
    const auto caller = std::this_thread::get_id();
    for (int call = 0; call < 50; ++call) {
        std::vector<std::atomic<int>> visits(static_cast<std::size_t>(count));
        std::atomic<bool> misaligned{false}, tooLong{false};
        pool.parallelFor(count, grain, [&](std::int64_t begin, std::int64_t end) {
            const bool isCaller = std::this_thread::get_id() == caller;
            if ((slow == "workers" && !isCaller) || (slow == "caller" && isCaller))
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (begin % grain != 0) misaligned = true;
            if (end - begin > grain && threads > 1) tooLong = true;  // one thread runs the range inline
            for (std::int64_t i = begin; i < end; ++i)
                visits[static_cast<std::size_t>(i)].fetch_add(1);
        });
        QVERIFY(!misaligned);
        QVERIFY(!tooLong);
        for (std::int64_t i = 0; i < count; ++i)
            QVERIFY2(visits[static_cast<std::size_t>(i)].load() == 1,
                     qPrintable(QString("call %1, index %2 visited %3 times").arg(call).arg(i).arg(visits[i].load())));
    }
}

void TestKernels::parallelForGivesEachThreadItsRun_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qint64>("count");
    QTest::addColumn<qint64>("grain");
    QTest::addColumn<QList<qint64>>("starts");  // where each thread's run starts: the caller's, then the workers'
    QTest::newRow("2 threads, grain 1") << 2 << qint64(251) << qint64(1) << QList<qint64>{0, 126};
    QTest::newRow("2 threads, grain 64") << 2 << qint64(1000) << qint64(64) << QList<qint64>{0, 512};
    QTest::newRow("3 threads") << 3 << qint64(96) << qint64(4) << QList<qint64>{0, 32, 64};
    QTest::newRow("4 threads, uneven") << 4 << qint64(10) << qint64(1) << QList<qint64>{0, 3, 5, 8};
}

// Each thread starts at its own run of consecutive chunks (the caller at the first), the same run at every call: a
// product repeated with the same shape (each layer at each decoding step) gives each core the same weights, which
// stay in its caches. Every thread holds its first chunk until all have taken theirs, so none has run out of work
// and taken another's.
void TestKernels::parallelForGivesEachThreadItsRun() {
    QFETCH(int, threads);
    QFETCH(qint64, count);
    QFETCH(qint64, grain);
    QFETCH(QList<qint64>, starts);
    ThreadPool pool(threads);
    const auto caller = std::this_thread::get_id();
    std::map<std::thread::id, std::int64_t> firstBefore;
    for (int call = 0; call < 3; ++call) {
        std::mutex mutex;
        std::condition_variable allStarted;
        std::map<std::thread::id, std::int64_t> first;
        bool timedOut = false;
        pool.parallelFor(count, grain, [&](std::int64_t begin, std::int64_t) {
            std::unique_lock lock(mutex);
            if (!first.emplace(std::this_thread::get_id(), begin).second) return;
            allStarted.notify_all();
            if (!allStarted.wait_for(lock, std::chrono::seconds(10), [&] { return static_cast<int>(first.size()) == threads; }))
                timedOut = true;
        });
        QVERIFY2(!timedOut, "a worker never took a chunk");
        QCOMPARE(first.at(caller), starts.front());
        QList<qint64> got;
        for (const auto& [thread, begin] : first)
            got.push_back(begin);
        std::sort(got.begin(), got.end());
        QCOMPARE(got, starts);
        if (call > 0) QCOMPARE(first, firstBefore);  // the same thread, the same run
        firstBefore = first;
    }
}

void TestKernels::parallelForRethrowsWhatAChunkThrows_data() {
    QTest::addColumn<int>("threads");
    QTest::addColumn<qint64>("throwing");  // the chunk that throws, of 64 (grain 1)
    QTest::newRow("the caller's first chunk") << 2 << qint64(0);
    QTest::newRow("a worker's last chunk") << 2 << qint64(63);
    QTest::newRow("the middle, 3 threads") << 3 << qint64(30);
    QTest::newRow("the middle, more threads than cores") << 6 << qint64(30);
}

// A chunk's exception comes out of parallelFor on the caller's thread, whichever thread ran the chunk, after every
// chunk under way has ended (none runs after the call returns, none runs twice), and the pool serves the next call.
void TestKernels::parallelForRethrowsWhatAChunkThrows() {
    QFETCH(int, threads);
    QFETCH(qint64, throwing);
    ThreadPool pool(threads);
    for (int call = 0; call < 20; ++call) {
        std::vector<std::atomic<int>> runs(64);
        std::atomic<int> running{0};
        std::atomic<bool> afterReturn{false};
        std::atomic<bool> returned{false};
        try {
            pool.parallelFor(64, 1, [&](std::int64_t begin, std::int64_t) {
                running.fetch_add(1);
                runs[static_cast<std::size_t>(begin)].fetch_add(1);
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                if (returned) afterReturn = true;
                running.fetch_sub(1);
                if (begin == throwing) throw std::runtime_error("chunk " + std::to_string(begin));
            });
            QFAIL("no exception came out");
        } catch (const std::runtime_error& e) {
            returned = true;
            QCOMPARE(std::string(e.what()), "chunk " + std::to_string(throwing));
        }
        QCOMPARE(running.load(), 0);
        QVERIFY(!afterReturn);
        QCOMPARE(runs[static_cast<std::size_t>(throwing)].load(), 1);
        for (const auto& r : runs)
            QVERIFY(r.load() <= 1);
        std::vector<std::atomic<int>> visits(100);
        pool.parallelFor(100, 3, [&](std::int64_t begin, std::int64_t end) {
            for (auto i = begin; i < end; ++i)
                visits[static_cast<std::size_t>(i)].fetch_add(1);
        });
        for (const auto& v : visits)
            QCOMPARE(v.load(), 1);
    }
}

void TestKernels::rowsSplitIntoEvenParts_data() {
    QTest::addColumn<QList<qint64>>("rows");  // per sequence
    QTest::addColumn<qint64>("parts");
    QTest::addColumn<qint64>("least");
    QTest::addColumn<QList<qint64>>("bounds");  // empty: no split
    QTest::newRow("sixteen requests, two threads") << QList<qint64>(16, 1) << qint64(2) << qint64(4) << QList<qint64>{0, 8, 16};
    QTest::newRow("uneven sources") << QList<qint64>{13, 5, 30, 7, 9} << qint64(2) << qint64(4) << QList<qint64>{0, 2, 5};
    QTest::newRow("beams kept together") << QList<qint64>{4, 4, 4} << qint64(2) << qint64(4) << QList<qint64>{0, 1, 3};
    QTest::newRow("three parts") << QList<qint64>(12, 1) << qint64(3) << qint64(4) << QList<qint64>{0, 4, 8, 12};
    QTest::newRow("one long source") << QList<qint64>{90} << qint64(2) << qint64(4) << QList<qint64>{};
    QTest::newRow("too few rows a part") << QList<qint64>(6, 1) << qint64(2) << qint64(4) << QList<qint64>{};
    QTest::newRow("a part would be short") << QList<qint64>{40, 2} << qint64(2) << qint64(4) << QList<qint64>{};
    QTest::newRow("one part") << QList<qint64>{3, 2} << qint64(1) << qint64(4) << QList<qint64>{0, 2};
}

// Parts of consecutive sequences, about equal in rows, none under the least; no split where that cannot be.
// A thread's line feed gives its ranges' lines out in order, a contiguous run at a time (never across two ranges),
// a range's last line even where it is partly the range's; reset() drops what is left.
void TestKernels::lineFeedHandsOutItsRangesInOrder() {
    std::vector<char> memory(4096);
    auto& feed = kernels::threadLineFeed();
    feed.reset();
    feed.add(memory.data(), 200);         // 4 lines, the last partly
    feed.add(memory.data() + 1024, 0);    // nothing
    feed.add(memory.data() + 2048, 640);  // 10 lines
    const auto run = [&](std::int64_t lines) {
        const auto [start, count] = feed.take(lines);
        return std::pair<std::ptrdiff_t, std::int64_t>{start ? start - memory.data() : -1, count};
    };
    QCOMPARE(run(3), (std::pair<std::ptrdiff_t, std::int64_t>{0, 3}));
    QCOMPARE(run(3), (std::pair<std::ptrdiff_t, std::int64_t>{192, 1}));
    QCOMPARE(run(6), (std::pair<std::ptrdiff_t, std::int64_t>{2048, 6}));
    QCOMPARE(run(0), (std::pair<std::ptrdiff_t, std::int64_t>{-1, 0}));
    QCOMPARE(run(6), (std::pair<std::ptrdiff_t, std::int64_t>{2048 + 384, 4}));
    QCOMPARE(run(6), (std::pair<std::ptrdiff_t, std::int64_t>{-1, 0}));
    feed.add(memory.data(), 128);
    feed.reset();
    QCOMPARE(run(6), (std::pair<std::ptrdiff_t, std::int64_t>{-1, 0}));
    // Another thread's feed is its own.
    feed.add(memory.data(), 64);
    std::int64_t elsewhere = -1;
    std::thread([&] { elsewhere = kernels::threadLineFeed().take(4).second; }).join();
    QCOMPARE(elsewhere, std::int64_t(0));
    QCOMPARE(run(4), (std::pair<std::ptrdiff_t, std::int64_t>{0, 1}));
}

void TestKernels::rowsSplitIntoEvenParts() {
    QFETCH(QList<qint64>, rows);
    QFETCH(qint64, parts);
    QFETCH(qint64, least);
    QFETCH(QList<qint64>, bounds);
    const std::vector<std::int64_t> lengths(rows.begin(), rows.end());
    const auto got = kernels::splitRows(lengths.data(), static_cast<std::int64_t>(lengths.size()), parts, least);
    QCOMPARE(QList<qint64>(got.begin(), got.end()), bounds);
}

// Every part runs once, on the pool's threads, with the kernels it calls inline (a nested parallelFor runs on the
// part's thread); an exception from one part comes out of the call once the others have ended.
void TestKernels::partsRunOnThePoolAndRethrow() {
    auto& pool = ThreadPool::shared();
    const auto parts = static_cast<std::int64_t>(pool.size()) * 2;
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(parts));
    std::atomic<bool> nestedElsewhere{false};
    kernels::runParts(parts, [&](std::int64_t part) {
        const auto self = std::this_thread::get_id();
        pool.parallelFor(64, 1, [&](std::int64_t, std::int64_t) {
            if (std::this_thread::get_id() != self) nestedElsewhere = true;
        });
        runs[static_cast<std::size_t>(part)].fetch_add(1);
    });
    for (const auto& r : runs)
        QCOMPARE(r.load(), 1);
    QVERIFY(!nestedElsewhere);

    std::atomic<int> ended{0};
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, kernels::runParts(parts, [&](std::int64_t part) {
                                 if (part == 1) throw std::runtime_error("part 1 failed");
                                 std::this_thread::sleep_for(std::chrono::milliseconds(2));
                                 ended.fetch_add(1);
                             }));
    QCOMPARE(ended.load(), static_cast<int>(parts) - 1);
    kernels::runParts(parts, [&](std::int64_t) { ended.fetch_add(1); });  // the pool serves the next call
    QCOMPARE(ended.load(), static_cast<int>(parts) * 2 - 1);
}

// A thread that yields to the kernels' (a batch's line worker) runs as SCHED_BATCH while it holds the guard, and threads
// it starts inherit that; the kernels' own threads started from it (a pool's worker, a batcher's thread) take the
// normal policy back, and the guard's end gives the thread its own.
void TestKernels::kernelThreadsDoNotYieldToRequests() {
    const int before = threadPolicy();
    QCOMPARE(before, SCHED_OTHER);
    {
        const YieldToKernelThreads yielding;
        QCOMPARE(threadPolicy(), SCHED_BATCH);
        int inherited = -1;
        std::thread([&] { inherited = threadPolicy(); }).join();
        QCOMPARE(inherited, SCHED_BATCH);

        ThreadPool pool(2);
        const auto self = std::this_thread::get_id();
        std::mutex mutex;
        std::set<int> workers;
        pool.parallelFor(64, 1, [&](std::int64_t, std::int64_t) {
            if (std::this_thread::get_id() == self) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));  // leaves chunks for the worker
                return;
            }
            std::lock_guard lock(mutex);
            workers.insert(threadPolicy());
        });
        QCOMPARE(workers, std::set<int>{SCHED_OTHER});

        StepBatcher batcher([](const std::vector<void*>&, const std::vector<std::vector<TokenId>>&) { return Logits(); });
        int batcherPolicy = -1;
        batcher.between([&] { batcherPolicy = threadPolicy(); });  // the first request starts the batcher's thread
        QCOMPARE(batcherPolicy, SCHED_OTHER);
    }
    QCOMPARE(threadPolicy(), before);
}

void TestKernels::rmsNormMatchesLibtorch_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("d");
    QTest::addColumn<bool>("bf16Weight");
    for (bool bf16 : {false, true})
        for (auto [rows, d] : {std::pair{1, 2048}, std::pair{40, 2048}, std::pair{16, 128}, std::pair{3, 7}})
            QTest::addRow("%s_%dx%d", bf16 ? "bf16" : "f32", rows, d) << rows << d << bf16;
}

// Against the float32 ATen formula HunYuan used before (and transformers uses), and in place.
void TestKernels::rmsNormMatchesLibtorch() {
    QFETCH(int, rows);
    QFETCH(int, d);
    QFETCH(bool, bf16Weight);
    auto generator = at::detail::createCPUGenerator(5);
    const auto x = torch::randn({rows, d}, generator, torch::kFloat32) * 3;
    auto weight = torch::randn({d}, generator, torch::kFloat32);
    if (bf16Weight) weight = weight.to(torch::kBFloat16);
    const double eps = 1e-5;
    const auto expected = weight.to(torch::kFloat32) * (x * torch::rsqrt(x.pow(2).mean(-1, true) + eps));
    auto out = torch::full_like(x, std::nanf(""));
    auto inPlace = x.clone();
    if (bf16Weight) {
        const auto* w = reinterpret_cast<const std::uint16_t*>(weight.data_ptr());
        kernels::rmsNorm(x.data_ptr<float>(), w, out.data_ptr<float>(), rows, d, eps);
        kernels::rmsNorm(inPlace.data_ptr<float>(), w, inPlace.data_ptr<float>(), rows, d, eps);
    } else {
        kernels::rmsNorm(x.data_ptr<float>(), weight.data_ptr<float>(), out.data_ptr<float>(), rows, d, eps);
        kernels::rmsNorm(inPlace.data_ptr<float>(), weight.data_ptr<float>(), inPlace.data_ptr<float>(), rows, d, eps);
    }
    QVERIFY2((out - expected).abs().max().item<float>() < 1e-5f, qPrintable(QString::number((out - expected).abs().max().item<float>())));
    QVERIFY(torch::equal(out, inPlace));
}

void TestKernels::ropeMatchesLibtorch_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("positions");
    QTest::addColumn<int>("d");
    QTest::newRow("decoding step") << 16 << 1 << 128;
    QTest::newRow("prompt") << 4 << 40 << 128;
    QTest::newRow("small head") << 3 << 5 << 6;
}

// Against the ATen formula (x * cos + rotate_half(x) * sin) on [heads, positions, d] with real angles.
void TestKernels::ropeMatchesLibtorch() {
    QFETCH(int, heads);
    QFETCH(int, positions);
    QFETCH(int, d);
    auto generator = at::detail::createCPUGenerator(9);
    const auto x = torch::randn({heads, positions, d}, generator, torch::kFloat32);
    const auto invFreq = 1.0 / torch::pow(10000.0, torch::arange(0, d, 2, torch::kInt64).to(torch::kFloat32) / d);
    const auto angles = torch::outer(torch::arange(7, 7 + positions, torch::kInt64).to(torch::kFloat32), invFreq);
    const auto emb = torch::cat({angles, angles}, -1);
    const auto cos = emb.cos(), sin = emb.sin();
    const auto half = d / 2;
    const auto expected = x * cos + torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1) * sin;
    auto got = x.clone();
    kernels::applyRope(got.data_ptr<float>(), heads * positions, d, cos.data_ptr<float>(), sin.data_ptr<float>(), positions);
    QVERIFY2((got - expected).abs().max().item<float>() < 1e-6f, qPrintable(QString::number((got - expected).abs().max().item<float>())));
}

void TestKernels::blasThreadsFollowProductSize_data() {
    QTest::addColumn<qint64>("outer");
    QTest::addColumn<qint64>("inner");  // 0: no inner scope
    QTest::addColumn<bool>("parallelInside");
    const qint64 small = ParallelBlas::kMinMultiplyAdds - 1, large = ParallelBlas::kMinMultiplyAdds;
    QTest::newRow("small product") << small << qint64(0) << false;
    QTest::newRow("large product") << large << qint64(0) << true;
    QTest::newRow("small inside large") << large << small << true;
    QTest::newRow("large inside large") << large << large << true;
    QTest::newRow("large inside small") << small << large << true;
}

// OpenBLAS works on one thread except inside a scope around a product big enough to pay for waking its
// workers (their spinning afterwards took cores from the engine's kernels); scopes nest, and leaving the
// outermost one always brings it back to one thread.
void TestKernels::blasThreadsFollowProductSize() {
    QFETCH(qint64, outer);
    QFETCH(qint64, inner);
    QFETCH(bool, parallelInside);
    using GetThreads = int (*)();
    const auto blasThreads = reinterpret_cast<GetThreads>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    if (!blasThreads) QSKIP("the linked BLAS is not OpenBLAS");
    const int all = configureThreads();
    QCOMPARE(blasThreads(), 1);
    {
        ParallelBlas outerScope(outer);
        QCOMPARE(blasThreads(), outer >= ParallelBlas::kMinMultiplyAdds ? all : 1);
        if (inner > 0) {
            ParallelBlas innerScope(inner);
            QCOMPARE(blasThreads(), parallelInside ? all : 1);
        }
        QCOMPARE(blasThreads(), outer >= ParallelBlas::kMinMultiplyAdds ? all : 1);
        // A large product inside the scope still matches the reference (OpenBLAS really runs threaded here).
        const auto x = torch::randn({96, 512}), w = torch::randn({512, 512});
        const auto got = ops::linear(x, w), expected = torch::mm(x.to(torch::kFloat64), w.to(torch::kFloat64).t());
        QVERIFY((got.to(torch::kFloat64) - expected).abs().max().item<double>() < 1e-3);
    }
    QCOMPARE(blasThreads(), 1);
}

// The value of a float8 E4M3 (fn) code from the format's definition (as ../shared/fixtures/gen/quant.py's table).
static double e4m3Value(int code) {
    const int sign = code >> 7, e = (code >> 3) & 15, m = code & 7;
    const double v = e == 0 ? (m / 8.0) * std::pow(2.0, -6) : (1 + m / 8.0) * std::pow(2.0, e - 7);
    return sign ? -v : v;
}

void TestKernels::siluMulMatchesReference_data() {
    QTest::addColumn<int>("count");
    QTest::addColumn<QString>("values");
    // Lengths with and without a masked tail, and one long enough to be shared out over the pool; values of every
    // regime: ordinary, large (e^-g overflows float32 for g < -88.7), tiny, and the special values.
    for (int count : {1, 15, 16, 17, 100, 65536 * 2 + 9})
        for (const char* values : {"normal", "large", "tiny", "special"})
            QTest::addRow("%s_%d", values, count) << count << QString(values);
}

void TestKernels::siluMulMatchesReference() {
    QFETCH(int, count);
    QFETCH(QString, values);
    const auto n = static_cast<std::size_t>(count);
    std::vector<float> gate(n), up(n);
    std::uint32_t state = 12345;
    const auto uniform = [&] {  // [-1, 1)
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
    };
    const float special[] = {0.0f,
                             -0.0f,
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN(),
                             88.0f,
                             -88.0f,
                             89.0f,
                             -89.0f,
                             104.0f,
                             -104.0f,
                             1e-40f};
    for (std::size_t i = 0; i < n; ++i) {
        const float scale = values == "normal" ? 8.0f : values == "large" ? 200.0f : values == "tiny" ? 1e-30f : 1.0f;
        gate[i] = values == "special" ? special[i % std::size(special)] : uniform() * scale;
        up[i] = uniform() * 3.0f;
    }
    std::vector<float> out(n), inPlace = gate;
    kernels::siluMul(gate.data(), up.data(), out.data(), count);
    kernels::siluMul(inPlace.data(), up.data(), inPlace.data(), count);  // out may alias gate
    for (std::size_t i = 0; i < n; ++i) {
        const double g = gate[i];
        const double expected = g / (1.0 + std::exp(-g)) * up[i];
        QVERIFY2(std::isnan(out[i]) == std::isnan(expected),
                 qPrintable(QString("%1: silu(%2) * %3 gave %4, expected %5").arg(i).arg(g).arg(up[i]).arg(out[i]).arg(expected)));
        QCOMPARE(std::bit_cast<std::uint32_t>(inPlace[i]), std::bit_cast<std::uint32_t>(out[i]));
        if (std::isnan(expected)) continue;
        if (std::isinf(expected)) {
            QCOMPARE(static_cast<double>(out[i]), expected);
            continue;
        }
        // exp16 is within 2 ulp of expf; the division and the product round once each. Past float32's range (e^-g
        // overflowing, or a product under the smallest normal) the result is a zero or a subnormal of the right sign.
        const double error = std::abs(out[i] - expected);
        QVERIFY2(error <= 8e-7 * std::abs(expected) + 1e-36,
                 qPrintable(QString("%1: silu(%2) * %3 gave %4, expected %5").arg(i).arg(g).arg(up[i]).arg(out[i]).arg(expected)));
    }
}

void TestKernels::firstArgmaxIsTorchArgmax_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<QString>("shape");
    // Lengths around a vector's 16 lanes, the bundled model's vocabulary and HY-MT's.
    for (const int n : {1, 15, 16, 17, 33, 16004, 120818})
        for (const char* shape : {"random", "ties", "nan", "nans", "zeros", "-inf", "+inf"})
            QTest::addRow("%d_%s", n, shape) << n << QString::fromLatin1(shape);
}

// Against torch.argmax and the rule written out (the first maximal value; the first NaN if there is one), on rows
// whose maximum sits in several places, in the last (masked) lanes, behind NaNs, among signed zeros and infinities.
void TestKernels::firstArgmaxIsTorchArgmax() {
    QFETCH(int, n);
    QFETCH(QString, shape);
    auto generator = at::detail::createCPUGenerator(static_cast<std::uint64_t>(n));
    auto row = torch::randn({n}, generator, torch::kFloat32);
    auto* v = row.data_ptr<float>();
    const auto at = [n](double share) { return std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(share * n)); };
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    if (shape == "ties")
        for (const double share : {0.9, 0.3, 1.0})  // the last value too (a masked lane unless n % 16 == 0)
            v[at(share)] = 100.0f;
    if (shape == "nan") v[at(0.7)] = nan;
    if (shape == "nans") {
        v[at(0.2)] = 100.0f;
        v[at(0.6)] = nan;
        v[at(0.4)] = -nan;
        v[n - 1] = nan;
    }
    if (shape == "zeros") {
        row.zero_();
        v[0] = -0.0f;
    }
    if (shape == "-inf") row.fill_(-inf);
    if (shape == "+inf") {
        v[at(0.8)] = inf;
        v[at(0.5)] = inf;
    }
    std::int64_t expected = 0;  // the rule, written out
    for (std::int64_t i = 0; i < n; ++i) {
        if (std::isnan(v[i])) {
            expected = i;
            break;
        }
        if (v[i] > v[expected]) expected = i;
    }
    QCOMPARE(kernels::firstArgmax(v, n), expected);
    QCOMPARE(row.argmax().item<std::int64_t>(), expected);
}

void TestKernels::channelEpilogueEqualsLibtorch_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("n");
    QTest::addColumn<QString>("scale");
    QTest::addColumn<bool>("bias");
    // 16 x 16004 (the bundled model's output layer in a 16-row step) and 40 x 1000 are split over the pool in
    // claims that start inside a row; 1 x 7 and 3 x 384 run in one.
    for (auto [rows, n] : {std::pair{1, 7}, std::pair{3, 384}, std::pair{40, 1000}, std::pair{16, 16004}})
        for (const char* scale : {"channel", "tensor", "none"})
            for (bool bias : {false, true})
                if (QString::fromLatin1(scale) != "none" || bias)
                    QTest::addRow("%dx%d_%s%s", rows, n, scale, bias ? "_bias" : "") << rows << n << QString::fromLatin1(scale) << bias;
}

// Bit for bit what libtorch's mul_ by the scale and then + bias give.
void TestKernels::channelEpilogueEqualsLibtorch() {
    QFETCH(int, rows);
    QFETCH(int, n);
    QFETCH(QString, scale);
    QFETCH(bool, bias);
    auto generator = at::detail::createCPUGenerator(17);
    const auto y = torch::randn({rows, n}, generator, torch::kFloat32) * 37;
    const auto scales = torch::rand({scale == "tensor" ? 1 : n}, generator, torch::kFloat32) * 0.01 + 1e-4;
    const auto biases = torch::randn({n}, generator, torch::kFloat32);
    auto expected = y.clone();
    if (scale != "none") expected.mul_(scales);
    if (bias) expected = expected + biases;
    auto got = y.clone();
    kernels::ChannelEpilogue epilogue;
    if (scale != "none") {
        epilogue.scale = scales.data_ptr<float>();
        epilogue.scalePerTensor = scale == "tensor";
    }
    if (bias) epilogue.bias = biases.data_ptr<float>();
    kernels::scaleAndBiasRows(got.data_ptr<float>(), rows, n, epilogue);
    QVERIFY(torch::equal(got, expected));
}

// A weight-only quantized Linear (int8 or FP8 E4M3 weight, per-channel or per-tensor scale) gives what the
// dequantized twin (codes times scale in float64) gives: one decoding row, the batched tiles (3 and 8 rows), a
// prompt on the packed GEMM (40 and 100 rows), short and long weight rows, a K tail, with and without a bias.
void TestKernels::scaledLinearMatchesDequantized_data() {
    QTest::addColumn<QString>("type");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("in");
    QTest::addColumn<bool>("perChannel");
    QTest::addColumn<bool>("bias");
    for (const char* type : {"int8", "fp8"}) {
        const QString t = QString::fromLatin1(type);
        QTest::addRow("%s decoding row, per channel", type) << t << 1 << 40 << true << false;
        QTest::addRow("%s decoding row, long rows", type) << t << 1 << 4096 << true << false;
        QTest::addRow("%s 3 rows, per tensor, bias", type) << t << 3 << 40 << false << true;
        QTest::addRow("%s 8 rows, long rows", type) << t << 8 << 4096 << true << false;
        QTest::addRow("%s 8 rows, short rows", type) << t << 8 << 512 << true << true;
        QTest::addRow("%s prompt, per channel, bias", type) << t << 40 << 40 << true << true;
        QTest::addRow("%s prompt, long rows", type) << t << 100 << 1040 << false << false;
        QTest::addRow("%s K tail", type) << t << 2 << 44 << true << false;
        QTest::addRow("%s 3 rows, 1.5 KiB rows", type) << t << 3 << 1536 << true << false;
        QTest::addRow("%s 8 rows, 1.5 KiB rows", type) << t << 8 << 1536 << false << true;
        QTest::addRow("%s prompt, K tail", type) << t << 40 << 44 << true << false;
    }
}

void TestKernels::scaledLinearMatchesDequantized() {
    QFETCH(QString, type);
    QFETCH(int, rows);
    QFETCH(int, in);
    QFETCH(bool, perChannel);
    QFETCH(bool, bias);
    torch::manual_seed(7);
    const std::int64_t out = 24;
    torch::Tensor quantized, values;
    if (type == "int8") {
        quantized = torch::randint(-127, 128, {out, in}).to(torch::kInt8);
        values = quantized.to(torch::kFloat64);
    } else {
        // Every code but the two NaNs.
        quantized = torch::randint(0, 254, {out, in}).to(torch::kInt64);
        quantized = (quantized + (quantized >= 127).to(torch::kInt64)).to(torch::kUInt8);
        auto table = torch::empty({256}, torch::kFloat64);
        for (int c = 0; c < 256; ++c)
            table[c] = e4m3Value(c);
        values = table.index_select(0, quantized.reshape({-1}).to(torch::kInt64)).view({out, in});
    }
    const auto scale = perChannel ? torch::rand({out, 1}) * 0.01 + 0.001 : torch::full({1}, 0.004);
    dragoman::WeightTable table{{"proj.weight", quantized}, {"proj.weight_scale", scale}};
    if (bias) table.emplace("proj.bias", torch::randn({out}));
    dragoman::WeightBinder binder(table);
    const dragoman::Linear layer(binder, "proj.", out, in, bias);
    binder.finish("scaled");
    QVERIFY(layer.scale().defined());
    const auto x = torch::randn({rows, in});
    const auto twin = values * scale.to(torch::kFloat64);
    auto expected = torch::matmul(x.to(torch::kFloat64), twin.t());
    if (bias) expected = expected + table.at("proj.bias").to(torch::kFloat64);
    const auto got = layer(x);
    QCOMPARE(got.sizes().vec(), expected.sizes().vec());
    const double worst = (got.to(torch::kFloat64) - expected).abs().max().item<double>();
    QVERIFY2(torch::allclose(got.to(torch::kFloat64), expected, 1e-4, 1e-5), ("off by " + std::to_string(worst)).c_str());
    // The libtorch path (a device, or Placement::libtorchOps) decodes the same values.
    QVERIFY(torch::equal(ops::floatWeight(quantized).to(torch::kFloat64), values));
    // A batched step (a few rows, not a prompt) gives each row the numbers it gets alone.
    for (int r = 0; r < (rows < 32 ? rows : 0); ++r)
        QVERIFY(torch::equal(layer(x.narrow(0, r, 1)), got.narrow(0, r, 1)));
}

// q/k/v-like 8-bit layers (int8 and FP8, channel and tensor scales, mixed with bf16) fused into one pass give
// each layer exactly its own product.
// One row through layers whose weights no fused kernel reads (float16 beside bf16): each projected as it is alone.
void TestKernels::manyProjectsWeightsNoKernelReads() {
    auto generator = at::detail::createCPUGenerator(29);
    const Linear half(torch::randn({5, 64}, generator, torch::kFloat32).to(torch::kFloat16), {});
    const Linear bf16(torch::randn({3, 64}, generator, torch::kFloat32).to(torch::kBFloat16), {});
    const auto x = torch::randn({1, 64}, generator, torch::kFloat32);
    const auto out = Linear::many(x, {&half, &bf16});
    QCOMPARE(out.size(), std::size_t{2});
    QVERIFY(torch::equal(out[0], half(x)));
    QVERIFY(torch::equal(out[1], bf16(x)));
}

void TestKernels::fusedProjectionsOfEightBitWeights() {
    torch::manual_seed(11);
    const std::int64_t k = 256;
    dragoman::WeightTable table{
        {"a.weight", torch::randint(-127, 128, {40, k}).to(torch::kInt8)},
        {"a.weight_scale", torch::rand({40, 1}) * 0.01},
        {"b.weight", (torch::randint(0, 127, {24, k}) + 128 * torch::randint(0, 2, {24, k})).to(torch::kUInt8)},
        {"b.weight_scale", torch::full({1}, 0.003)},
        {"c.weight", torch::randn({8, k}).to(torch::kBFloat16)},
    };
    dragoman::WeightBinder binder(table);
    const dragoman::Linear a(binder, "a.", 40, k, false), b(binder, "b.", 24, k, false), c(binder, "c.", 8, k, false);
    binder.finish("fused");
    const auto x = torch::randn({1, k});
    const auto fused = dragoman::Linear::many(x, {&a, &b, &c});
    QVERIFY(torch::equal(fused[0], a(x)));
    QVERIFY(torch::equal(fused[1], b(x)));
    QVERIFY(torch::equal(fused[2], c(x)));
}

// An 8-bit weight means nothing without its scale: refused when the layer is bound.
void TestKernels::quantizedWeightNeedsScale() {
    for (auto dtype : {torch::kInt8, torch::kUInt8}) {
        dragoman::WeightTable table{{"proj.weight", torch::zeros({4, 8}, dtype)}};
        dragoman::WeightBinder binder(table);
        const dragoman::Linear layer(binder, "proj.", 4, 8, false);
        try {
            binder.finish("scaled");
            QFAIL("an 8-bit weight without a scale was accepted");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("no proj.weight_scale") != std::string::npos, e.what());
        }
    }
}

void TestKernels::misshapenScaleIsNamed() {
    dragoman::WeightTable table{{"proj.weight", torch::zeros({4, 8}, torch::kInt8)}, {"proj.weight_scale", torch::ones({8, 1})}};
    dragoman::WeightBinder binder(table);
    const dragoman::Linear layer(binder, "proj.", 4, 8, false);
    try {
        binder.finish("scaled");
        QFAIL("a scale of the wrong shape was accepted");
    } catch (const std::exception& e) {
        QVERIFY(std::string(e.what()).find("proj.weight_scale") != std::string::npos);
    }
}

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
