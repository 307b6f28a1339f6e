//! The command line's cases as data (issue 31, trycmd as typos uses it): every
//! `tests/cmd/*.toml` runs the built binary with its `args` (in the repository root, or in
//! the case's `NAME.in/` folder when there is one), feeds `NAME.stdin` when present, and
//! compares the exit code and `NAME.stdout` / `NAME.stderr` with what it printed.
//! Bless after an intended change: `TRYCMD=overwrite cargo test --release --test
//! integration cli_cases`; tests/cmd/README.md says how to add a case.

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .register_bin(
            "crashdoc",
            std::path::Path::new(env!("CARGO_BIN_EXE_crashdoc")),
        )
        // the environment `crate::util::crashdoc` gives the assert_cmd tests: no colour,
        // no cache in the user's home, no library or config from the caller's shell
        .env("NO_COLOR", "1")
        .env("CRASHDOC_CACHE_DIR", "")
        .env("CRASHDOC_SIGNATURES", "")
        .env("CRASHDOC_NO_CONFIG", "1")
        .env("COLUMNS", "100")
        .case("tests/cmd/*.toml");
}
