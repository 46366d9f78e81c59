// kairos-cli: the headless face of Kairos (simulate, generate, bench, fit-profile).
#include "commands.h"
#include "model/input_error.h"
#include "sched/scheduler.h"

#include <cstdio>
#include <stdexcept>

int main(int argc, char** argv) {
    CLI::App app{"Kairos: latency analysis of LLM serving under deadlines (headless)"};
    app.set_version_flag("--version", std::string("kairos-cli ") + KAIROS_VERSION);
    app.require_subcommand(1);
    kairos::cli::addSimulate(app);
    kairos::cli::addGenerate(app);
    kairos::cli::addBench(app);
    kairos::cli::addFitProfile(app);
    kairos::cli::addProfileCpu(app);
    kairos::cli::addProfiles(app);
    kairos::cli::addReproduce(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    } catch (const kairos::InputError& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", e.what());
        return 2;
    } catch (const kairos::SchedulerLoop& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", e.what());
        return 2;
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "kairos-cli: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kairos-cli: internal error: %s\n", e.what());
        return 3;
    }
    return 0;
}
