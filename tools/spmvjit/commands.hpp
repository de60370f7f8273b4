// Entry points of the spmvjit subcommands; each returns the process exit code.
#pragma once

namespace spmvjit::cli {

int cmd_inspect(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_warmup(int argc, char** argv);
int cmd_gen(int argc, char** argv);

}  // namespace spmvjit::cli
