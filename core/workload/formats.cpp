#include "workload/formats.h"

#include "util/text.h"
#include "workload/readers.h"

namespace kairos {

namespace {

bool has(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

} // namespace

const std::vector<TraceFormat>& traceFormats() {
    using S = TraceFormat::Shape;
    static const std::vector<TraceFormat> rows = {
        {"kairos", "Kairos workload (JSONL)", "*.jsonl",
         "a header line {\"kairos_workload\": 1, \"name\", \"requests\" (their count), "
         "\"meta\"}, then one request a line: \"id\", \"arrival\" (s), \"prompt\" and "
         "\"output\" (tokens); optional \"class\", \"agent\", \"budget\" (s), \"tuf\", "
         "\"segments\", \"prefix\" (sample_traces/README.md)",
         "{\"kairos_workload\": 1, \"name\": \"sample\", \"requests\": 2}\n"
         "{\"id\": 0, \"arrival\": 0.0, \"prompt\": 512, \"output\": 128}\n"
         "{\"id\": 1, \"arrival\": 0.5, \"prompt\": 64, \"output\": 32, \"class\": \"urgent\", "
         "\"budget\": 2.0}\n",
         S::JsonLines,
         [](std::string_view first, std::string_view) { return has(first, "\"kairos_workload\""); },
         readKairos},
        {"azure", "Azure LLM inference trace (CSV)", "*.csv",
         "TIMESTAMP (YYYY-MM-DD HH:MM:SS[.fraction]), ContextTokens, GeneratedTokens",
         "TIMESTAMP,ContextTokens,GeneratedTokens\n"
         "2023-11-16 18:15:46.6805900,374,44\n"
         "2023-11-16 18:15:50.9951690,396,109\n",
         S::Csv,
         [](std::string_view first, std::string_view) {
             return has(first, "ContextTokens") && has(first, "GeneratedTokens");
         },
         readAzure},
        {"mooncake", "Mooncake trace (JSONL)", "*.jsonl",
         "one request a line: timestamp (ms), input_length, output_length; optional hash_ids, "
         "one id per 512-token block of the prompt (the same ids: a shared prefix)",
         "{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 52, \"hash_ids\": [0, "
         "1]}\n"
         "{\"timestamp\": 250, \"input_length\": 700, \"output_length\": 20, \"hash_ids\": [0, "
         "2]}\n",
         S::JsonLines,
         [](std::string_view first, std::string_view) { return has(first, "\"input_length\""); },
         readMooncake},
        {"lengths", "Prompt and output lengths (CSV)", "*.csv",
         "num_prefill_tokens, num_decode_tokens; no arrival times: --rate and --burstiness "
         "draw them (none: all arrive at 0)",
         "num_prefill_tokens,num_decode_tokens\n512,128\n64,32\n", S::Csv,
         [](std::string_view first, std::string_view) { return has(first, "num_prefill_tokens"); },
         readLengths, true},
        {"burstgpt", "BurstGPT trace (CSV)", "*.csv",
         "Timestamp (s), Request tokens, Response tokens; rows with zero tokens (failed "
         "requests) are skipped",
         "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
         "5,ChatGPT,472,18,490,Conversation log\n"
         "118,GPT-4,417,276,693,API log\n",
         S::Csv,
         [](std::string_view first, std::string_view) {
             return has(first, "Request tokens") && has(first, "Response tokens");
         },
         readBurstGpt},
        {"timelyllm", "TimelyLLM robot jobs (JSON)", "*.json",
         "a JSON list of jobs: \"trigger time\" (s), \"tuf\" [beta, ERT, zero-utility time], "
         "\"exe_time_detail\" [[skill, seconds], ...]; optional \"job_id\", \"agent_id\", "
         "\"trace_id\", \"task_input\"; plan texts from a *trace_set*.json beside the file",
         "[{\"job_id\": 0, \"trigger time\": 0.0, \"agent_id\": 1, \"trace_id\": 3, "
         "\"task_input\": \"find a cat\", \"exe_time_detail\": [[\"scan\", 2.0], [\"goto\", "
         "4.5]], \"tuf\": [1.0, 10.0, 30.0]}]\n",
         S::JsonList,
         [](std::string_view, std::string_view head) { return has(head, "\"trigger time\""); },
         readTimelyLlmFile},
    };
    return rows;
}

const TraceFormat* findTraceFormat(std::string_view name) {
    for (const TraceFormat& f : traceFormats())
        if (f.name == name) return &f;
    return nullptr;
}

const TraceFormat* detectTraceFormat(std::string_view head) {
    const std::string_view h = text::trim(head);
    if (h.empty()) return nullptr;
    const std::string_view first = text::trim(h.substr(0, h.find('\n')));
    const TraceFormat::Shape shape = h.front() == '['       ? TraceFormat::Shape::JsonList
                                     : first.front() == '{' ? TraceFormat::Shape::JsonLines
                                                            : TraceFormat::Shape::Csv;
    for (const TraceFormat& f : traceFormats())
        if (f.shape == shape && f.detect(first, h)) return &f;
    return nullptr;
}

std::string traceFormatNames(std::string_view sep) {
    std::string out;
    for (const TraceFormat& f : traceFormats()) {
        if (!out.empty()) out += sep;
        out += f.name;
    }
    return out;
}

} // namespace kairos
