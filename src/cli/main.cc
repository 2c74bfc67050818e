#include "cli/cli.h"

int main(int argc, char** argv) { return kfpbench::cli::Main(argc, argv); }
