// The safetensors reader and writer against the format's rules: a round trip, the exact
// byte layout of a file written by hand, and every malformation the specification forbids,
// each refused with an InputError naming the file and the field.
#include "util/input_error.h"
#include "weights/safetensors.h"

#include <QtTest/QtTest>
#include <cstring>
#include <fstream>

namespace st = kairos::safetensors;

namespace {

// A file from a header text and a data buffer, exactly as given.
std::string bytesOf(const std::string& header, const std::string& data) {
    std::string out(8, '\0');
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out[std::size_t(i)] = char((n >> (8 * i)) & 0xFF);
    return out + header + data;
}

std::string fieldOfError(const std::string& file) {
    try {
        st::parseHeader(reinterpret_cast<const std::byte*>(file.data()), file.size(), file.size(),
                        "f.safetensors");
    } catch (const kairos::InputError& e) {
        if (e.file() != "f.safetensors") return "wrong file";
        return e.field().empty() ? "(none)" : e.field();
    }
    return "accepted";
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT
private slots:
    void byHand();
    void roundTrip();
    void malformed_data();
    void malformed();
    void fileErrors();
};

void TestSafetensors::byHand() {
    // The specification's example shape: one F16 tensor of 2x2 and one I32 of 3.
    const std::string header =
        R"({"__metadata__":{"who":"kairos"},"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},)"
        R"("b":{"dtype":"I32","shape":[3],"data_offsets":[8,20]}})";
    const std::string file = bytesOf(header, std::string(20, '\x01'));
    const auto h = st::parseHeader(reinterpret_cast<const std::byte*>(file.data()), file.size(),
                                   file.size(), "x");
    QCOMPARE(h.data_start, std::uint64_t(8 + header.size()));
    QCOMPARE(h.metadata.at("who"), std::string("kairos"));
    QCOMPARE(int(h.tensors.size()), 2);
    QCOMPARE(h.tensors[0].name, std::string("a"));
    QCOMPARE(h.tensors[0].dtype, st::DType::F16);
    QCOMPARE(h.tensors[0].numel(), std::int64_t(4));
    QCOMPARE(h.tensors[1].end, std::uint64_t(20));
    // Zero-sized tensors (shape with a 0, or a scalar with shape []) are legal.
    const std::string z = bytesOf(
        R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}})",
        std::string(8, '\0'));
    const auto hz =
        st::parseHeader(reinterpret_cast<const std::byte*>(z.data()), z.size(), z.size(), "z");
    QCOMPARE(hz.tensors[1].numel(), std::int64_t(1));
}

void TestSafetensors::roundTrip() {
    QTemporaryDir dir;
    const std::string path = dir.path().toStdString() + "/m.safetensors";
    std::vector<float> a = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
    std::vector<std::uint16_t> b = {st::floatToBf16(0.5f), st::floatToBf16(-1.0f)};
    std::vector<std::int64_t> c = {-5, 1LL << 40};
    st::write(path,
              {{"w.a", st::DType::F32, {2, 3}, a.data(), 24},
               {"w.b", st::DType::BF16, {2}, b.data(), 4},
               {"w.c", st::DType::I64, {1, 2}, c.data(), 16}},
              {{"format", "pt"}});
    QVERIFY(!QFile::exists(QString::fromStdString(path + ".tmp")));
    const st::File f(path);
    QCOMPARE(f.header().data_start % 8, std::uint64_t(0)); // header padded to 8 bytes
    const auto* ta = f.find("w.a");
    QVERIFY(ta);
    QCOMPARE(ta->shape, (std::vector<std::int64_t>{2, 3}));
    QCOMPARE(std::memcmp(f.data(*ta), a.data(), 24), 0);
    const auto* tb = f.find("w.b");
    QCOMPARE(tb->dtype, st::DType::BF16);
    std::uint16_t b1;
    std::memcpy(&b1, f.data(*tb) + 2, 2);
    QCOMPARE(st::bf16ToFloat(b1), -1.0f);
    const auto* tc = f.find("w.c");
    QCOMPARE(std::memcmp(f.data(*tc), c.data(), 16), 0);
    QVERIFY(!f.find("w.d"));
    QCOMPARE(f.header().metadata.at("format"), std::string("pt"));
    // The writer refuses a byte count that does not match the shape, and leaves nothing.
    QVERIFY_THROWS_EXCEPTION(kairos::InputError,
                             st::write(path + "2", {{"x", st::DType::F32, {3}, a.data(), 8}}));
    QVERIFY(!QFile::exists(QString::fromStdString(path + "2")));
}

void TestSafetensors::malformed_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QString>("field");
    const auto row = [](const char* name, const std::string& file, const char* field) {
        QTest::newRow(name) << QByteArray(file.data(), qsizetype(file.size())) << QString(field);
    };
    const std::string ok = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
    row("short", std::string(5, '\0'), "header size");
    std::string huge(8, '\0');
    huge[4] = '\x01'; // 2^32 bytes of header
    row("header past the end", huge + "{}", "header size");
    row("not json", bytesOf("{nope", ""), "header");
    row("not an object", bytesOf("[1,2]", ""), "header");
    row("duplicate name", bytesOf("{" + ok + "," + ok + "}", std::string(8, '\0')), "a");
    row("unknown dtype",
        bytesOf(R"({"a":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "a.dtype");
    row("negative dim",
        bytesOf(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "a.shape");
    row("size mismatch",
        bytesOf(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", std::string(8, '\0')),
        "a.data_offsets");
    row("past the buffer",
        bytesOf(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", std::string(8, '\0')),
        "a.data_offsets");
    row("begin after end",
        bytesOf(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", std::string(8, '\0')),
        "a.data_offsets");
    row("overlap",
        bytesOf(
            R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            std::string(12, '\0')),
        "b.data_offsets");
    row("hole",
        bytesOf(
            R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
            std::string(12, '\0')),
        "b.data_offsets");
    row("trailing bytes", bytesOf("{" + ok + "}", std::string(12, '\0')), "data_offsets");
    row("metadata not strings", bytesOf(R"({"__metadata__":{"n":1}})", ""), "__metadata__.n");
    row("overflowing shape",
        bytesOf(R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})",
                std::string(8, '\0')),
        "a.data_offsets");
    row("offsets not a pair",
        bytesOf(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", std::string(8, '\0')),
        "a.data_offsets");
}

void TestSafetensors::malformed() {
    QFETCH(QByteArray, file);
    QFETCH(QString, field);
    QCOMPARE(QString::fromStdString(fieldOfError(file.toStdString())), field);
}

void TestSafetensors::fileErrors() {
    QTemporaryDir dir;
    const std::string d = dir.path().toStdString();
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, st::File(d + "/absent.safetensors"));
    std::ofstream(d + "/empty.safetensors").close();
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, st::File(d + "/empty.safetensors"));
    // A sharded index naming a tensor its shard lacks.
    std::vector<float> a = {1, 2};
    st::write(d + "/s1.safetensors", {{"x", st::DType::F32, {2}, a.data(), 8}});
    std::ofstream(d + "/model.safetensors.index.json")
        << R"({"weight_map":{"x":"s1.safetensors","y":"s1.safetensors"}})";
    try {
        st::Checkpoint ck(d);
        QFAIL("accepted an index naming a missing tensor");
    } catch (const kairos::InputError& e) {
        QCOMPARE(e.field(), std::string("weight_map.y"));
    }
    std::ofstream(d + "/model.safetensors.index.json")
        << R"({"weight_map":{"x":"s1.safetensors"}})";
    const st::Checkpoint ck(d);
    QVERIFY(ck.has("x"));
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, ck.get("y"));
    std::ofstream(d + "/model.safetensors.index.json")
        << R"({"weight_map":{"x":"../s1.safetensors"}})";
    QVERIFY_THROWS_EXCEPTION(kairos::InputError, st::Checkpoint{d});
}

QTEST_GUILESS_MAIN(TestSafetensors)
#include "tst_safetensors.moc"
