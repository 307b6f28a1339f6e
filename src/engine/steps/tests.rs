//! The step tracker on short constructed logs (each line below is written for the test,
//! in the format the named tool prints).

use super::*;

fn block(log: &str) -> Option<(usize, usize)> {
    let mut s = Steps::new();
    for (i, l) in log.lines().enumerate() {
        let shape = LineShape::of(l.as_bytes());
        s.line(i + 1, shape, l, None, l.as_bytes());
    }
    s.block().map(|b| (b.start, b.end))
}

/// A tracker fed lines behind a CI runner's timestamp (`2026-…Z `), each message as the
/// pipeline hands it: the timestamp and the runner's `##[group]`/`##[error]` markers
/// peeled, the shape read from the raw line.
fn feed_stamped<'a>(lines: impl IntoIterator<Item = &'a str>) -> Steps {
    let mut s = Steps::new();
    for (i, l) in lines.into_iter().enumerate() {
        let message = l.split_once(' ').map_or(l, |(_, m)| m);
        let message = message.strip_prefix("##[group]").unwrap_or(message);
        let message = message.strip_prefix("##[error]").unwrap_or(message);
        s.line(
            i + 1,
            LineShape::of(l.as_bytes()),
            message,
            None,
            l.as_bytes(),
        );
    }
    s
}

#[test]
fn classes() {
    assert_eq!(
        classify(r#"The command "npm test" exited with 1."#, None),
        Some(Class::Terminal)
    );
    assert_eq!(
        classify("Process completed with exit code 2.", Some(Level::Error)),
        Some(Class::Terminal)
    );
    assert_eq!(classify("$ make test", None), Some(Class::StepStart));
    assert_eq!(
        classify("make: *** [all] Error 2", None),
        Some(Class::Generic)
    );
    assert_eq!(
        classify("npm ERR! code ELIFECYCLE", None),
        Some(Class::Generic)
    );
    assert_eq!(
        classify("src/a.c:3:5: error: expected ';'", None),
        Some(Class::Stated)
    );
    assert_eq!(
        classify("FAILED: [code=1] obj/a.o", None),
        Some(Class::Specific)
    );
    assert_eq!(
        classify("!!!!!!!!!! KeyboardInterrupt !!!!!!!!!!", None),
        Some(Class::Specific)
    );
    assert_eq!(
        classify("The operation was canceled.", Some(Level::Error)),
        Some(Class::Stating)
    );
    assert_eq!(classify("rake aborted!", None), Some(Class::Header));
    // zero counts, passing tests and informational lines are no failures
    assert_eq!(classify("Tests: 12 passed, 0 failures", None), None);
    assert_eq!(classify("test_error_handling PASSED", None), None);
    assert_eq!(
        classify("error handling configured", Some(Level::Info)),
        None
    );
    // "pass" as a verb is no passing test
    assert!(!benign(
        "ValueError: You can't pass `load_in_4bit` as a kwarg"
    ));
    assert!(benign("test_parse ... PASS"));
    // zero counts however they are aligned, file names and quiet-build progress lines
    assert_eq!(classify("# FAIL:  0", None), None);
    assert_eq!(
        classify("    GEN perl/build/lib/Git/LoadCPAN/Error.pm", None),
        None
    );
    assert_eq!(classify("see build/errors.txt for details", None), None);
    // PHPUnit's failure section, an indented compiler error
    assert_eq!(
        classify("There were 2 failures:", None),
        Some(Class::Header)
    );
    assert_eq!(
        classify("  test/a.coffee:8:25: error: unexpected identifier", None),
        Some(Class::Stated)
    );
    // sanitizers' reports and xcpretty's compile errors are a language's own errors
    assert_eq!(
        classify(
            "= ==16563==ERROR: AddressSanitizer: SEGV on unknown address 0x0",
            None
        ),
        Some(Class::Stated)
    );
    assert_eq!(
        classify("\u{274C}  /src/A.swift:97:2: unknown attribute 'x'", None),
        Some(Class::Stated)
    );
    assert_eq!(
        classify("src/a.c:3:5: runtime error: signed integer overflow", None),
        Some(Class::Stated)
    );
    // a line with none of the literals is never classified (the fast path skips it)
    assert_eq!(classify("all good here", None), None);
}

#[test]
fn first_cluster_of_the_strongest_kind_in_the_failing_step() {
    let log = "\
$ ./configure
checking for gcc... could not find it, using cc
$ make
cc -c a.c
a.c:3:5: error: expected ';' before '}' token
    3 |   return 0
      |           ^
make: *** [a.o] Error 1
The command \"make\" exited with 2.
$ echo done
error: after the end
";
    assert_eq!(block(log), Some((5, 8)));
}

#[test]
fn a_header_announces_the_block_after_it() {
    // a header that states the failure is the block's first line
    let log = "\
$ rake
rake aborted!
No Rakefile found (looking for: rakefile, Rakefile)
/usr/bin/ruby_executable_hooks:15:in `eval'

The command \"rake\" exited with 1.
";
    assert_eq!(block(log), Some((2, 4)));
    // a section's banner is not
    let log = "\
$ mocha
  2 passing
  1 failing

  1) parser
       rejects a bad tag:
     AssertionError: expected 1 to equal 2

The command \"mocha\" exited with 1.
";
    assert_eq!(block(log), Some((5, 7)));
}

#[test]
fn a_retried_failure_is_read_at_its_last_try() {
    let log = "\
$ git fetch
fatal: couldn't find remote ref refs/tags/x
Waiting 10 seconds before trying again
fatal: couldn't find remote ref refs/tags/x
The command \"git fetch\" exited with 128.
";
    assert_eq!(block(log).map(|b| b.0), Some(4));
}

#[test]
fn without_an_error_line_the_paragraph_above_the_terminal_line_is_the_block() {
    let log = "$ ./run.sh\nrunning\nThe command \"./run.sh\" exited with 1.\n";
    assert_eq!(block(log), Some((2, 3)));
    let log = "$ ./check.sh\nsetup done\n\nYour change is 3174 lines, over the limit\nof 2000.\n\nThe command \"./check.sh\" exited with 1.\n";
    assert_eq!(block(log), Some((4, 7)));
}

#[test]
fn a_generic_summary_reads_from_the_paragraph_above_it() {
    // yarn prints only that the script failed; the script said why just above
    let log = "$ yarn test\n  Package size limit has exceeded by 934 B\n  Size limit:   103 KB\n\nerror Command failed with exit code 3.\ninfo Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.\nThe command \"yarn test\" exited with 1.\n";
    assert_eq!(block(log), Some((2, 6)));
}

#[test]
fn travis_status_of_a_command_with_a_newline_inside_its_quotes() {
    assert_eq!(classify("\" exited with 1.", None), Some(Class::Terminal));
    assert_eq!(
        classify("Done. Your build exited with 1.", None),
        Some(Class::Terminal)
    );
    // npm-run-all's status of one script is no step's end
    assert_ne!(
        classify("ERROR: \"lint\" exited with 1.", None),
        Some(Class::Terminal)
    );
}

#[test]
fn a_test_runner_section_of_failures_outranks_an_earlier_stray_error() {
    // mocha's epilogue: the count of failures, then each failure numbered
    let log = "$ npm test\nTypeError: x is not a function (a warning of a plugin)\nstill running\n\n  119 passing (8s)\n  1 failing\n\n  1) Window opens:\n     Error: timeout of 2000ms exceeded.\n\nThe command \"npm test\" exited with 1.\n";
    assert_eq!(block(log), Some((8, 9)));
}

#[test]
fn shapes_read_past_escapes_and_carriage_returns() {
    assert!(LineShape::of(b"   ").blank);
    assert!(LineShape::of(b"\x1b[0m  at foo (a.js:1:2)").indented);
    assert!(LineShape::of(b"  at foo (a.js:1:2)").continuation);
    assert!(!LineShape::of(b"travis_time:start:1\r$ make").blank);
}

#[test]
fn a_runners_timestamp_keeps_a_blank_or_indented_line_s_shape() {
    let blank = LineShape::of(b"2026-07-28T23:19:32.5998236Z ");
    assert!(blank.blank);
    let indented = LineShape::of(b"2026-07-28T23:19:32.5998236Z   File \"x.py\", line 3");
    assert!(indented.indented && !indented.blank);
    let plain = LineShape::of(b"2026-07-28T23:19:32Z text");
    assert!(!plain.indented && !plain.blank);
    // not a timestamp: the line as it is
    assert!(!LineShape::of(b"2026-07-28 text").indented);
}

#[test]
fn a_compiler_s_error_outranks_the_build_tool_s_line_for_its_target() {
    let log = "[12/40] Building CXX object a.o\nFAILED: [code=1] a.o\n/usr/bin/c++ -c a.cc\na.cc: In function 'f':\na.cc:3:5: error: expected ';'\n    3 | int x\n";
    assert_eq!(block(log).map(|(start, _)| start), Some(5));
}

#[test]
fn ninja_names_the_failed_target_before_the_command_s_output() {
    let log = "[12/40] Building CXX object a.o\nFAILED: a.o\n/usr/bin/c++ -c a.cc\n/bin/sh: 1: c++: not found\n[13/40] Building CXX object b.o\n\nninja: build stopped: subcommand failed.\n\nERROR Backend subprocess exited when trying to invoke build_wheel\n";
    // the summaries after it are in reach of the cluster: the block starts at the target
    assert_eq!(block(log).map(|(start, _)| start), Some(2));
}

#[test]
fn gradle_s_summary_follows_the_failing_test_its_logger_printed() {
    let log = "> Task :test\n\ncom.example.ParserTest > parsesDates FAILED\n    java.lang.AssertionError: expected:<1> but was:<2>\n        at org.junit.Assert.fail(Assert.java:88)\n\n12 tests completed, 1 failed\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nExecution failed for task ':test'.\n> There were failing tests. See the report at: file:///build/index.html\n";
    assert_eq!(block(log).map(|(start, _)| start), Some(3));
    // with nothing before it, the summary is read with what follows
    let log = "> Task :compileJava\n\nFAILURE: Build failed with an exception.\n\n* What went wrong:\nCould not resolve all files for configuration ':compileClasspath'.\n";
    assert!(block(log).is_some());
}

#[test]
fn a_runner_that_says_why_the_job_ended_is_the_block() {
    // a job cancelled after a line with error words (the runner's `##[error]` prefix is
    // peeled by the pipeline before the tracker sees the message)
    let log = "##[group]Run tests\nsome output\nretrying: connection refused\nmore output\nThe operation was canceled.\n";
    assert_eq!(block(log), Some((5, 5)));
    // a failure stated in a tool's shape still comes first
    let log = "##[group]Run tests\nerror: linking failed\nThe operation was canceled.\n";
    assert_eq!(block(log), Some((2, 2)));
}

#[test]
fn a_numbered_test_record_is_read_from_its_number() {
    // ExUnit: the number, the test's file, then the exception indented under it
    let log = "Finished in 1.2 seconds\n\n  1) test greets (GreeterTest)\n     test/greeter_test.exs:5\n     ** (MatchError) no match of right hand side value: :error\n     code: :ok = Greeter.greet()\n\n";
    assert_eq!(block(log), Some((3, 6)));
}

#[test]
fn a_source_excerpt_leads_the_error_it_shows() {
    // Node's uncaught exception: the location, the source, a caret, a blank, the error
    let log = "> node build.js\n\n/app/build.js:31\n  foo(a, );\n         ^\n\nSyntaxError: Unexpected token )\n    at Module._compile (module.js:549:28)\n";
    assert_eq!(block(log), Some((3, 8)));
}

#[test]
fn a_pytest_record_runs_to_the_next_one() {
    // the banner, the source, a blank, the `E` lines, the file: one record; the next
    // banner starts another
    let log = "=== FAILURES ===\n___ test_add ___\n\n    def test_add():\n>       assert add(1, 1) == 3\nE       assert 2 == 3\n\ntests/test_math.py:4: AssertionError\n___ test_sub ___\n\n    def test_sub():\n";
    assert_eq!(block(log).map(|(_, end)| end), Some(8));
}

#[test]
fn phpunit_s_locations_after_a_blank_line_belong_to_the_test() {
    let log = "There was 1 failure:\n\n1) FooTest::testBar\nFailed asserting that false is true.\n\n/app/tests/FooTest.php:31\n/app/vendor/bin/phpunit:12\n\n2) FooTest::testBaz\nFailed asserting that 1 is 2.\n";
    assert_eq!(block(log), Some((3, 7)));
}

#[test]
fn tool_formats_that_state_a_failure_without_the_word_error() {
    // erlc prints an error as `file:line: message`, a warning with `Warning:`
    assert_eq!(
        classify(
            "src/rabbit_vhost.erl:91: field description undefined in record vhost",
            None
        ),
        Some(Class::Stated)
    );
    assert_eq!(
        classify("src/a.erl:12: Warning: variable 'X' is unused", None),
        None
    );
    // the JVM's uncaught exception, common_test's failed case
    assert_eq!(
        classify(
            "Exception in thread \"main\" java.lang.ExceptionInInitializerError",
            None
        ),
        Some(Class::Stated)
    );
    assert_eq!(
        classify("inet_SUITE:t_gethostnative failed on line 696", None),
        Some(Class::Specific)
    );
    // common_test names the last module the case executed (test_server_ctrl.erl:
    // `~w:~tw failed on line ~w`, `~w:~tw failed`): a helper module as well
    assert_eq!(
        classify("ct_helper:wait_for_reply failed on line 42", None),
        Some(Class::Specific)
    );
    assert_eq!(
        classify("ct_helper:init_per_group failed", None),
        Some(Class::Specific)
    );
    // a shell's trap message is no test case
    assert_ne!(
        classify("Script failed on line 12", None),
        Some(Class::Specific)
    );
    assert_eq!(classify("Issues :-(", None), Some(Class::Header));
}

#[test]
fn a_drawn_diagnostic_starts_at_its_cross() {
    // uv's resolver failure as miette draws it: the error after `×`, its causes under
    // it, then a hint with the word "failed" in it
    let log = "\
$ uv add torch==9.9.9
  \u{D7} No solution found when resolving dependencies:
  \u{2570}\u{2500}\u{25B6} Because there is no version of torch==9.9.9 and your project depends on
      torch==9.9.9, we can conclude that your project's requirements are unsatisfiable.
  help: If you want to add the package regardless of the failed resolution, provide the `--frozen`
        flag to skip locking and syncing.
";
    assert_eq!(block(log), Some((2, 6)));
    assert_eq!(classify("  \u{D7} ", None), None);
}

#[test]
fn lines_whose_error_words_are_no_failure() {
    // make went on (`-` before the recipe, or -i); prove's passing script; a module name
    assert_eq!(
        classify("make[1]: [/build/deps/proper] Error 1 (ignored)", None),
        None
    );
    assert_eq!(
        classify(
            "[05:37:05] t4151-am-abort.sh ....................... ok      893 ms",
            None
        ),
        None
    );
    assert_eq!(
        classify(
            "    Text.Pandoc.Emoji,Text.Pandoc.Error=pandoc-2.6:Text.Pandoc.Error",
            None
        ),
        None
    );
    // a qualified exception followed by its message is still one
    assert_eq!(
        classify("java.lang.IllegalStateException: closed", None),
        Some(Class::Stated)
    );
}

#[test]
fn a_name_holding_an_error_word_hides_only_that_word() {
    // a path's component (a Haskell package in a linker command) and a flag: no failure
    assert_eq!(
        classify(
            "/opt/ghc/7.10.3/bin/ghc -shared -optl-Wl,-rpath,/home/travis/.cabal/lib/x86_64-linux-ghc-7.10.3/fail-4.9.0.0-JMlLBjPXp01 -Werror",
            None
        ),
        None
    );
    assert!(benign("cc -Werror -c a.c"));
    // Ray's report of a dead worker names its exit type, and says what went wrong besides
    // (the start of a real raylet line, corpus/ray-train-host-oom-torchtrainer-worker-…)
    let raylet = "A worker died or was killed while executing a task by an unexpected system error. Worker exit type: SYSTEM_ERROR";
    assert!(!benign(raylet));
    assert_eq!(classify(raylet, None), Some(Class::Weak));
}

#[test]
fn awesome_bot_s_issues_announce_its_failing_links() {
    let log = "\
$ awesome_bot README.md --allow-ssl
> Will allow errors: 302
Checking URLs: \u{2713}x\u{2713}
  12. [L3035]  https://a.example Failed to open TCP connection to a.example:443

Issues :-(
> Links 
  1. [L3035]  https://a.example Failed to open TCP connection
> Dupes 
  None \u{2713}

Wrote results to ab-results-README.md.json
The command \"awesome_bot README.md --allow-ssl\" exited with 1.
";
    assert_eq!(block(log), Some((7, 10)));
}

#[test]
fn a_test_runner_s_verdict_outranks_the_exceptions_a_test_run_logs() {
    assert_eq!(
        classify("- rejects a bad peer *** FAILED ***", None),
        Some(Class::Verdict)
    );
    assert_eq!(
        classify("--- FAIL: TestParallel (2.74s)", None),
        Some(Class::Verdict)
    );
    assert_eq!(
        classify(
            "Firefox 60.0.0 (Windows 7.0.0) injector should throw FAILED",
            None
        ),
        Some(Class::Verdict)
    );
    assert_eq!(classify("  [-] runs all files", None), Some(Class::Verdict));
    let log = "\
$ sbt test
[info] DrainSpec:
com.example.TimeoutException: Failed to drain within the deadline
\tat com.example.Session.run(Session.scala:142)
[info] - drains *** FAILED ***
[info]   Expected SslException, but Failure was thrown (SslTest.scala:151)
[info] Run completed in 4 seconds.

The command \"sbt test\" exited with 1.
";
    assert_eq!(block(log), Some((5, 7)));
}

#[test]
fn the_memo_answers_what_classify_answers_through_repeats_and_evictions() {
    // constructed lines of several classes, then as many distinct ones as the memo has
    // slots (every slot overwritten), then the first ones again
    let mut lines: Vec<(String, Option<Level>)> = vec![
        ("make: *** [all] Error 2".into(), None),
        (
            "Process completed with exit code 2.".into(),
            Some(Level::Error),
        ),
        ("Process completed with exit code 2.".into(), None),
        ("RuntimeError: CUDA error: out of memory".into(), None),
        (
            "RuntimeError: CUDA error: out of memory".into(),
            Some(Level::Warning),
        ),
        ("  File \"train.py\", line 3, in <module>".into(), None),
        ("error: could not compile `foo`".into(), None),
        ("all 12 tests passed".into(), None),
        (format!("error: {}", "x".repeat(MEMO_MAX_BYTES)), None),
    ];
    lines.extend((0..MEMO_SLOTS + 7).map(|i| (format!("error: step {i} failed"), None)));
    let again = lines[..9].to_vec();
    lines.extend(again);
    let mut memo = Memo::default();
    for _ in 0..2 {
        for (m, level) in &lines {
            assert_eq!(
                memo.classify(m, *level),
                classify(m, *level),
                "{m:?} {level:?}"
            );
        }
    }
}

#[test]
fn a_traced_script_s_failing_exit_says_why_in_the_lines_it_printed() {
    // bash `set -x`: a check, the messages the script echoes, its exit; an error word
    // earlier in the step (a report upload that failed and went on) is not the failure
    let log = "Failed to upload the test reports: access denied\nreal\t1m2.000s\n+ git status --porcelain\n+ [[ -n ?? build/ ]]\n+ echo 'Build left the checkout dirty'\nBuild left the checkout dirty\n+ echo '?? build/'\n?? build/\n+ exit 1\n+ cleanup\n";
    assert_eq!(block(log), Some((6, 9)));
    // the same under a CI runner's timestamps
    let stamped: String = log
        .lines()
        .map(|l| format!("2026-07-30T02:41:07.7687643Z {l}\n"))
        .collect();
    let s = feed_stamped(stamped.lines());
    assert_eq!(s.block().map(|b| (b.start, b.end)), Some((6, 9)));
    // an exit the script printed nothing before is an ordinary line of the paragraph
    let log = "error: tests failed\n+ [[ 1 -ne 0 ]]\n+ exit 1\n";
    assert_eq!(block(log), Some((1, 3)));
    // a failure stated in a tool's shape still comes first
    let log = "src/a.c:3:1: error: expected ';'\n+ echo 'build failed'\nbuild failed\n+ exit 2\n";
    assert_eq!(block(log), Some((1, 3)));
}

#[test]
fn a_github_actions_step_starts_at_its_group_marker_under_a_timestamp() {
    // the pipeline peels `##[group]` off the message: the step start is read from the raw line
    let raw = [
        "2026-07-30T07:22:18.0000000Z ##[group]Run ./setup.sh",
        "2026-07-30T07:22:18.1000000Z error: setup failed",
        "2026-07-30T07:22:18.2000000Z ##[group]Run ./build.sh",
        "2026-07-30T07:22:18.3000000Z compiling",
        "2026-07-30T07:22:18.4000000Z Build stopped, retrying failed",
        "2026-07-30T07:22:18.5000000Z ##[error]Process completed with exit code 1.",
    ];
    let b = feed_stamped(raw).block();
    assert_eq!(
        b.as_ref().map(|b| (b.start, b.end, b.step_start)),
        Some((5, 5, 3))
    );
}

#[test]
fn with_no_runner_status_a_step_that_failed_before_clean_up_steps_holds_the_block() {
    // a GitHub Actions step's own `##[error]` (peeled to the message), then a clean-up step
    // that printed nothing wrong: the failure is in the earlier step
    let raw = [
        "2026-07-30T07:22:18.0000000Z ##[group]Run upload",
        "2026-07-30T07:22:18.1000000Z Error uploading logs.zip",
        "2026-07-30T07:22:18.2000000Z ##[group]Run cleanup",
        "2026-07-30T07:22:18.3000000Z removing files",
    ];
    let s = feed_stamped(raw);
    assert_eq!(s.block().map(|b| (b.start, b.end)), Some((2, 2)));
}

#[test]
fn a_collectors_prefix_alone_is_a_blank_line() {
    // the program wrote a blank line; journald, torchrun or Ray put their prefix on it
    for l in [
        "Jun 03 10:00:05 gpu-node-3 vllm[216054]: ",
        "Jun 03 10:00:05 gpu-node-3 vllm[216054]:",
        "[rank0]: ",
        "(Worker_TP0 pid=4242) ",
        "[pod/vllm-7d9f8b6c4-x2x9q/vllm] ",
    ] {
        assert!(LineShape::of(l.as_bytes()).blank, "{l:?}");
    }
    for l in [
        "[rank0]: Traceback (most recent call last):",
        "Traceback (most recent call last):",
        "[INFO]",
        "(see above)",
        "    main(args)",
    ] {
        assert!(!LineShape::of(l.as_bytes()).blank, "{l:?}");
    }
}

/// Real (copied verbatim from https://github.com/PyO3/maturin-action/issues/246, a CI
/// job's maturin build): cargo reports a failed build script under `Caused by:`, the
/// script's stdout first; its own error is under `--- stderr`, where the block starts.
const CARGO_BUILD_SCRIPT_INDENTED: &str = r#"...
🐍 Found CPython 3.9, CPython 3.10, CPython 3.11, CPython 3.12, CPython 3.13, PyPy 3.9, PyPy 3.10
...
📦 Built wheel for CPython 3.12 to dist/DiffeRT-0.0.8-cp312-cp312-manylinux_2_17_ppc64le.manylinux2014_ppc64le.whl
   Compiling pyo3-build-config v0.20.3
   Compiling pyo3-macros-backend v0.20.3
   Compiling pyo3-ffi v0.20.3
   Compiling pyo3 v0.20.3
error: failed to run custom build command for `pyo3-ffi v0.20.3`

Caused by:
  process didn't exit successfully: `/home/runner/work/DiffeRT/DiffeRT/target/release/build/pyo3-ffi-e115a4a9047a20ae/build-script-build` (exit status: 1)
  --- stdout
  cargo:rerun-if-env-changed=PYO3_PRINT_CONFIG
  cargo:rerun-if-env-changed=PYO3_USE_ABI3_FORWARD_COMPATIBILITY

  --- stderr
  error: the configured Python interpreter version (3.13) is newer than PyO3's maximum supported version (3.12)
  = help: please check if an updated version of PyO3 is available. Current version: 0.20.3
  = help: set PYO3_USE_ABI3_FORWARD_COMPATIBILITY=1 to suppress this check and build anyway using the stable ABI
warning: build failed, waiting for other jobs to finish...
💥 maturin failed
  Caused by: Failed to build a native library through cargo"#;

/// Real (copied verbatim from https://github.com/rust-lang/rust-openssl/issues/649, an
/// older cargo, its sections unindented and apart): the panic under `--- stderr`.
const CARGO_BUILD_SCRIPT_FLAT: &str = r#"error: failed to run custom build command for `openssl-sys v0.9.13`
process didn't exit successfully: `/tmp/cargo-install.LFNiDiry4kXH/release/build/openssl-sys-296a41af4533eec4/build-script-build` (exit code: 101)
--- stdout
run pkg_config fail: "`\"pkg-config\" \"--libs\" \"--cflags\" \"openssl\"` did not exit successfully: exit code: 1\n--- stderr\nPackage openssl was not found in the pkg-config search path.\nPerhaps you should add the directory containing `openssl.pc\'\nto the PKG_CONFIG_PATH environment variable\nNo package \'openssl\' found\n"

--- stderr
thread 'main' panicked at '

Could not find directory of OpenSSL installation, and this `-sys` crate cannot
proceed without this knowledge. If OpenSSL is installed and this crate had
trouble finding it,  you can set the `OPENSSL_DIR` environment variable for the
compilation process."#;

#[test]
fn a_failed_build_script_is_read_from_its_error_stream() {
    let (start, end) = block(CARGO_BUILD_SCRIPT_INDENTED).unwrap();
    assert_eq!(start, 18, "{start}-{end}");
    assert!(end >= 20, "{start}-{end}");
    let (start, _) = block(CARGO_BUILD_SCRIPT_FLAT).unwrap();
    assert_eq!(start, 7);
    // `--- stderr` inside a quoted string is no section
    assert_eq!(
        classify(
            r#"run pkg_config fail: "x\n--- stderr\nPackage openssl""#,
            None
        ),
        Some(Class::Weak)
    );
}

#[test]
fn a_long_stdout_does_not_hide_the_error_stream() {
    // the same report with a build script's stdout longer than a block spans (cargo
    // prints every probe of a `-sys` crate's script there): constructed from the real
    // report above, the stdout's probe line repeated
    let mut lines: Vec<&str> = CARGO_BUILD_SCRIPT_INDENTED.lines().collect();
    let probe = "  cargo:rerun-if-env-changed=PYO3_PRINT_CONFIG";
    let at = lines.iter().position(|l| *l == probe).unwrap();
    for _ in 0..100 {
        lines.insert(at, probe);
    }
    let (start, _) = block(&lines.join("\n")).unwrap();
    assert_eq!(lines[start - 1], "  error: the configured Python interpreter version (3.13) is newer than PyO3's maximum supported version (3.12)");
}

#[test]
fn elixirs_uncaught_exception_is_read_without_an_error_word() {
    // Real (copied verbatim from https://github.com/BennyHallett/obelisk/pull/23): Mix
    // refuses the Elixir version, in Elixir's `** (Exception) message` shape
    let mix = "** (Mix) You're trying to run :obelisk on Elixir v1.0.2 but it has declared in its mix.exs file it supports only Elixir ~> 1.0.3";
    assert_eq!(classify(mix, None), Some(Class::Specific));
}

#[test]
fn a_docker_instruction_is_a_step_of_its_own() {
    // constructed, in the format Docker's classic builder prints (`Step N/M : …`, the
    // instruction's output, ` ---> <id>` when it succeeded): an instruction that
    // succeeded after printing error words does not hold the failing block
    let log = "Step 5/9 : RUN cabal update
 ---> Running in 97e4d84c552e
Config file /root/.cabal/config not found.
Writing default configuration to /root/.cabal/config
 ---> db63e15f44a3
Step 6/9 : RUN cabal build
 ---> Running in 775f961e78fd
Resolving dependencies...
setup: can't find source for Formatter/JSON1 in src
The command '/bin/sh -c cabal build' returned a non-zero code: 1";
    assert_eq!(block(log), Some((9, 10)));
    assert!(LineShape::of(b"Step 12/27 : COPY . /app").step);
    assert!(LineShape::of(b"Step 1/3 : FROM nvidia/cuda:12.4.1-devel-ubuntu22.04").step);
    // a training loop's progress is no instruction
    assert!(!LineShape::of(b"Step 100/1000 : loss 0.25").step);
    assert!(!LineShape::of(b"Step 12 of 27: RUN").step);
}

/// Real (copied verbatim from https://github.com/kriasoft/babel-starter-kit/issues/2):
/// ESLint's stylish report, then npm's boilerplate.
const ESLINT_STYLISH: &str = r#"$ npm run lint

> functional-js@0.0.0 lint c:\Projects\github\functionalJs
> eslint src docs/js tools


tools\utils\compile.js
  35:18  error  Empty block statement  no-empty
  40:16  error  Empty block statement  no-empty

✖ 2 problems (2 errors, 0 warnings)


npm ERR! Windows_NT 6.3.9600
npm ERR! argv "c:\\Program Files\\nodejs\\node.exe" "c:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js" "run" "lint"
npm ERR! node v0.12.2
npm ERR! npm  v2.7.4
npm ERR! code ELIFECYCLE
npm ERR! functional-js@0.0.0 lint: `eslint src docs/js tools`
npm ERR! Exit status 1"#;

#[test]
fn a_linters_report_is_read_from_the_file_it_lists() {
    assert_eq!(block(ESLINT_STYLISH).map(|(s, _)| s), Some(7));
    assert!(block(ESLINT_STYLISH).is_some_and(|(_, e)| e >= 9));
}

/// Ruby's test runners (test/unit, minitest under `rails test`) print each failed test as
/// `Failure:` (or `Error:`), the test's name and place, then the message: the block starts
/// at the header. The run below is the one the Rails guides show (rails/rails,
/// guides/source/testing.md), verbatim.
#[test]
fn a_ruby_test_runners_failure_header_starts_the_block() {
    assert_eq!(classify("Failure:", None), Some(Class::Header));
    let log = "\
$ bin/rails test test/models/article_test.rb
Running 1 tests in a single process (parallelization threshold is 50)
Run options: --seed 44656

# Running:

F

Failure:
ArticleTest#test_should_not_save_article_without_title [/path/to/blog/test/models/article_test.rb:4]:
Expected true to be nil or false


bin/rails test test/models/article_test.rb:4



Finished in 0.023918s, 41.8090 runs/s, 41.8090 assertions/s.

1 runs, 1 assertions, 1 failures, 0 errors, 0 skips
";
    assert_eq!(block(log).map(|b| b.0), Some(9));
}
