//! lunmark's entry point: parse, run, map the outcome to an exit code.

fn main() {
    std::process::exit(lunmark::cli::main());
}
