//! Steps: where a unit of work ends, whether it failed, and which block of lines says why.
//!
//! A person who has never seen a failure reads a log from its structure: a CI runner prints
//! where each step starts (`$ cmd`, `##[group]Run …`, `section_start:`) and where the job
//! failed (`The command "…" exited with 1.`, `##[error]Process completed with exit code 1.`,
//! `ERROR: Job failed`); a build tool prints a summary after the real error (make's
//! `*** [t] Error 1`, `npm ERR!` boilerplate, Maven's `BUILD FAILURE`); a test runner
//! announces its details (`=== FAILURES ===`, `rake aborted!`); Gradle's `* What went wrong:`
//! summarises what its test logger or the compiler printed before it; a test runner's
//! verdict on a test (`--- FAIL: TestX`, ScalaTest's `*** FAILED ***`) names the test that
//! failed, where the exceptions a test run logs before it may be expected. The
//! failing block is the first cluster of error lines in the failing step that holds the
//! strongest kind of line the step has, read from its headline (or from a header that
//! states the failure, `rake aborted!`) to the end of its paragraph.
//!
//! A shell script traced by `set -x` that exits with a failing status (`+ exit 1`) ends
//! its step the same way, and says why in the lines it printed just before.
//!
//! Every rule here names a log format or a tool as it prints its lines ([`TERMINAL`],
//! [`STEP_START`], [`GENERIC`], [`HEADER`], [`SPECIFIC`]); none names a project.
//!
//! The tracker ([`Steps`]) streams: it keeps a few line numbers, never text, and stops
//! looking once the first step has failed. It sees every line's [`LineShape`] (blank,
//! indented: read from the raw bytes) and classifies only the lines the pipeline reads in
//! full. A line the fast path skips has no error or warning level and none of
//! [`literals`] in its message, so [`classify`] would find nothing in it: the brute-force
//! engine, which classifies every line, gets the same block.

use std::collections::VecDeque;

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexSet};

use crate::engine::normalize::{fnv1a, Level, Prebuilt, FNV_OFFSET};

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: Prebuilt<Regex> = Prebuilt::new(|| {
            #[allow(clippy::expect_used)]
            Regex::new($pat).expect("built-in step regex")
        });
    };
}

macro_rules! set {
    ($name:ident, $pats:expr) => {
        static $name: Prebuilt<RegexSet> = Prebuilt::new(|| {
            #[allow(clippy::expect_used)]
            RegexSet::new($pats).expect("built-in step regex set")
        });
    };
}

/// A CI step or job ended in failure: Travis CI, GitHub Actions (the `##[error]` prefix is
/// peeled into the level), GitLab CI, Jenkins, Buildkite.
const TERMINAL: &[&str] = &[
    r#"^The command ".*" (?:exited with [1-9][0-9]*|failed)"#,
    // Travis, a command with a newline inside its quotes: the status ends its last line
    r#"^[^"]*" exited with [1-9][0-9]*\.$"#,
    // Travis's job end, when no step said it failed
    r"^Done\. Your build exited with [1-9]",
    r"^(?:Error: )?Process completed with exit code [1-9]",
    r"^ERROR: Job failed",
    r"^ERROR: script returned exit code [1-9]",
    r"^Finished: FAILURE",
    r"Error: The command exited with status [1-9]",
];
set!(TERMINAL_SET, TERMINAL);

/// A CI runner ended the job and said why (GitHub Actions' cancellation, shutdown and
/// timeout messages): the line is the failure itself, not a status after it.
const STATING: &[&str] = &[
    r"^The operation was canceled\.",
    r"^The runner has received a shutdown signal",
    r"^The action '.*' has timed out",
    r"^The job (?:running on runner .* )?has exceeded the maximum execution time",
    r"^The job exceeded the maximum time limit",
];
set!(STATING_SET, STATING);

/// Where a CI step starts: the command line Travis and GitLab print, a GitHub Actions
/// group, a GitLab section.
const STEP_START: &str = r"^(?:\$ \S|##\[group\]Run |section_start:)";
re!(STEP_START_RE, STEP_START);

/// A shell's `set -x` trace of a script's own `exit` with a failing status (bash and
/// POSIX sh print each command after `PS4`, `+ ` by default).
const SCRIPT_EXIT: &str = r"^\+ exit [1-9][0-9]*$";
re!(SCRIPT_EXIT_RE, SCRIPT_EXIT);

/// Lines a tool prints after the real error, saying only that something failed: never the
/// headline while a more specific line is in the step.
const GENERIC: &[&str] = &[
    // make, ninja, shells and launchers
    r"^make(?:\[[0-9]+\])?: \*\*\* ",
    r"^ninja: build stopped",
    r"(?i)failed with exit code|returned non-zero exit|exit code:? [1-9]|\bexited with (?:code|status)",
    r"^Got exit code",
    r"^Command exited with",
    r"^exit status [1-9]",
    r"^Process finished with exit",
    r"^Aborted \(core",
    r"^Segmentation fault",
    r"^The process '.*' failed",
    r" [0-9]+/[0-9]+ failed!$| failed!$",
    r"^\*\*\* .*\bfailed$",
    // npm and yarn
    r"^npm ERR!",
    r"^error Command failed with exit code",
    r"^info Visit https",
    r"^Error: Command failed",
    // Maven, Gradle, Ant, sbt, rake, xcodebuild
    r"^\[ERROR\] (?:$|->|Re-run|To see|For more information|After correcting|\[Help|Failed to execute goal)",
    r"^\[ERROR\]$",
    r"^BUILD FAILED|^FAILURE: Build failed|^\* Try:|^\* What went wrong:|^Execution failed for task",
    r"^rake aborted|^Tasks: TOP",
    r"^\*\* (?:TEST|BUILD) FAILED|^The raw xcodebuild",
    // test-run summaries
    r"^Tests run:.*Failures:|^Failed tests:|^Tests in error:|^Results :",
    r"^[0-9]+ failed|^=+ .*\bfailed\b.*=+$|^=+ short test summary",
    r"^FAIL$|^FAIL\s+\S+\s+[0-9.]+s$",
    r"^[0-9]+ examples?, [1-9][0-9]* failures?|^Failed examples:",
    r"Error building site",
];
set!(GENERIC_SET, GENERIC);

/// A line that announces the details of a failure on the lines after it: the block
/// starts after it (awesome_bot's `Issues :-(` before its list of failing links, rake's
/// `rake aborted!`, PHPUnit's `There were 2 failures:`, mocha's `3 failing`…).
///
/// Cargo's report of a build script that failed (`error: failed to run custom build command
/// for `openssl-sys v0.9.80``, then `process didn't exit successfully: …`) prints what the
/// script wrote under `--- stdout` and `--- stderr`: the script's own error (a panic,
/// `error: the configured Python interpreter version … is newer than PyO3's …`) is in the
/// second, after a stdout that can run to a hundred lines of probes. [`STREAM_SECTION`].
const HEADER: &str = r"(?i)^(?:Issues :-\(|There (?:was|were) [0-9]+ (?:failures?|errors?):|[0-9]+ failing|rake aborted!|=+ (?:FAILURES|ERRORS) =+|TEST FAILURES|FAILURES!+|Failures?:|ERROR|Last [0-9]+ lines of output:|Caused by:|Errors?:|Failed tests?:|--- stderr)$";
re!(HEADER_RE, HEADER);

/// The header of the section where a failed child process's error stream is shown (cargo's
/// `--- stderr` under a build script's failure): within a block, the details move there.
const STREAM_SECTION: &str = "--- stderr";

/// Whether a [`Class::Header`] line (as the log shows it, a collector's prefix
/// included) is the [`STREAM_SECTION`] header: [`HEADER`] spans the whole message, so the
/// line ends with it.
fn stream_section(text: &str) -> bool {
    let t = visible(text).as_bytes();
    t.len() >= STREAM_SECTION.len()
        && t[t.len() - STREAM_SECTION.len()..].eq_ignore_ascii_case(STREAM_SECTION.as_bytes())
}

/// A header that is itself the failure's first line (`rake aborted!`, `Error:`; Ruby's
/// test/unit and minitest print each failed test as `Failure:` or `Error:`, then
/// `TestClass#test_name [file:line]:`, then the message), not a section's banner
/// (`=== FAILURES ===`, `3 failing`): the block starts at it.
const HEADER_STATING: &str = r"(?i)^(?:rake aborted!|ERROR|Errors?:|Failure:)$";
re!(HEADER_STATING_RE, HEADER_STATING);

/// A test runner's verdict on one test: outranks an exception printed before it (a test
/// run prints the exceptions its tests expect or log; the verdict names the test that
/// failed, and its record follows it).
const VERDICT: &[&str] = &[
    // go test, Python's unittest: `--- FAIL: TestX (0.02s)`, `FAIL: test_x (m.C)`
    r"^(?:--- )?FAIL:\s+\S",
    // ScalaTest: `- test name *** FAILED ***`
    r"\*\*\* FAILED \*\*\*",
    // Gradle's test logger: `Class > method FAILED`, the exception indented under it
    r"^\S+ > .+ FAILED$",
    // Karma: `Firefox 60.0.0 (Windows 7.0.0) suite test FAILED`
    r"^\w+ [0-9][0-9.]* \([^)]*\) .+ FAILED$",
    // Pester: `[-] test name`
    r"^\s*\[-\]\s+\S",
];
set!(VERDICT_SET, VERDICT);

/// A line stating a failure in a tool's own standard shape, with how strongly it says so
/// (a strong one is a candidate even where a benign word appears in it).
const SPECIFIC: &[(&str, bool)] = &[
    // compilers: `file:line[:col]: error`, rustc, CMake
    (
        r"(?i)^\s*\S+?:[0-9]+(?::[0-9]+)?:\s*(?:fatal |runtime )?error\b",
        true,
    ),
    // erlc's error: `src/m.erl:91: field f undefined in record r` (its warnings say so)
    (r"^\s*\S+\.[eh]rl:[0-9]+:(?:[0-9]+:)?\s+[^W\s]", true),
    // xcpretty's compile error: `❌  /path/File.swift:97:2: message`
    (r"^\s*\u{274C}\s+\S+?:[0-9]+(?::[0-9]+)?:\s", true),
    // ESLint's stylish report row: `  35:18  error  Empty block statement  no-empty`
    // (line:column, severity, message and rule in aligned columns, under the file's path)
    (lead::STYLISH_ROW_PATTERN, true),
    // a sanitizer's report (ASan, TSan, MSan, UBSan): `==1234==ERROR: AddressSanitizer: …`
    (r"==[0-9]+==\s*ERROR: [A-Za-z]+Sanitizer", true),
    (r"^error(?:\[E[0-9]+\])?:\s", true),
    // a diagnostic drawn by miette (uv, pixi, turborepo) or pip: `  × No solution found…`,
    // its causes under it (`╰─▶ Because …`)
    (r"^\s*\u{D7} \S", true),
    (r"^CMake Error", true),
    // exceptions (Python, Java, JavaScript…) and Rust panics
    (r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)(?::|$)", true),
    // the JVM's report of an exception no handler caught
    (r#"^Exception in thread "[^"]*" \S"#, true),
    (r"panicked at", true),
    // test runners: go test and unittest without a colon (with one it is a [`VERDICT`]),
    // pytest, mocha/jasmine, ExUnit, xUnit/TAP
    (r"^(?:--- )?FAIL:?\s+\S", false),
    (r"^FAILED:?\s", false),
    (r"^_{3,}\s.*\s_{3,}$", false),
    (r"^\s*[0-9]+\)\s+\S", false),
    (r"^\s*\*\*\s\(", false),
    (r"^\s*E\s{2,}\S", false),
    // Erlang/OTP common_test: `inet_SUITE:t_gethostnative failed on line 696`; the
    // module is the last one the test case executed (test_server_ctrl.erl prints
    // `~w:~tw failed on line ~w`), a helper module as often as the suite
    (r"^[a-z][\w@]*:\S+ failed(?: on line [0-9]+)?$", false),
    (r"\[FAIL\]|\bnot ok\b", false),
    // pytest's banner when a session stops (`!!! KeyboardInterrupt !!!`, `!!! Interrupted: …`)
    (r"^!{3,} .+ !{3,}$", false),
    // lintrunner: the file its findings follow
    (r"^>>> Lint for \S.*:$", false),
    // a line that starts by saying it is an error
    (r"^\s*(?:fatal|FATAL|ERROR|Error|error)\b[:!\s]", false),
    (r"^\[ERROR\]\s+\S", false),
];
static SPECIFIC_SET: Prebuilt<RegexSet> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    RegexSet::new(SPECIFIC.iter().map(|(p, _)| *p)).expect("built-in step regex set")
});

/// Words of an error, as a person scans for them.
const ERRORISH: &str = r"(?ix)
 \berror\b|\berrors?:|\bfail(?:ed|ure|ures|s)?\b|\bexception\b|\bfatal\b|\bpanic|traceback|\bE[0-9]{4}\b|\u{2716}|\u{2717}|\u{274C}
 |cannot\ |can't\ |could\ not|couldn't|unable\ to|not\ found|no\ such\ file|denied|refused|timed\ out|\babort|segmentation
 |undefined\ (?:reference|symbol|method|variable|local)";
re!(ERRORISH_RE, ERRORISH);

/// What makes a line's error words no error: a zero count, a passing test, an
/// informational line, a command being echoed, a quiet build's progress line (Kbuild-style
/// `  GEN  path`, `  CC  file.o`; GHC's `[ 3 of 16] Compiling Test.QuickCheck.Exception`).
const BENIGN: &str = r"(?ix)
 \b0\ (?:failures?|errors?|failed)\b|\b(?:fail(?:ures?|ed)?|errors?):?\s+0\b|\bno\ (?:errors?|failures?)\b|\bpassed\b|\bok\b\s*$|(?-i:\bPASS\b)|\u{2713}|\u{2714}
 |^\s*(?:INFO|DEBUG)\b|\[INFO\]
 |^\s*(?:\+\ |\$\ |\+{1,3}[a-z_])|^\s*(?:Compiling|Downloading|Installing|Collecting|Requirement|Building|Running|Fetching|Using)\b
 |^\s*(?-i:GEN|CC|CXX|LD|AR|AS|CCLD|CXXLD|LINK|MSGFMT|SUBDIR|CONF|DEP|ERLC|APP|INSTALL)\s+\S
 |\[\s*[0-9]+\ of\ [0-9]+\]\s+Compiling\b|\bskipp?ed\b|\(ignored\)\s*$|\s\.{2,}\s*ok\b";
re!(BENIGN_RE, BENIGN);

/// Words that hold an error word but say nothing failed: a flag, an identifier, a file
/// name or a path's component (`…/fail-4.9.0.0/…`), a qualified type named in passing.
/// Only the word itself is no error: the rest of the line is still read (`Worker exit
/// type: SYSTEM_ERROR` beside `an unexpected system error`).
const NAMING: &str = r"(?ix)
 -Werror|-Wno-|-Wall|-fno-|--error|error_?reporting|\w*_error\w*|\w*error_\w*|Error\.php|ErrorHandler
 |(?:errors?|fail\w*|exception\w*)\.[a-z]{1,5}\b|\w\.(?-i:Error|Exception)s?\b(?:[^:]|$)|allow_failures|fast_finish|on_failure|--fail-fast|failfast
 |/[\w.+-]*(?:error|fail|exception)[\w.+-]*|[\w.+-]*(?:error|fail|exception)[\w.+-]*/";
re!(NAMING_RE, NAMING);

// A warning: never the failing block's headline (it may still be a failure of its own).
re!(WARN_RE, r"(?i)\bwarn(?:ing)?\b");

/// Builds every regex and automaton of this module now, rather than at the first line that
/// needs it ([`crate::engine::warm_up_in_background`]).
pub fn warm_up() {
    Prebuilt::force(&BENIGN_RE);
    Prebuilt::force(&NAMING_RE);
    Prebuilt::force(&ERRORISH_RE);
    Prebuilt::force(&SPECIFIC_SET);
    Prebuilt::force(&GENERIC_SET);
    Prebuilt::force(&VERDICT_SET);
    Prebuilt::force(&TERMINAL_SET);
    Prebuilt::force(&STATING_SET);
    Prebuilt::force(&STEP_START_RE);
    Prebuilt::force(&HEADER_RE);
    Prebuilt::force(&HEADER_STATING_RE);
    Prebuilt::force(&WARN_RE);
    Prebuilt::force(&LITERAL_AC);
}

/// Whether a line's error words are no error: a zero count ("0 failures", "errors: 0"),
/// a passing test, an informational line, an echoed command, a progress line of a build or
/// install tool, or every error word inside a name ([`NAMING`]).
pub fn benign(message: &str) -> bool {
    let s = visible(message);
    BENIGN_RE.is_match(s)
        || (NAMING_RE.is_match(s) && !ERRORISH_RE.is_match(&NAMING_RE.replace_all(s, " ")))
}

/// Literals one of which every class but [`Class::Specific`] by an error level needs in a
/// line's message (case-insensitive): the pipeline reads a line with one of them in full.
const LITERALS: &[&str] = &[
    "error",
    "fail",
    "exception",
    "fatal",
    "panic",
    "traceback",
    "abort",
    "cannot ",
    "can't ",
    "could not",
    "couldn't",
    "unable to",
    "not found",
    "no such file",
    "denied",
    "refused",
    "timed out",
    "segmentation",
    "undefined ",
    "exit",
    "not ok",
    "\u{2716}",
    "\u{2717}",
    "\u{274C}",
    "$ ",
    "##[group]",
    "section_start:",
    "npm err",
    "info visit",
    "***",
    "results :",
    "canceled",
    "shutdown signal",
    "what went wrong",
    "caused by:",
    "lines of output",
    "___",
    "* try:",
    "tasks: top",
    "raw xcodebuild",
    "build stopped",
    "!!! ",
    ">>> lint for",
    "exceeded the maximum",
    "issues :-(",
    "[-] ",
    "\u{D7} ",
    "--- stderr",
    // Elixir's uncaught exception, throw or exit (`** (Mix) …`, `** (throw) …`), a
    // [`SPECIFIC`] shape whose words need not hold an error word
    "** (",
];

/// The literals [`classify`] needs (added to the prefilter's automaton).
pub fn literals() -> impl Iterator<Item = &'static str> {
    LITERALS.iter().copied()
}

static LITERAL_AC: Prebuilt<AhoCorasick> = Prebuilt::new(|| {
    #[allow(clippy::expect_used)]
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(LITERALS)
        .expect("built-in step literals")
});

/// What [`Steps::read`] reads of a line's message and level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRead {
    class: Option<Class>,
    hash: u64,
}

/// What one line is to the step structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A CI step or job ended in failure.
    Terminal,
    /// A CI runner ended the job and said why: the failure itself.
    Stating,
    /// A CI step starts.
    StepStart,
    /// A shell script traced by `set -x` exits with a failing status: `+ exit 1`.
    ScriptExit,
    /// The details of a failure follow.
    Header,
    /// A failure stated in a tool's standard shape.
    Specific,
    /// A test runner's verdict on a test.
    Verdict,
    /// A failure stated in a compiler's or a language's own shape (`file:line: error`,
    /// `error[E0425]:`, `ValueError:`, a panic): what a build or test runner's lines report.
    Stated,
    /// Error words, no standard shape.
    Weak,
    /// A summary that follows the real error.
    Generic,
}

impl Class {
    /// How much a person trusts the line as the headline: 5 is a tool's own section of
    /// failure details, 4 a test runner's verdict on a test (a test run prints the
    /// exceptions its tests expect or log before it), 3 a compiler's or a language's
    /// error, 2 a failure stated in a tool's shape, 1 error words, 0 only says something
    /// failed.
    fn strength(self) -> Option<usize> {
        match self {
            Class::Header => Some(5),
            Class::Verdict => Some(4),
            Class::Stated => Some(3),
            Class::Specific => Some(2),
            Class::Weak => Some(1),
            Class::Generic => Some(0),
            Class::Terminal | Class::Stating | Class::StepStart | Class::ScriptExit => None,
        }
    }
}

/// What a terminal shows of a message: the text after the last carriage return that
/// holds something (progress bars and CI fold markers are overwritten).
fn visible(message: &str) -> &str {
    message
        .rsplit('\r')
        .find(|p| !p.trim().is_empty())
        .unwrap_or("")
        .trim_end()
}

/// The class of a line from its message (prefixes peeled) and level.
pub fn classify(message: &str, level: Option<Level>) -> Option<Class> {
    if gated(message, level) {
        classify_gated(message, level)
    } else {
        None
    }
}

/// The cheap tests that leave most lines of a log unclassified: a warning or an
/// informational line is never a failing step's headline nor its end (and a
/// warning-heavy healthy log costs nothing here); a line with no error level and none of
/// the literals any class needs has no class.
fn gated(message: &str, level: Option<Level>) -> bool {
    if matches!(level, Some(Level::Warning | Level::Info | Level::Debug)) {
        return false;
    }
    matches!(level, Some(l) if l.is_error()) || LITERAL_AC.is_match(message)
}

/// Slots of [`Memo`].
const MEMO_SLOTS: usize = 1024;

/// Messages longer than this are classified without [`Memo`] (a traceback's lines are
/// short; a line can be a mebibyte, and 1,024 of them kept would be a gibibyte): the memo
/// holds at most `MEMO_SLOTS × MEMO_MAX_BYTES` bytes of text, 512 KiB.
const MEMO_MAX_BYTES: usize = 512;

/// The classes of the lines classified last, by message and level, direct-mapped
/// ([`MEMO_SLOTS`] slots, each message's text kept and compared, so a look-up is exact;
/// messages up to [`MEMO_MAX_BYTES`]):
/// a failure-heavy log repeats a traceback's lines per rank and per restart, and a repeat
/// is then one hash and one comparison instead of a run of regex sets. The answer is
/// [`classify`]'s, always.
#[derive(Debug, Default)]
struct Memo {
    slots: Vec<Option<Memoed>>,
}

/// A line [`Memo`] keeps: its level, its message and its class.
type Memoed = (Option<Level>, String, Option<Class>);

impl Memo {
    fn classify(&mut self, message: &str, level: Option<Level>) -> Option<Class> {
        if !gated(message, level) {
            return None;
        }
        if message.len() > MEMO_MAX_BYTES {
            return classify_gated(message, level);
        }
        if self.slots.is_empty() {
            self.slots = vec![None; MEMO_SLOTS];
        }
        let i = (fnv1a(FNV_OFFSET, message.as_bytes()) % MEMO_SLOTS as u64) as usize;
        if let Some((l, m, c)) = &self.slots[i] {
            if *l == level && m == message {
                return *c;
            }
        }
        let class = classify_gated(message, level);
        match &mut self.slots[i] {
            Some((l, m, c)) => {
                *l = level;
                m.clear();
                m.push_str(message);
                *c = class;
            }
            empty => *empty = Some((level, message.to_string(), class)),
        }
        class
    }
}

/// [`classify`] past its gate ([`gated`]).
fn classify_gated(message: &str, level: Option<Level>) -> Option<Class> {
    let s = visible(message);
    let t = s.trim_start();
    if t.is_empty() {
        return None;
    }
    if TERMINAL_SET.is_match(t) {
        return Some(Class::Terminal);
    }
    if STATING_SET.is_match(t) {
        return Some(Class::Stating);
    }
    if STEP_START_RE.is_match(t) {
        return Some(Class::StepStart);
    }
    if SCRIPT_EXIT_RE.is_match(t) {
        return Some(Class::ScriptExit);
    }
    if HEADER_RE.is_match(t) {
        return Some(Class::Header);
    }
    if GENERIC_SET.is_match(t) {
        return Some(Class::Generic);
    }
    // a verdict counts whatever surrounds it (sbt prints ScalaTest's under `[info]`)
    if VERDICT_SET.is_match(t) {
        return Some(Class::Verdict);
    }
    let benign = benign(s) || WARN_RE.is_match(s);
    if let Some(i) = SPECIFIC_SET.matches(s).iter().next() {
        let strong = SPECIFIC.get(i).is_some_and(|(_, strong)| *strong);
        if strong {
            return Some(Class::Stated);
        }
        if !benign {
            return Some(Class::Specific);
        }
        return None;
    }
    if matches!(level, Some(l) if l.is_error()) && !benign {
        return Some(Class::Specific);
    }
    (ERRORISH_RE.is_match(s) && !benign).then_some(Class::Weak)
}

/// What the tracker needs of every line: whether it is blank, whether it is indented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineShape {
    pub blank: bool,
    pub indented: bool,
    /// A continuation a stack or a compiler prints under an error (`at …`, `|`, `^`, `-->`).
    pub continuation: bool,
    /// GitHub Actions starts a step: `##[group]Run …` (read from the raw line, as the
    /// pipeline peels the runner's `##[group]` marker off the message the tracker sees), or
    /// Docker's classic builder starts an instruction ([`docker_step`]).
    pub step: bool,
}

impl LineShape {
    /// Read from the raw line (a byte-order mark, a CI runner's timestamp, ANSI codes and
    /// a carriage return's overwritten text count as nothing: the line is then looked at
    /// past them).
    pub fn of(bytes: &[u8]) -> LineShape {
        let bytes = skip_timestamp(bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes));
        let start = bytes.iter().rposition(|&b| b == b'\r').map_or(0, |i| i + 1);
        let mut rest = bytes.get(start..).unwrap_or_default();
        if rest.iter().all(u8::is_ascii_whitespace) && start > 0 {
            rest = bytes;
        }
        let rest = skip_escapes(rest);
        let blank = rest.iter().all(u8::is_ascii_whitespace) || blank_behind_prefix(rest);
        let indented = !blank && matches!(rest.first(), Some(b' ' | b'\t'));
        let t = rest.trim_ascii_start();
        let continuation = !blank
            && (t.starts_with(b"at ")
                || t.starts_with(b"|")
                || t.starts_with(b"^")
                || t.starts_with(b"~")
                || t.starts_with(b"-->"));
        LineShape {
            blank,
            indented,
            continuation,
            step: rest.starts_with(b"##[group]Run ") || docker_step(rest),
        }
    }
}

/// Docker's classic builder starts an instruction of a Dockerfile: `Step 9/18 : RUN …`
/// (its `Step %d/%d : %s`, the instruction's keyword first). The lines an instruction
/// prints before the next one are its own, and one that ended with ` ---> <id>`
/// succeeded: the failing instruction is the last.
fn docker_step(b: &[u8]) -> bool {
    let Some(rest) = b.strip_prefix(b"Step ") else {
        return false;
    };
    let digits = |r: &[u8]| r.iter().take_while(|c| c.is_ascii_digit()).count();
    let n = digits(rest);
    let Some(rest) = rest.get(n..).and_then(|r| r.strip_prefix(b"/")) else {
        return false;
    };
    let m = digits(rest);
    // the instruction: an upper-case keyword (`RUN`, `COPY`, `FROM`…)
    let keyword = |r: &[u8]| {
        let k = r.iter().take_while(|c| c.is_ascii_uppercase()).count();
        k >= 2 && matches!(r.get(k), None | Some(b' ' | b'\r'))
    };
    n > 0
        && m > 0
        && rest
            .get(m..)
            .and_then(|r| r.strip_prefix(b" : "))
            .is_some_and(keyword)
}

/// The longest line read as a prefix alone ([`blank_behind_prefix`]).
const MAX_PREFIX_ALONE: usize = 160;

/// A line that is only a collector's prefix (journald, syslog, a container's or a CI
/// runner's timestamp, `kubectl --prefix`, a process tag, a rank; the program wrote a
/// blank line): blank, as the paragraph it ends is read. Only a short line shaped like
/// a prefix alone is parsed (ending `]:` as journald's `ident[pid]:` and torchrun's
/// `[rank0]:` do, or one bracket or parenthesis from end to end): the stage stays a
/// byte test on ordinary lines.
fn blank_behind_prefix(b: &[u8]) -> bool {
    let t = b.trim_ascii_end();
    let shaped = t.ends_with(b"]:")
        || matches!(
            (t.first(), t.last()),
            (Some(b'['), Some(b']')) | (Some(b'('), Some(b')'))
        );
    shaped
        && t.len() <= MAX_PREFIX_ALONE
        && std::str::from_utf8(b)
            .ok()
            .and_then(crate::engine::normalize::transport)
            .is_some_and(|p| p.len >= t.len())
}

/// The bytes after the timestamp GitHub Actions and `docker logs --timestamps` put before
/// every line (`2026-07-30T10:37:27.7634265Z `): a blank or an indented line keeps its
/// shape behind it.
fn skip_timestamp(b: &[u8]) -> &[u8] {
    let shape = b"dddd-dd-ddTdd:dd:dd";
    let dated = b.len() > shape.len()
        && shape.iter().zip(b).all(|(&s, &c)| match s {
            b'd' => c.is_ascii_digit(),
            _ => c == s,
        });
    if !dated {
        return b;
    }
    let mut i = shape.len();
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if b.get(i) == Some(&b'Z') {
        i += 1;
    }
    match b.get(i) {
        Some(b' ') => b.get(i + 1..).unwrap_or_default(),
        None => &[],
        Some(_) => b,
    }
}

/// The command of a shell's `set -x` trace line (`+ cmd`, `++ cmd` in a substitution),
/// read past a CI runner's timestamp and escape sequences; `None` for any other line.
fn traced(raw: &[u8]) -> Option<&[u8]> {
    let b = skip_escapes(skip_timestamp(raw));
    let pluses = b.iter().take_while(|&&c| c == b'+').count();
    (pluses > 0)
        .then(|| b.get(pluses..))
        .flatten()
        .and_then(|rest| rest.strip_prefix(b" "))
}

/// The bytes after the escape sequences a line starts with.
fn skip_escapes(mut b: &[u8]) -> &[u8] {
    while let [0x1b, b'[', rest @ ..] = b {
        let end = rest.iter().position(|c| (0x40..=0x7e).contains(c));
        b = end.map_or(&[][..], |e| &rest[e + 1..]);
    }
    b
}

/// Lines of the paragraph before a generic summary kept for its block, at most.
const MAX_BEFORE: usize = 30;

/// The paragraph being read and the one before it, raw (clipped), their buffers reused:
/// a generic summary (`error Command failed with exit code 3.`, `npm ERR! …`) says only
/// that something failed, and the tool printed why in the paragraph just above it.
#[derive(Debug, Default)]
struct Recent {
    current: VecDeque<(usize, Vec<u8>)>,
    previous: VecDeque<(usize, Vec<u8>)>,
    spare: Vec<Vec<u8>>,
}

impl Recent {
    fn push(&mut self, line: usize, shape: LineShape, raw: &[u8]) {
        if shape.blank {
            if !self.current.is_empty() {
                std::mem::swap(&mut self.current, &mut self.previous);
                self.spare.extend(self.current.drain(..).map(|(_, b)| b));
            }
            return;
        }
        if self.current.len() >= MAX_BEFORE {
            if let Some((_, b)) = self.current.pop_front() {
                self.spare.push(b);
            }
        }
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(raw.get(..MAX_LINE_BYTES.min(raw.len())).unwrap_or_default());
        self.current.push_back((line, buf));
    }

    fn clear(&mut self) {
        self.spare.extend(self.current.drain(..).map(|(_, b)| b));
        self.spare.extend(self.previous.drain(..).map(|(_, b)| b));
    }

    /// The paragraph just above the line being read: the one it belongs to, else the one
    /// before the blank lines.
    fn above(&self) -> Vec<(usize, String)> {
        self.above_last(MAX_BEFORE)
    }

    /// What a traced script printed since its last traced command other than `echo` or
    /// `printf`, from the first line it printed to the end of the paragraph (the traced
    /// `echo`s between its lines included); nothing when it printed nothing.
    fn script_said(&self) -> Vec<(usize, String)> {
        let para = if self.current.is_empty() {
            &self.previous
        } else {
            &self.current
        };
        let mut first = None;
        for (i, (_, b)) in para.iter().enumerate().rev() {
            match traced(b) {
                None => first = Some(i),
                Some(cmd)
                    if matches!(cmd.split(|&c| c == b' ').next(), Some(b"echo" | b"printf")) => {}
                Some(_) => break,
            }
        }
        first.map_or_else(Vec::new, |i| {
            para.iter().skip(i).map(|(l, b)| (*l, shown(b))).collect()
        })
    }

    /// The last `n` lines of [`Recent::above`]'s paragraph.
    fn above_last(&self, n: usize) -> Vec<(usize, String)> {
        let para = if self.current.is_empty() {
            &self.previous
        } else {
            &self.current
        };
        let skip = para.len().saturating_sub(n);
        para.iter()
            .skip(skip)
            .map(|(l, b)| (*l, shown(b)))
            .collect()
    }
}

/// Candidate lines further apart than this start a new cluster.
const GAP: usize = 6;
/// Lines a block spans at most from its headline.
const MAX_BLOCK: usize = 60;

/// One cluster being followed: the first of a strength in the current step.
#[derive(Debug, Clone, Default)]
struct Track {
    /// The headline: the first line of the strength in its cluster (the last of identical
    /// ones: a retried failure is read at its last try).
    head: usize,
    head_hash: u64,
    /// Waiting for the line after a header.
    after_header: bool,
    /// The header line the block's details follow, when it states the failure itself.
    header: Option<usize>,
    /// The last candidate line of the cluster.
    last_candidate: usize,
    /// The block's last line so far.
    end: usize,
    /// A blank line was seen after the cluster (the paragraph may go on only indented).
    blank_after: bool,
    /// The block is complete.
    done: bool,
    /// The block's lines (number, text clipped), from its headline.
    lines: Vec<(usize, String)>,
    /// For a generic summary: the paragraph above it, where its tool said why.
    before: Vec<(usize, String)>,
    /// For any other line: the paragraph above it, where its record's header may be
    /// ([`lead::lead_in`]).
    lead: Vec<(usize, String)>,
    /// The headline opens a test's record ([`Track::record_step`]).
    record: bool,
}

/// The failing block of one input, as the tracker found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// 1-based physical lines, inclusive.
    pub start: usize,
    pub end: usize,
    /// The line that ended the failing step, when a CI runner printed one.
    pub terminal: Option<usize>,
    /// The line the failing step started at (1 when the log shows no step).
    pub step_start: usize,
    /// The block's lines as the log shows them (escape sequences removed, each clipped to
    /// [`MAX_LINE_BYTES`]), at most [`MAX_BLOCK`] of them.
    pub lines: Vec<(usize, String)>,
}

impl Block {
    /// The lines of the step a CI runner said failed, from its start to the runner's line;
    /// `None` when no runner said so.
    pub fn failed_step(&self) -> Option<std::ops::RangeInclusive<usize>> {
        self.terminal.map(|t| self.step_start..=t)
    }
}

/// Bytes of a block line kept for the report.
pub const MAX_LINE_BYTES: usize = 400;

/// A line's text as a terminal shows it, clipped.
fn shown(bytes: &[u8]) -> String {
    let clipped = bytes
        .get(..MAX_LINE_BYTES.min(bytes.len()))
        .unwrap_or_default();
    let t = crate::engine::ingest::clean_text(clipped);
    visible(&t).to_string()
}

/// The streaming tracker (see the module docs).
#[derive(Debug, Default)]
pub struct Steps {
    step_start: usize,
    terminal: Option<usize>,
    /// One track per strength (generic, weak, specific, stated, verdict, header).
    tracks: [Option<Track>; 6],
    /// Per strength, the first track of the steps before the current one: when no runner
    /// says which step failed (no terminal line) and the last step printed no error line,
    /// the failing block is read over them (a GitHub Actions step that failed without a
    /// status line, followed by the job's clean-up steps).
    earlier: [Option<Track>; 6],
    terminal_text: Option<String>,
    /// The paragraph above the terminal line: where a step that printed no error line
    /// said why it failed.
    terminal_before: Vec<(usize, String)>,
    /// The terminal line said why the job ended ([`STATING`]): it outranks error words
    /// and summaries, not a failure stated in a tool's shape.
    stating: bool,
    recent: Recent,
    memo: Memo,
}

impl Steps {
    pub fn new() -> Self {
        Steps {
            step_start: 1,
            ..Steps::default()
        }
    }

    /// Whether the failing step has ended: nothing more is looked at.
    pub fn frozen(&self) -> bool {
        self.terminal.is_some()
    }

    /// A line the pipeline skipped (no class); `raw` is the line as read.
    pub fn quiet(&mut self, line: usize, shape: LineShape, raw: &[u8]) {
        if !self.frozen() {
            self.advance(line, shape, None, 0, raw);
        }
    }

    /// A line read in full, with its message and level; `raw` is the line as read.
    pub fn line(
        &mut self,
        line: usize,
        shape: LineShape,
        message: &str,
        level: Option<Level>,
        raw: &[u8],
    ) {
        if self.frozen() {
            return;
        }
        let read = self.read(message, level);
        self.line_read(line, shape, read, raw);
    }

    /// What [`Steps::line`] reads of a message: a function of the message and level
    /// alone, so a caller that sees the same message again may keep it.
    pub fn read(&mut self, message: &str, level: Option<Level>) -> LineRead {
        let class = self.memo.classify(message, level);
        let hash = match class {
            Some(c) if c.strength().is_some() => {
                fnv1a(FNV_OFFSET, visible(message).trim().as_bytes())
            }
            _ => 0,
        };
        LineRead { class, hash }
    }

    /// [`Steps::line`] with what [`Steps::read`] read of the message.
    pub fn line_read(&mut self, line: usize, shape: LineShape, read: LineRead, raw: &[u8]) {
        if self.frozen() {
            return;
        }
        self.advance(line, shape, read.class, read.hash, raw);
    }

    fn advance(
        &mut self,
        line: usize,
        shape: LineShape,
        class: Option<Class>,
        hash: u64,
        raw: &[u8],
    ) {
        let class = if shape.step {
            Some(Class::StepStart)
        } else {
            class
        };
        match class {
            Some(Class::ScriptExit) if self.script_exit(line, raw) => return,
            Some(c @ (Class::Terminal | Class::Stating)) => {
                self.terminal = Some(line);
                self.terminal_text = Some(shown(raw));
                // a status is read with the paragraph above it; a reason is the block
                self.stating = c == Class::Stating;
                if !self.stating {
                    self.terminal_before = self.recent.above();
                }
                return;
            }
            Some(Class::StepStart) => {
                self.step_start = line;
                for (kept, t) in self.earlier.iter_mut().zip(&mut self.tracks) {
                    if kept.is_none() {
                        *kept = t.take();
                    }
                }
                self.tracks = Default::default();
                self.recent.clear();
                return;
            }
            _ => {}
        }
        let strength = class.and_then(Class::strength);
        for (i, slot) in self.tracks.iter_mut().enumerate() {
            match slot {
                Some(t) if !t.done => t.step(line, shape, class, hash, raw),
                None if strength == Some(i) => {
                    let mut t = Track::open(line, class, hash, raw);
                    match class {
                        Some(Class::Generic) => t.before = self.recent.above(),
                        Some(Class::Header) => {}
                        _ => t.lead = self.recent.above_last(lead::LINES),
                    }
                    *slot = Some(t);
                }
                _ => {}
            }
        }
        if class == Some(Class::Header) && stream_section(&shown(raw)) {
            self.stream_section(line, hash, raw);
        }
        self.recent.push(line, shape, raw);
    }

    /// A failed child's error stream starts ([`STREAM_SECTION`]): a header block that
    /// ended before it (cargo's `Caused by:`, closed by a long `--- stdout`) gives way to
    /// a block that starts here; one still open moves its headline here
    /// ([`Track::step`]).
    fn stream_section(&mut self, line: usize, hash: u64, raw: &[u8]) {
        let header = Class::Header.strength().unwrap_or_default();
        if let Some(slot) = self.tracks.get_mut(header) {
            if slot.as_ref().is_some_and(|t| t.done) {
                *slot = Some(Track::open(line, Some(Class::Header), hash, raw));
            }
        }
    }

    /// A shell script traced by `set -x` exits with a failing status (`+ exit 1`) after
    /// printing why: the lines it printed since its last traced command other than
    /// `echo`/`printf` are the failure, as a runner's stated reason is ([`STATING`]).
    /// Nothing when it printed nothing: the exit is then an ordinary line.
    fn script_exit(&mut self, line: usize, raw: &[u8]) -> bool {
        let said = self.recent.script_said();
        if said.is_empty() {
            return false;
        }
        self.terminal = Some(line);
        self.terminal_text = Some(shown(raw));
        self.stating = true;
        self.terminal_before = said;
        true
    }

    /// The failing block: the first cluster of the strongest kind in the failing step
    /// (the step a CI runner said failed, or the log's last step) — for a generic summary,
    /// from the paragraph above it —, else the line that ended the step (with the
    /// paragraph above it, unless the line itself says why).
    pub fn block(&self) -> Option<Block> {
        let make = |start: usize, end: usize, lines: Vec<(usize, String)>| Block {
            start,
            end: end.max(start),
            terminal: self.terminal,
            step_start: self.step_start,
            lines,
        };
        // a runner that said why the job ended outranks error words and summaries
        let weakest = if self.stating { 2 } else { 0 };
        let strongest = |tracks: &'_ [Option<Track>]| {
            let t = tracks.get(weakest..).unwrap_or_default();
            t.iter().rev().flatten().next().cloned()
        };
        let found = strongest(&self.tracks).or_else(|| {
            self.terminal
                .is_none()
                .then(|| strongest(&self.earlier))
                .flatten()
        });
        if let Some(t) = found {
            let start = t
                .before
                .first()
                .map(|(l, _)| *l)
                .or_else(|| {
                    let head_text = t
                        .lines
                        .iter()
                        .find(|(l, _)| *l == t.head)
                        .map_or("", |(_, s)| s.as_str());
                    lead::lead_in(t.head, head_text, &t.lead)
                })
                .or(t.header)
                .unwrap_or(t.head);
            let lines = t
                .before
                .iter()
                .chain(t.lead.iter().filter(|(l, _)| (start..t.head).contains(l)))
                .chain(t.lines.iter().filter(|(l, _)| (t.head..=t.end).contains(l)))
                .take(MAX_BLOCK)
                .cloned()
                .collect();
            return Some(make(start, t.end, lines));
        }
        self.terminal.map(|l| {
            let start = self.terminal_before.first().map_or(l, |(n, _)| *n);
            let lines = self
                .terminal_before
                .iter()
                .cloned()
                .chain(self.terminal_text.iter().map(|t| (l, t.clone())))
                .collect();
            make(start, l, lines)
        })
    }
}

impl Track {
    fn open(line: usize, class: Option<Class>, hash: u64, raw: &[u8]) -> Track {
        let text = shown(raw);
        let stating_header =
            class == Some(Class::Header) && HEADER_STATING_RE.is_match(text.trim());
        Track {
            record: lead::record_banner(&text),
            lines: vec![(line, text)],
            head: line,
            head_hash: hash,
            after_header: class == Some(Class::Header),
            header: stating_header.then_some(line),
            last_candidate: line,
            end: line,
            blank_after: false,
            done: false,
            before: Vec::new(),
            lead: Vec::new(),
        }
    }

    fn step(&mut self, line: usize, shape: LineShape, class: Option<Class>, hash: u64, raw: &[u8]) {
        let text = (line <= self.head + MAX_BLOCK).then(|| shown(raw));
        if let Some(t) = &text {
            self.lines.push((line, t.clone()));
        }
        if self.record {
            self.record_step(line, shape, class, text.as_deref());
            return;
        }
        if self.after_header {
            if shape.blank {
                return;
            }
            self.after_header = false;
            self.lead.clear();
            self.record = text.as_deref().is_some_and(lead::record_banner);
            self.lines.retain(|(l, _)| *l >= line);
            self.head = line;
            self.head_hash = hash;
            self.end = line;
            self.last_candidate = self.last_candidate.max(line);
            return;
        }
        if line > self.head + MAX_BLOCK {
            self.done = true;
            return;
        }
        if class == Some(Class::Header) && text.as_deref().is_some_and(stream_section) {
            self.after_header = true;
            return;
        }
        let candidate = class.and_then(Class::strength).is_some();
        if candidate && line - self.last_candidate <= GAP {
            // a retry: the same line again in the cluster is read at its last try
            if hash == self.head_hash && hash != 0 {
                self.head = line;
                self.lead.clear();
                self.lines.retain(|(l, _)| *l >= line);
            }
            self.last_candidate = line;
            self.end = line;
            self.blank_after = false;
            return;
        }
        if class == Some(Class::Generic) {
            self.done = true;
            return;
        }
        if shape.blank {
            self.blank_after = true;
            return;
        }
        if self.blank_after && !shape.indented {
            // a test runner's record goes on with where it failed (PHPUnit prints the
            // `path:line` list after a blank line)
            if text.as_deref().is_some_and(lead::location) {
                self.end = line;
                self.blank_after = false;
                return;
            }
            self.done = true;
            return;
        }
        self.end = line;
        self.blank_after = false;
    }

    /// A test's record (pytest's `____ test_name ____` banner): its source, its locals
    /// and its `E` lines are separated by blank lines, and the record ends where the next
    /// one starts or the session's summary does.
    fn record_step(
        &mut self,
        line: usize,
        shape: LineShape,
        class: Option<Class>,
        text: Option<&str>,
    ) {
        let Some(text) = text else {
            self.done = true;
            return;
        };
        if class == Some(Class::Generic) || lead::record_end(text) {
            self.done = true;
            return;
        }
        if !shape.blank {
            self.end = line;
        }
    }
}

mod lead;
#[cfg(test)]
mod tests;
