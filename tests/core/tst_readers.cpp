// Workload readers on the real traces in ../shared/data and on malformed input.
#include "test_util.h"
#include "util/input_error.h"
#include "util/input_file.h"
#include "workload/generators.h"
#include "workload/readers.h"

#include <QtTest>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

using namespace kairos;
using kairos::test::dataPath;

namespace {
// Runs `fn`, expects an InputError naming `line` and `field`; returns its message.
template <class Fn> QString expectError(Fn&& fn, long line, const std::string& field) {
    try {
        fn();
    } catch (const InputError& e) {
        if (e.line() != line || e.field() != field)
            QTest::qFail(qPrintable(QString("wrong place: %1 (want line %2, field '%3')")
                                        .arg(e.what())
                                        .arg(line)
                                        .arg(QString::fromStdString(field))),
                         __FILE__, __LINE__);
        return QString::fromStdString(e.what());
    }
    QTest::qFail("no InputError thrown", __FILE__, __LINE__);
    return {};
}

// `format`: "auto" or a format's name (workload/formats.h).
Workload readText(const std::string& text, const std::string& format,
                  const std::string& name = "mem.txt") {
    std::istringstream in(text);
    ReadOptions o;
    if (!parseTraceFormat(format, &o.format)) QTest::qFail("no such format", __FILE__, __LINE__);
    return readWorkload(in, name, o);
}
} // namespace

class TestReaders : public QObject {
    Q_OBJECT
private slots:
    void azureConversation() {
        const Workload w = readWorkload(dataPath("AzureLLMInferenceTrace_conv_2023.csv"));
        QCOMPARE(w.size(), std::size_t(19366));
        QCOMPARE(w.meta.at("format"), std::string("azure"));
        // First rows: 18:15:46.6805900,374,44 and 18:15:50.9951690,396,109.
        QCOMPARE(w.requests[0].prompt_tokens, 374);
        QCOMPARE(w.requests[0].output_tokens, 44);
        QCOMPARE(w.requests[0].arrival, 0.0);
        QCOMPARE(w.requests[1].prompt_tokens, 396);
        KAIROS_COMPARE_NEAR(w.requests[1].arrival, 50.9951690 - 46.6805900, 1e-9);
        // README facts: context mean 1155, generated mean 211, about 5.5 requests/s over 1 h.
        KAIROS_COMPARE_NEAR(double(w.totalPromptTokens()) / w.size(), 1155, 1.0);
        KAIROS_COMPARE_NEAR(double(w.totalOutputTokens()) / w.size(), 211, 1.0);
        KAIROS_COMPARE_NEAR(w.size() / w.span(), 5.5, 0.15);
    }

    void azureCode() {
        const Workload w = readWorkload(dataPath("AzureLLMInferenceTrace_code_2023.csv"));
        QCOMPARE(w.size(), std::size_t(8819));
        QCOMPARE(w.requests[0].prompt_tokens, 4808);
        QCOMPARE(w.requests[0].output_tokens, 10);
        KAIROS_COMPARE_NEAR(double(w.totalPromptTokens()) / w.size(), 2048, 1.0);
        KAIROS_COMPARE_NEAR(double(w.totalOutputTokens()) / w.size(), 28, 1.0);
    }

    void mooncake() {
        const Workload w = readWorkload(dataPath("mooncake_conversation_trace.jsonl"));
        QCOMPARE(w.size(), std::size_t(12031));
        QCOMPARE(w.meta.at("format"), std::string("mooncake"));
        QCOMPARE(w.requests[0].prompt_tokens, 6758);
        QCOMPARE(w.requests[0].output_tokens, 500);
        // Last timestamp 3,536,999 ms.
        KAIROS_COMPARE_NEAR(w.requests.back().arrival, 3536.999, 1e-9);
    }

    // A watched read (the workbench's): the same workload, progress rising to 1 in one
    // step per 64 KiB piece; a cancel flag stops it with ReadCancelled, for any format.
    void progressAndCancel() {
        const std::string path = dataPath("mooncake_conversation_trace.jsonl");
        const Workload plain = readWorkload(path);
        std::atomic<double> progress{0};
        std::atomic<bool> cancel{false};
        ReadOptions o;
        o.progress = &progress;
        o.cancel = &cancel;
        const Workload w = readWorkload(path, o);
        QCOMPARE(w.size(), plain.size());
        QVERIFY(w.requests == plain.requests);
        QCOMPARE(progress.load(), 1.0);
        cancel = true;
        QVERIFY_THROWS_EXCEPTION(ReadCancelled, readWorkload(path, o));
        o.format = findTraceFormat("mooncake");
        QVERIFY_THROWS_EXCEPTION(ReadCancelled, readWorkload(path, o));
        // Bad input under a watched read is still an InputError naming the line.
        cancel = false;
        std::istringstream bad("{\"kairos_workload\": 1}\n{\"arrival\": 0, \"prompt\": 0, "
                               "\"output\": 2}\n");
        o.format = nullptr;
        try {
            readWorkload(bad, "bad.jsonl", o);
            QFAIL("no error");
        } catch (const InputError& e) {
            QCOMPARE(e.line(), 2L);
            QCOMPARE(e.field(), std::string("prompt"));
        }
    }

    void lengthsWithGeneratedArrivals() {
        ReadOptions o;
        o.arrivals.rate = 10;
        o.arrivals.seed = 3;
        const Workload w = readWorkload(dataPath("sharegpt_8k_lengths_llama2.csv"), o);
        QCOMPARE(w.size(), std::size_t(30731));
        QCOMPARE(w.meta.at("format"), std::string("lengths"));
        QCOMPARE(w.requests[0].prompt_tokens, 74);
        QCOMPARE(w.requests[0].output_tokens, 918);
        KAIROS_COMPARE_NEAR(w.size() / w.span(), 10.0, 0.25);
        const Workload a = readWorkload(dataPath("arxiv_summarization_lengths_llama2.csv"));
        QCOMPARE(a.size(), std::size_t(28257));
        QCOMPARE(a.requests[1].prompt_tokens, 2015);
        QCOMPARE(a.requests.back().arrival, 0.0); // no rate given: all at once, as vLLM
    }

    // No BurstGPT file is in ../shared/data; this follows its published header.
    void burstGpt() {
        const std::string text =
            "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
            "5,ChatGPT,472,18,490,Conversation log\n"
            "45,ChatGPT,1087,0,1087,Conversation log\n"
            "118,GPT-4,417,276,693,API log\n";
        const Workload w = readText(text, "auto");
        QCOMPARE(w.meta.at("format"), std::string("burstgpt"));
        QCOMPARE(w.size(), std::size_t(2));
        QCOMPARE(w.meta.at("skipped_zero_token_rows"), std::string("1"));
        QCOMPARE(w.requests[1].prompt_tokens, 417);
        QCOMPARE(w.requests[1].arrival, 113.0);
    }

    // The native reader's fast path (simdjson, common lines) reads what the reference
    // (nlohmann, every line) reads: every sample trace, a generated workload with every
    // field, and lines at the edges of JSON and of each field's domain, whose errors must
    // be the reference's word for word (they come from it: the fast path declines them).
    void fastPathEqualsReference() {
        auto both = [](const std::string& text, const QString& what) {
            std::istringstream a(text), b(text);
            std::string ea, eb;
            Workload wa, wb;
            try {
                wa = readKairos(a, "t.jsonl");
            } catch (const InputError& e) {
                ea = e.what();
            }
            try {
                wb = readKairosReference(b, "t.jsonl");
            } catch (const InputError& e) {
                eb = e.what();
            }
            QVERIFY2(ea == eb, qPrintable(what + ": " + QString::fromStdString(ea) + " | " +
                                          QString::fromStdString(eb)));
            QVERIFY2(wa.requests == wb.requests, qPrintable(what));
            QCOMPARE(wa.name, wb.name);
            QVERIFY(wa.meta == wb.meta);
        };
        int files = 0;
        for (const char* f :
             {"azure_conv_bursty.jsonl", "chat_poisson_small.jsonl", "chat_reading.jsonl",
              "offline_batch.jsonl", "wid1_like.jsonl", "wid2_like.jsonl", "wid3_like.jsonl"}) {
            std::ifstream in(std::string(KAIROS_SOURCE_DIR) + "/sample_traces/" + f);
            QVERIFY(in);
            std::stringstream s;
            s << in.rdbuf();
            both(s.str(), f);
            ++files;
        }
        QCOMPARE(files, 7);
        {
            GenerateSpec g;
            g.count = 300;
            g.system_prompt_tokens = 200;
            g.turns = 2;
            Workload w = generateWorkload(g);
            for (std::size_t i = 0; i < w.size(); i += 3) {
                w.requests[i].cls = i % 2 ? "urgent" : "normal";
                w.requests[i].agent = static_cast<std::int32_t>(i % 5);
            }
            w.requests[7].budget_s = 2.5;
            w.requests[8].tuf = Tuf{1.0, -0.5, 1.0};
            std::ostringstream o;
            writeKairos(w, o);
            both(o.str(), "generated");
        }
        const std::string h = "{\"kairos_workload\":1}\n";
        const char* lines[] = {
            R"({"arrival":0.5,"prompt":10,"output":5})",
            R"({"arrival":0.5,"prompt":10,"output":5,"prompt":11})", // given twice
            R"({"arrival":1e400,"prompt":10,"output":5})",
            R"({"arrival":-0,"prompt":10,"output":5})",
            R"({"arrival":-1,"prompt":10,"output":5})",
            R"({"arrival":"1","prompt":10,"output":5})",
            R"({"arrival":1,"prompt":1.5,"output":5})",
            R"({"arrival":1,"prompt":0,"output":5})",
            R"({"arrival":1,"prompt":100000001,"output":5})",
            R"({"arrival":1,"prompt":3e9,"output":5,"agent":1e300})", // beyond int (fuzz)
            R"({"arrival":1,"prompt":10.0,"output":5e0})",
            R"({"arrival":1,"prompt":10,"output":5,"id":9000000000000001})",
            R"({"arrival":1,"prompt":10,"output":5,"id":-7})",
            R"({"arrival":1,"prompt":10,"output":5,"id":18446744073709551616})",
            R"({"arrival":1,"prompt":10,"output":5,"class":"a\nb"})",
            R"({"arrival":1,"prompt":10,"output":5,"class":"caf\u00e9 \ud83d\ude00"})",
            "{\"arrival\":1,\"prompt\":10,\"output\":5,\"class\":\"a\tb\"}", // a raw tab
            R"({"arrival":1,"prompt":10,"output":5,"class":7})",
            R"({"arrival":1,"prompt":10,"output":5,"agent":-1})",
            R"({"arrival":1,"prompt":10,"output":5,"agent":2.5})",
            R"({"arrival":1,"prompt":10,"output":5,"bogus":1})",
            R"({"arrival":1,"prompt":10,"output":5} trailing)",
            R"({"arrival":1,"prompt":10,"output":5,})",
            R"({"arrival":1,"prompt":10})",
            R"([1,2,3])",
            R"(  {"arrival" : 1 , "prompt" : 10 , "output" : 5 }  )",
            "{\"arrival\":1,\"prompt\":10,\"output\":5}\r",
            R"({"arrival":01,"prompt":10,"output":5})",
            R"({"arrival":1,"prompt":10,"output":5,"prefix":[["sys",4]]})",
            "{\"arrival\":1,\"prompt\":10,\"output\":5,\"class\":\"\xff\"}", // not UTF-8
        };
        for (const char* l : lines) both(h + l + "\n", QString::fromUtf8(l));
    }

    void nativeRoundTrip() {
        Workload w;
        w.name = "rt";
        w.meta["k"] = "v";
        Request r;
        r.id = 7;
        r.arrival = 0.1 + 0.2; // not representable exactly: must round-trip bit for bit
        r.prompt_tokens = 12;
        r.output_tokens = 30;
        r.cls = "urgent";
        r.tuf = Tuf{0.2, -6.67, 2};
        r.budget_s = 5.5;
        r.segments = {{10, 1.25}, {20, 0.5}};
        r.agent = 3;
        w.requests.push_back(r);
        Request q;
        q.id = 8;
        q.arrival = 1e-3;
        q.prompt_tokens = 1;
        q.output_tokens = 1;
        w.requests.push_back(q);
        std::stringstream s;
        writeKairos(w, s);
        const Workload b = readText(s.str(), "auto");
        QCOMPARE(b.name, std::string("rt"));
        QCOMPARE(b.meta.at("k"), std::string("v"));
        QCOMPARE(b.size(), std::size_t(2));
        QVERIFY(b.requests[0] == w.requests[1]); // sorted by arrival
        QVERIFY(b.requests[1] == w.requests[0]);
    }

    void malformed_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("line");
        QTest::addColumn<QString>("field");
        const QString az = "azure", ln = "lengths", na = "kairos", mc = "mooncake", au = "auto";
        const QString azh = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
        QTest::newRow("azure bad number")
            << azh + "2023-11-16 18:15:46.68,374,44\n2023-11-16 18:15:47.00,3x4,44\n"
            << az << 3 << "ContextTokens";
        QTest::newRow("azure negative") << azh + "2023-11-16 18:15:46.68,374,-4\n"
                                        << az << 2 << "GeneratedTokens";
        QTest::newRow("azure zero output") << azh + "2023-11-16 18:15:46.68,374,0\n"
                                           << az << 2 << "GeneratedTokens";
        QTest::newRow("azure bad time") << azh + "2023-13-16 18:15:46.68,374,4\n"
                                        << az << 2 << "TIMESTAMP";
        QTest::newRow("azure missing column")
            << "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.68,374\n"
            << az << 1 << "GeneratedTokens";
        QTest::newRow("azure short row") << azh + "2023-11-16 18:15:46.68,374\n" << az << 2 << "";
        QTest::newRow("empty file") << "" << az << 0 << "";
        QTest::newRow("only blank lines") << "\n\n" << au << 0 << "";
        QTest::newRow("header only") << azh << az << 0 << "";
        QTest::newRow("lengths negative") << "num_prefill_tokens,num_decode_tokens\n10,20\n-5,3\n"
                                          << ln << 3 << "num_prefill_tokens";
        QTest::newRow("lengths empty field") << "num_prefill_tokens,num_decode_tokens\n10,\n"
                                             << ln << 2 << "num_decode_tokens";
        QTest::newRow("mooncake bad json")
            << "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 2}\n{\"timestamp\": 1,\n"
            << mc << 2 << "";
        QTest::newRow("mooncake missing") << "{\"timestamp\": 0, \"input_length\": 5}\n"
                                          << mc << 1 << "output_length";
        QTest::newRow("mooncake huge number")
            << "{\"timestamp\": 1e999, \"input_length\": 5, \"output_length\": 2}\n"
            << mc << 1 << "";
        QTest::newRow("native huge id") << "{\"kairos_workload\": 1}\n{\"id\": 1e300, \"arrival\": "
                                           "0, \"prompt\": 1, \"output\": 2}\n"
                                        << na << 2 << "id";
        QTest::newRow("mooncake string")
            << "{\"timestamp\": 0, \"input_length\": \"5\", \"output_length\": 2}\n"
            << mc << 1 << "input_length";
        const QString nh = "{\"kairos_workload\": 1, \"name\": \"x\"}\n";
        QTest::newRow("native negative") << nh + "{\"arrival\": 0, \"prompt\": -1, \"output\": 2}\n"
                                         << na << 2 << "prompt";
        QTest::newRow("native unknown field")
            << nh + "{\"arrival\": 0, \"prompt\": 1, \"output\": 2, \"outptu\": 3}\n"
            << na << 2 << "outptu";
        QTest::newRow("native segments sum") << nh + "{\"arrival\": 0, \"prompt\": 1, \"output\": "
                                                     "5, \"segments\": [[2, 1.0], [2, 0.5]]}\n"
                                             << na << 2 << "segments";
        QTest::newRow("native tuf slope")
            << nh + "{\"arrival\": 0, \"prompt\": 1, \"output\": 5, \"tuf\": {\"ert\": 1, "
                    "\"slope\": 2, \"beta\": 1}}\n"
            << na << 2 << "tuf.slope";
        QTest::newRow("native negative agent")
            << nh + "{\"arrival\": 0, \"prompt\": 1, \"output\": 2, \"agent\": -2}\n"
            << na << 2 << "agent";
        QTest::newRow("native no header") << "{\"arrival\": 0, \"prompt\": 1, \"output\": 2}\n"
                                          << na << 1 << "kairos_workload";
        QTest::newRow("native truncated") << "{\"kairos_workload\": 1, \"requests\": "
                                             "3}\n{\"arrival\": 0, \"prompt\": 1, \"output\": 2}\n"
                                          << na << 2 << "requests";
        // Two lines with one id (both answered to Find's id=0 and --inspect T,0): the later
        // line is named, and the first in its words.
        QTest::newRow("native duplicate id")
            << nh + "{\"id\": 0, \"arrival\": 0, \"prompt\": 1, \"output\": 2}\n"
                    "{\"id\": 5, \"arrival\": 1, \"prompt\": 1, \"output\": 2}\n"
                    "{\"id\": 0, \"arrival\": 2, \"prompt\": 1, \"output\": 2}\n"
            << na << 4 << "id";
        // A line without an id takes its row number: here 1, which line 2 gave too.
        QTest::newRow("native id = a row number")
            << nh + "{\"id\": 1, \"arrival\": 0, \"prompt\": 1, \"output\": 2}\n"
                    "{\"arrival\": 1, \"prompt\": 1, \"output\": 2}\n"
            << na << 3 << "id";
        QTest::newRow("unknown format") << "a,b,c\n1,2,3\n" << au << 1 << "";
    }

    void malformed() {
        QFETCH(QString, text);
        QFETCH(QString, format);
        QFETCH(int, line);
        QFETCH(QString, field);
        const QString msg =
            expectError([&] { readText(text.toStdString(), format.toStdString(), "bad.trace"); },
                        line, field.toStdString());
        QVERIFY2(msg.startsWith("bad.trace"), qPrintable(msg)); // names the file
        if (line > 0) QVERIFY2(msg.contains(QString("bad.trace:%1:").arg(line)), qPrintable(msg));
    }

    void missingFile() {
        expectError([] { readWorkload("/nonexistent/trace.csv"); }, 0, "");
    }

    void detection() {
        auto detected = [](const char* head) {
            const TraceFormat* f = detectTraceFormat(head);
            return f ? std::string(f->name) : std::string("none");
        };
        QCOMPARE(detected("TIMESTAMP,ContextTokens,GeneratedTokens"), std::string("azure"));
        QCOMPARE(detected("{\"kairos_workload\": 1}"), std::string("kairos"));
        QCOMPARE(detected("{\"timestamp\": 0, \"input_length\": 1}"), std::string("mooncake"));
        QCOMPARE(detected("num_prefill_tokens,num_decode_tokens"), std::string("lengths"));
        QCOMPARE(detected("Timestamp,Model,Request tokens,Response tokens"),
                 std::string("burstgpt"));
        QCOMPARE(detected("[{\"trigger time\": 0}]"), std::string("timelyllm"));
        QCOMPARE(detected("hello"), std::string("none"));
        QCOMPARE(detected("[1, 2]"), std::string("none"));
        QCOMPARE(detected("{\"a\": 1}"), std::string("none"));
    }

    // Every registered format, whatever it is: a unique name, file patterns, its fields
    // said; its sample is detected as itself and reads to requests, detected or named, and
    // the error for an undetectable file lists it. A row added without a working sample or
    // detector fails here.
    void everyFormatReadsItsSample() {
        std::set<std::string_view> names;
        QVERIFY(traceFormats().size() >= 6);
        for (const TraceFormat& f : traceFormats()) {
            const QString at = QString::fromUtf8(f.name.data(), int(f.name.size()));
            QVERIFY2(names.insert(f.name).second, qPrintable("two rows named " + at));
            QVERIFY2(f.name != "auto" && !f.title.empty() && !f.fields.empty() &&
                         f.extensions.rfind("*.", 0) == 0,
                     qPrintable(at));
            QVERIFY2(detectTraceFormat(f.sample) == &f, qPrintable(at + ": sample not detected"));
            const TraceFormat* named = nullptr;
            QVERIFY(parseTraceFormat(f.name, &named) && named == &f);
            const Workload a = readText(std::string(f.sample), "auto", "sample");
            const Workload b = readText(std::string(f.sample), std::string(f.name), "sample");
            QVERIFY2(a.size() >= 1, qPrintable(at));
            QVERIFY2(a.requests == b.requests, qPrintable(at));
            QCOMPARE(a.meta.at("format"), std::string(f.name));
            for (const Request& r : a.requests)
                QVERIFY2(r.prompt_tokens > 0 && r.output_tokens > 0, qPrintable(at));
        }
        const QString unknown = expectError([] { readText("a,b,c\n1,2,3\n", "auto", "x"); }, 1, "");
        for (const TraceFormat& f : traceFormats())
            QVERIFY2(unknown.contains(QString::fromUtf8(f.name.data(), int(f.name.size()))),
                     qPrintable(unknown));
        const TraceFormat* none = nullptr;
        QVERIFY(parseTraceFormat("auto", &none) && !none);
        QVERIFY(!parseTraceFormat("yaml", &none));
    }

    // The one reader of whole files (util/input_file.h): limits, NULs, FIFOs, devices.
    void inputFileLimits() {
        using kairos::InputError;
        using kairos::InputLimits;
        const InputLimits small{64, 16, true, "a test file"};
        auto write = [](const std::string& name, const std::string& text) {
            const std::string p = kairos::test::tempPath(name);
            std::ofstream(p, std::ios::binary) << text;
            return p;
        };
        // Whole text within the limits is returned as it is.
        const std::string ok = write("ok.txt", "a,b\n1,2\n");
        QCOMPARE(kairos::readInputFile(ok, small), std::string("a,b\n1,2\n"));
        auto message = [&](const std::string& path, const InputLimits& lim) {
            try {
                kairos::readInputFile(path, lim);
            } catch (const InputError& e) {
                return std::make_pair(e.line(), std::string(e.message()));
            }
            return std::make_pair(-1L, std::string("accepted"));
        };
        // A NUL on line 3 is named there; a line of 17 bytes is one too long.
        auto [l1, m1] = message(write("nul.txt", std::string("x\ny\nz\0z\n", 8)), small);
        QCOMPARE(l1, 3L);
        QVERIFY2(m1.find("a NUL byte") != std::string::npos, m1.c_str());
        auto [l2, m2] = message(write("long.txt", "short\n" + std::string(17, 'x') + "\n"), small);
        QCOMPARE(l2, 2L);
        QVERIFY2(m2.find("longer than 16 bytes") != std::string::npos, m2.c_str());
        QCOMPARE(message(write("sixteen.txt", std::string(16, 'x') + "\n"), small).first, -1L);
        // A regular file over the limit is refused before it is read.
        auto [l3, m3] = message(write("big.txt", std::string(65, '\n')), small);
        QVERIFY2(m3.find("the limit for a test file") != std::string::npos, m3.c_str());
        // A device is read up to the limit and refused past it; /dev/zero at its first NUL.
        const InputLimits binary{1000, 0, false, "a test file"};
        QVERIFY(message("/dev/zero", binary).second.find("larger than 1000 bytes") !=
                std::string::npos);
        QCOMPARE(message("/dev/zero", small).first, 1L);
        // A FIFO nobody writes reads as empty at once (never waited on).
        const std::string fifo = kairos::test::tempPath("fifo");
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const auto t0 = std::chrono::steady_clock::now();
        QCOMPARE(kairos::readInputFile(fifo, small), std::string());
        QVERIFY(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
        // A folder, a missing file and an empty path are errors naming them.
        QVERIFY(message(QDir::tempPath().toStdString(), small).second.find("is a folder") !=
                std::string::npos);
        QVERIFY(message(ok + ".missing", small).second.find("no such file") != std::string::npos);
        QVERIFY(message("", small).second.find("an empty path") != std::string::npos);
        // What was read is an input of the process.
        const auto inputs = kairos::inputsOfThisProcess();
        QVERIFY(std::find(inputs.begin(), inputs.end(), ok) != inputs.end());
    }
};

QTEST_GUILESS_MAIN(TestReaders)
#include "tst_readers.moc"
