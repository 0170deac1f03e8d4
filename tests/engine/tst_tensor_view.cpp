// Tensors made from mapped safetensors files: values, zero-copy, counted copies, lifetime.
#include "fixture_cases.h"
#include "io/tensor_view.h"

#include <QTest>

#include <torch/torch.h>

#include <cmath>

using namespace dragoman;

class TestTensorView : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void valuesMatchFixtures_data();
    void valuesMatchFixtures();
    void alignedDataIsNotCopied();
    void misalignedDataIsCopiedAndCounted();
    void tensorKeepsMappingAlive();
};

void TestTensorView::valuesMatchFixtures_data() {
    QTest::addColumn<QString>("file");
    for (const auto& c : test::safetensorsCases())
        if (c.expect == "ok") QTest::newRow(c.file.c_str()) << QString::fromStdString(c.file);
}

void TestTensorView::valuesMatchFixtures() {
    QFETCH(QString, file);
    const auto cases = test::safetensorsCases();
    const auto fixture = *std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.file == file.toStdString(); });
    const auto st = SafetensorsFile::open(test::fixturesDir() + "/safetensors-bad/" + fixture.file);
    for (const auto& expected : fixture.tensors) {
        const auto tensor = mappedTensor(st, *st->find(expected.name));
        QCOMPARE(tensor.sizes().vec(), expected.shape);
        const auto flat = tensor.to(torch::kFloat64).flatten().contiguous();
        QCOMPARE(static_cast<std::size_t>(flat.numel()), expected.values.size());
        const double* got = flat.data_ptr<double>();
        for (std::size_t i = 0; i < expected.values.size(); ++i) {
            const auto& want = expected.values[i];
            const auto where = expected.name + "[" + std::to_string(i) + "]";
            if (want.is_string()) {
                const std::string s = want;
                if (s == "nan")
                    QVERIFY2(std::isnan(got[i]), where.c_str());
                else
                    QVERIFY2(std::isinf(got[i]) && (got[i] < 0) == (s == "-inf"), where.c_str());
            } else if (want.is_boolean()) {
                QCOMPARE(got[i], want.get<bool>() ? 1.0 : 0.0);
            } else {
                QVERIFY2(got[i] == want.get<double>(), where.c_str());  // exact: every dtype widens exactly
            }
        }
    }
}

void TestTensorView::alignedDataIsNotCopied() {
    const auto st = SafetensorsFile::open(test::fixturesDir() + "/safetensors-bad/good.safetensors");
    CopyCounter copies;
    for (const auto& info : st->tensors()) {
        const auto tensor = mappedTensor(st, info, &copies);
        if (info.numel == 0) continue;
        const auto* begin = reinterpret_cast<const std::byte*>(tensor.data_ptr());
        QCOMPARE(begin, st->bytes(info).data());  // points into the mapping
    }
    QCOMPARE(copies.tensors.load(), 0u);
}

void TestTensorView::misalignedDataIsCopiedAndCounted() {
    // Its header length is not a multiple of 8, so wide dtypes start at misaligned addresses.
    const auto st = SafetensorsFile::open(test::fixturesDir() + "/safetensors-bad/good_unpadded_reordered.safetensors");
    CopyCounter copies;
    std::uint64_t expectedCopies = 0;
    for (const auto& info : st->tensors()) {
        const bool misaligned = info.numel > 0 && reinterpret_cast<std::uintptr_t>(st->bytes(info).data()) % dtypeSize(info.dtype) != 0;
        expectedCopies += misaligned;
        const auto tensor = mappedTensor(st, info, &copies);
        // An empty tensor may have no data pointer at all (memcmp must not see null, even for zero bytes).
        if (info.nbytes() > 0) QCOMPARE(std::memcmp(tensor.data_ptr(), st->bytes(info).data(), info.nbytes()), 0);
    }
    QVERIFY(expectedCopies > 0);
    QCOMPARE(copies.tensors.load(), expectedCopies);
}

void TestTensorView::tensorKeepsMappingAlive() {
    torch::Tensor tensor;
    {
        auto st = SafetensorsFile::open(test::fixturesDir() + "/safetensors-bad/good.safetensors");
        tensor = mappedTensor(st, *st->find("f32_matrix"));
    }
    QCOMPARE(tensor[0][1].item<float>(), 1.0f);  // the file object is gone; its mapping is not
}

QTEST_GUILESS_MAIN(TestTensorView)
#include "tst_tensor_view.moc"
