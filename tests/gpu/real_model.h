#pragma once
// stories260K (../shared/data/models/: a real 260K-parameter Llama trained on
// TinyStories, llama2.c's format), the trained model the live suites run.
#include "llm_config.h"
#include "transformer.h"

#include <cstdlib>
#include <string>

namespace kairos::test {

// KAIROS_DATA_DIR overrides the shared data folder.
inline std::string storiesPath() {
    const char* env = std::getenv("KAIROS_DATA_DIR");
    return std::string(env && *env ? env : KAIROS_SHARED_DATA) + "/models/stories260K.bin";
}

inline gpu::Transformer storiesModel() {
    gpu::TransformerOptions o;
    o.weights_dir = storiesPath();
    return gpu::Transformer(gpu::readLlama2cConfig(o.weights_dir), o);
}

} // namespace kairos::test
