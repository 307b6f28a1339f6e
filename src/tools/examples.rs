//! The examples knowledge carries, run as tests: one harness behind `crashdoc sig test`
//! (a signature's `match` and `no_match` logs, through the whole pipeline, prefilter
//! included) and `crashdoc rules test` (a rule's `fail` and `pass` reports, through the
//! report parsers and the rule's `when`).
//!
//! Each kind of knowledge says what its examples are ([`WithExamples`]) and judges one
//! ([`ExampleOutcome`]); [`run`] runs them into one [`TestReport`], rendered by
//! [`TestReport::text`] or as JSON.

use serde::Serialize;

use crate::engine::diagnosis::{BuildOptions, Diagnosis};
use crate::engine::matcher::{Compiled, EngineKind};
use crate::engine::pipeline::Engine;
use crate::env::eval::eval;
use crate::env::parse_text;
use crate::knowledge::cond::Truth;
use crate::knowledge::rules::{Rule, Rules};
use crate::knowledge::signature::{Severity, Signature};

/// The list an example is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExampleList {
    /// A signature's log that must produce it.
    Match,
    /// A signature's near-miss that must not.
    NoMatch,
    /// A rule's report that must break it.
    Fail,
    /// A rule's report that must not.
    Pass,
}

impl ExampleList {
    /// The list's key in the file.
    pub fn key(self) -> &'static str {
        match self {
            ExampleList::Match => "match",
            ExampleList::NoMatch => "no_match",
            ExampleList::Fail => "fail",
            ExampleList::Pass => "pass",
        }
    }
}

/// One example of a piece of knowledge.
#[derive(Debug, Clone, Copy)]
pub struct Example<'a> {
    pub list: ExampleList,
    /// 1-based, within its list.
    pub number: usize,
    /// The log or the report.
    pub text: &'a str,
    /// A positive signature example that must be the top cause.
    pub top: bool,
}

impl Example<'_> {
    /// The input name it is run under: `<id>#<list><number>`.
    pub fn input_name(&self, id: &str) -> String {
        format!("{id}#{}{}", self.list.key(), self.number)
    }
}

/// Knowledge that carries examples: a signature, a rule.
pub trait WithExamples {
    fn id(&self) -> &str;
    /// The file it was loaded from.
    fn file(&self) -> &str;
    /// Its examples, in file order.
    fn examples(&self) -> Vec<Example<'_>>;
}

fn numbered<'a>(
    list: ExampleList,
    items: impl IntoIterator<Item = (&'a str, bool)>,
) -> impl Iterator<Item = Example<'a>> {
    items
        .into_iter()
        .enumerate()
        .map(move |(i, (text, top))| Example {
            list,
            number: i + 1,
            text,
            top,
        })
}

impl WithExamples for Signature {
    fn id(&self) -> &str {
        &self.id
    }
    fn file(&self) -> &str {
        &self.file
    }
    fn examples(&self) -> Vec<Example<'_>> {
        let ex = &self.examples;
        numbered(
            ExampleList::Match,
            ex.matches.iter().map(|e| (e.log.as_str(), e.top)),
        )
        .chain(numbered(
            ExampleList::NoMatch,
            ex.no_match.iter().map(|e| (e.log.as_str(), false)),
        ))
        .collect()
    }
}

impl WithExamples for Rule {
    fn id(&self) -> &str {
        &self.id
    }
    fn file(&self) -> &str {
        &self.file
    }
    fn examples(&self) -> Vec<Example<'_>> {
        let ex = &self.examples;
        numbered(
            ExampleList::Fail,
            ex.fail.iter().map(|e| (e.env.as_str(), false)),
        )
        .chain(numbered(
            ExampleList::Pass,
            ex.pass.iter().map(|e| (e.env.as_str(), false)),
        ))
        .collect()
    }
}

/// What one example gave: whether it behaves as its list says (else why not), and
/// whether another piece of knowledge won it (an overlap: advice, not a failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleOutcome {
    pub verdict: Result<(), String>,
    pub overlap: Option<String>,
}

impl ExampleOutcome {
    pub fn pass() -> Self {
        ExampleOutcome {
            verdict: Ok(()),
            overlap: None,
        }
    }
    pub fn fail(why: String) -> Self {
        ExampleOutcome {
            verdict: Err(why),
            overlap: None,
        }
    }
    /// A pass (`ok`) or a failure with `why`.
    pub fn check(ok: bool, why: impl FnOnce() -> String) -> Self {
        if ok {
            Self::pass()
        } else {
            Self::fail(why())
        }
    }
}

/// The outcome of an example run.
#[derive(Debug, Default, Serialize)]
pub struct TestReport {
    pub passed: usize,
    pub failed: usize,
    /// Positive examples whose top cause is another piece of knowledge.
    pub overlaps: usize,
    /// Failures (`FAIL <id> (<file>): …`) and overlaps (`overlap <id>: …`), in order.
    pub messages: Vec<String>,
}

impl TestReport {
    fn record(&mut self, id: &str, file: &str, o: ExampleOutcome) {
        match o.verdict {
            Ok(()) => self.passed += 1,
            Err(why) => {
                self.failed += 1;
                self.messages.push(format!("FAIL {id} ({file}): {why}"));
            }
        }
        if let Some(o) = o.overlap {
            self.overlaps += 1;
            self.messages.push(format!("overlap {id}: {o}"));
        }
    }

    /// Every example behaved as its list says.
    pub fn ok(&self) -> bool {
        self.failed == 0
    }

    /// The messages, the overlap count (when there are overlaps) and the totals.
    pub fn text(&self) -> String {
        let mut text = String::new();
        for line in &self.messages {
            text.push_str(line);
            text.push('\n');
        }
        if self.overlaps > 0 {
            text.push_str(&format!(
                "{} overlap(s): a positive example won by another signature\n",
                self.overlaps
            ));
        }
        text.push_str(&format!("{} passed, {} failed\n", self.passed, self.failed));
        text
    }
}

/// Runs the examples of every item `select` picks, each judged by `judge`.
pub fn run<'a, K: WithExamples + 'a>(
    items: impl IntoIterator<Item = &'a K>,
    select: impl Fn(&K) -> bool,
    mut judge: impl FnMut(&K, &Example<'_>) -> ExampleOutcome,
) -> TestReport {
    let mut rep = TestReport::default();
    for k in items {
        if !select(k) {
            continue;
        }
        for ex in k.examples() {
            let o = judge(k, &ex);
            rep.record(k.id(), k.file(), o);
        }
    }
    rep
}

// ---------------------------------------------------------------- signatures

/// Whether signature `id` is shown under a cause: folded as its consequence, or as a
/// less specific signature on the same evidence ("also matches").
fn shown_under_a_cause(d: &Diagnosis, id: &str) -> bool {
    d.causes.iter().any(|c| {
        c.consequences
            .iter()
            .any(|q| q.signature.as_deref() == Some(id))
            || c.also_matches.iter().any(|a| a.signature == id)
    })
}

/// A positive example: the signature is a cause (the top one with `top: true`), shown
/// under one, or noise for a benign signature. Won by another: an overlap.
fn judge_match(s: &Signature, ex: &Example<'_>, d: &Diagnosis) -> ExampleOutcome {
    let n = ex.number;
    let in_causes = d.causes.iter().position(|c| c.signature == s.id);
    let ok = if s.severity == Severity::Benign {
        d.noise.iter().any(|x| x.signature == s.id)
    } else if ex.top {
        in_causes == Some(0)
    } else {
        in_causes.is_some() || shown_under_a_cause(d, &s.id)
    };
    let mut o = ExampleOutcome::check(ok, || {
        let got: Vec<&str> = d.causes.iter().map(|c| c.signature.as_str()).collect();
        let first = d.failures.first().map_or("none", |f| f.headline.as_str());
        format!(
            "example match #{n} does not produce it (got causes: [{}]; first failure: {first})",
            got.join(", ")
        )
    });
    let under = d
        .causes
        .iter()
        .find(|c| c.also_matches.iter().any(|a| a.signature == s.id));
    o.overlap = match (in_causes, under) {
        (Some(p), _) if p > 0 && !ex.top => Some(format!(
            "example match #{n} is won by {}",
            d.causes[0].signature
        )),
        (None, Some(c)) => Some(format!(
            "example match #{n} is won by {} (same evidence, more specific; shown as also matching)",
            c.signature
        )),
        _ => None,
    };
    o
}

/// A near-miss: the signature is nowhere in the diagnosis.
fn judge_no_match(s: &Signature, ex: &Example<'_>, d: &Diagnosis) -> ExampleOutcome {
    let hit = d.causes.iter().any(|c| c.signature == s.id)
        || d.noise.iter().any(|n| n.signature == s.id)
        || shown_under_a_cause(d, &s.id);
    ExampleOutcome::check(!hit, || format!("near-miss #{} matches", ex.number))
}

/// Runs every example of every signature through the pipeline (prefilter included).
pub fn test_signatures(compiled: &Compiled<'_>, filter: Option<&str>) -> TestReport {
    test_signatures_where(compiled, |s| filter.is_none_or(|f| s.id.contains(f)))
}

/// Runs the examples of the signatures `select` picks (the whole library is loaded, so
/// overlaps with any signature are seen).
pub fn test_signatures_where(
    compiled: &Compiled<'_>,
    select: impl Fn(&Signature) -> bool,
) -> TestReport {
    let mut engine = Engine::new(compiled, EngineKind::Prefilter);
    run(&compiled.library.signatures, select, |s, ex| {
        judge_signature(&mut engine, s, ex)
    })
}

/// Runs one example of a signature through `engine` and judges it (`sig test`, and
/// `sig lint`'s E024).
pub fn judge_signature(engine: &mut Engine<'_>, s: &Signature, ex: &Example<'_>) -> ExampleOutcome {
    let opts = BuildOptions { top: usize::MAX };
    let d = engine.diagnose_text(&ex.input_name(&s.id), ex.text, opts);
    match ex.list {
        ExampleList::NoMatch => judge_no_match(s, ex, &d),
        _ => judge_match(s, ex, &d),
    }
}

// ---------------------------------------------------------------- rules

/// A rule's example: the report yields facts (a report the parsers cannot read proves
/// nothing), and the rule's `when` is true on a `fail` report, not true on a `pass` one.
fn judge_rule(r: &Rule, ex: &Example<'_>) -> ExampleOutcome {
    let (key, n) = (ex.list.key(), ex.number);
    let facts = parse_text(&ex.input_name(&r.id), ex.text);
    if facts.is_empty() {
        return ExampleOutcome::fail(format!("example {key} #{n} yields no facts"));
    }
    let t = eval(&r.when, &facts, &mut Vec::new());
    let ok = (t == Truth::True) == (ex.list == ExampleList::Fail);
    ExampleOutcome::check(ok, || format!("example {key} #{n} evaluates to {t:?}"))
}

/// Runs every rule's examples (`crashdoc rules test`).
pub fn test_rules(rules: &Rules, filter: Option<&str>) -> TestReport {
    run(
        &rules.rules,
        |r| filter.is_none_or(|f| r.id.contains(f)),
        judge_rule,
    )
}
