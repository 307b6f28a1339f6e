fn main() -> std::process::ExitCode {
    crashdoc::cli::run()
}
