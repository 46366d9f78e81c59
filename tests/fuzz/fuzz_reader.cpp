// libFuzzer entry for one reader, chosen at compile time. Any input must either parse or
// throw InputError; anything else (a crash, a sanitizer report, another exception) is a bug.
#include "export/runlog_jsonl.h"
#include "model/input_error.h"
#include "weights/safetensors.h"
#include "workload/readers.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    try {
#if defined(KAIROS_FUZZ_READER_kairos)
        kairos::readKairos(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_azure)
        kairos::readAzure(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_mooncake)
        kairos::readMooncake(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_lengths)
        kairos::readLengths(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_burstgpt)
        kairos::readBurstGpt(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_timelyllm)
        kairos::readTimelyLlm(in, "fuzz", {{0, "?s('cat')==True{g('cat')}->False"}});
#elif defined(KAIROS_FUZZ_READER_runlog)
        kairos::readRunLogJsonl(in, "fuzz");
#elif defined(KAIROS_FUZZ_READER_safetensors)
        kairos::safetensors::parseHeader(reinterpret_cast<const std::byte*>(data), size, size,
                                         "fuzz");
#endif
    } catch (const kairos::InputError&) {
    }
    return 0;
}
