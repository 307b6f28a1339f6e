//! Compile: a serialized [`SignatureFile`] into a runtime [`Signature`].
//!
//! Compilation validates everything the matcher relies on, each problem located in the
//! file: the id's shape and that it equals the file name, every regex (syntax and the
//! size limit), every `kind`, every template (syntax, and that each variable is a
//! capture of the signature or a context value), and that the signature yields atoms.

use std::collections::BTreeMap;

use regex::RegexBuilder;
use regex_syntax::ast::{self, Ast};
use serde::{Deserialize, Serialize};

use super::atoms::{self, AtomSet};
use super::error::{Code, Diagnostic};
use super::lazy::{could_be_big, Deflated, LazyExamples, LazyRegex};
use super::model::{self, Category, Severity, SignatureFile, Text};
use super::template::Template;
use crate::knowledge::cond::Tree;
use crate::knowledge::failure_kind::FailureKind;

/// Compiled size limit of one regex (defined with the lazy regex, which imports nothing
/// of this module).
pub use super::lazy::REGEX_SIZE_LIMIT;
/// Values the engine knows from the log besides captures.
/// (`env.*` values of the environment are accepted too: see [`crate::knowledge::vars`].)
pub const CONTEXT_VARIABLES: &[&str] = &["unit"];

/// A compiled leaf of a signature's `match`: a test on the log, or on the facts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Leaf {
    Message(LazyRegex),
    Contains(String),
    Exception(String),
    Text(LazyRegex),
    Frame {
        file: Option<LazyRegex>,
        function: Option<LazyRegex>,
    },
    Kind(FailureKind),
    Stream(LazyRegex),
    /// A condition on environment facts (three-valued).
    Fact(crate::knowledge::cond::Fact),
}

/// A compiled `match` tree (the one condition tree, [`Tree`]).
pub type Cond = Tree<Leaf>;

/// A compiled remediation step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    pub description: String,
    pub command: Option<Template>,
    pub when: Option<String>,
    /// Fact condition (see [`crate::knowledge::cond`]).
    pub condition: Option<crate::knowledge::cond::FactCond>,
}

/// What a signature says once a diagnosis names it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Prose {
    pub explain: String,
    /// Environment-dependent sentences of the explanation.
    pub explain_env: Vec<(Option<crate::knowledge::cond::FactCond>, String)>,
    pub remediation: Vec<Step>,
    pub references: Vec<String>,
}

/// A signature ready for matching.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Signature {
    pub id: String,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    pub projects: Vec<String>,
    pub tags: Vec<String>,
    pub consequence_of: Vec<String>,
    /// Benign signatures whose lines may still be evidence for it.
    pub overrides_benign: Vec<String>,
    /// INFO/DEBUG lines alone may be its evidence.
    pub info_evidence: bool,
    pub cond: Cond,
    /// Any one of these occurs in a failure this signature matches (lowercase).
    pub atoms: AtomSet,
    /// Its explanation, remediation and references (read on first use in a frozen
    /// library, see [`Deflated`]: only the signatures a diagnosis names need them).
    pub prose: Deflated<Prose>,
    /// Its examples (read on first use in a frozen library, see [`LazyExamples`]).
    pub examples: LazyExamples,
    /// The file it was loaded from.
    pub file: String,
    /// Full-match patterns of the named captures, for checking values before they enter
    /// a command.
    pub capture_patterns: BTreeMap<String, LazyRegex>,
    /// How specific the conditions are (regexes with captures count most).
    pub specificity: u32,
    /// Which layer of knowledge it comes from (a signature file, a code table).
    pub layer: super::table::Layer,
    /// The highest confidence it may be given.
    pub max_confidence: Option<model::ConfidenceCap>,
    /// The capture holding the inner error this message wraps ([`crate::layers`]).
    pub wraps: Option<String>,
    /// Ids of the later failures this one explains.
    pub explains: Vec<String>,
    /// A benign marker of a finished run: the failures before it were survived.
    pub completes: bool,
    /// A rare failure with one public source (`rare: true`): one example suffices, the
    /// confidence is capped at `medium`, its corpus incidents count as seen.
    pub rare: bool,
}

impl Signature {
    /// Every regex of the signature: its conditions' and its captures' full-match
    /// patterns (built on first use, see [`crate::knowledge::signature::lazy`]).
    pub fn regexes(&self) -> Vec<&LazyRegex> {
        let mut out = Vec::new();
        self.cond.for_each_leaf(&mut |l, _| match l {
            Leaf::Message(r) | Leaf::Text(r) | Leaf::Stream(r) => out.push(r),
            Leaf::Frame { file, function } => out.extend(file.iter().chain(function.iter())),
            Leaf::Contains(_) | Leaf::Exception(_) | Leaf::Kind(_) | Leaf::Fact(_) => {}
        });
        out.extend(self.capture_patterns.values());
        out
    }
}

struct Ctx<'a> {
    file: &'a str,
    source: &'a str,
    errors: Vec<Diagnostic>,
    captures: BTreeMap<String, LazyRegex>,
    specificity: u32,
}

impl Ctx<'_> {
    fn err(&mut self, code: Code, at: &Text, msg: String) {
        let d = Diagnostic::new(code, self.file, msg).at(
            self.source,
            at.referenced.line() as usize,
            at.referenced.column() as usize,
        );
        self.errors.push(d);
    }

    fn regex(&mut self, t: &Text) -> Option<LazyRegex> {
        let pat = t.value.as_str();
        // One parse serves the syntax check (the regex engine's own parser, so the same
        // errors), the captures, the size estimate and the atoms.
        let parsed = match ast::parse::Parser::new().parse(pat) {
            Ok(a) => a,
            Err(e) => {
                self.invalid_regex(t, &regex_syntax::Error::from(e).to_string());
                return None;
            }
        };
        let hir = match regex_syntax::hir::translate::Translator::new().translate(pat, &parsed) {
            Ok(h) => h,
            Err(e) => {
                self.invalid_regex(t, &regex_syntax::Error::from(e).to_string());
                return None;
            }
        };
        let re = if could_be_big(&hir, REGEX_SIZE_LIMIT) {
            match RegexBuilder::new(pat).size_limit(REGEX_SIZE_LIMIT).build() {
                Ok(re) => LazyRegex::built(re, REGEX_SIZE_LIMIT),
                Err(regex::Error::CompiledTooBig(n)) => {
                    self.err(
                        Code::E005,
                        t,
                        format!("regex is too big once compiled (limit {n} bytes); split it or make it narrower"),
                    );
                    return None;
                }
                Err(e) => {
                    self.invalid_regex(t, &e.to_string());
                    return None;
                }
            }
        } else {
            LazyRegex::deferred(pat, REGEX_SIZE_LIMIT)
        };
        self.collect_captures(t, &parsed);
        let has_captures = hir.properties().explicit_captures_len() > 0;
        self.specificity += 2 + u32::from(has_captures);
        Some(re.with_atoms(atoms::necessary(&hir)))
    }

    fn invalid_regex(&mut self, t: &Text, msg: &str) {
        let detail = msg.lines().last().unwrap_or(msg).trim().to_string();
        let pat = t.value.as_str();
        self.err(Code::E005, t, format!("invalid regex `{pat}`: {detail}"));
    }

    /// Records each named capture's own pattern (`^(?:…)$`, used to check a captured
    /// value). It is checked against the size limit here, at load: a capture that is
    /// small inside its pattern can weigh far more alone (flags of an enclosing group,
    /// such as `(?-u:…)`, do not carry over), and must be an error now, never a build
    /// past the limit at match time.
    fn collect_captures(&mut self, t: &Text, parsed: &Ast) {
        let pat = t.value.as_str();
        let ci = pat.starts_with("(?i)");
        let mut stack = vec![parsed];
        while let Some(a) = stack.pop() {
            match a {
                Ast::Group(g) => {
                    if let ast::GroupKind::CaptureName { name, .. } = &g.kind {
                        let sub = &pat[g.ast.span().start.offset..g.ast.span().end.offset];
                        let full = format!("{}^(?:{sub})$", if ci { "(?i)" } else { "" });
                        if !self.captures.contains_key(&name.name) {
                            if let Some(re) = self.capture_regex(t, &name.name, &full) {
                                self.captures.insert(name.name.clone(), re);
                            }
                        }
                    }
                    stack.push(&g.ast);
                }
                Ast::Concat(c) => stack.extend(c.asts.iter()),
                Ast::Alternation(c) => stack.extend(c.asts.iter()),
                Ast::Repetition(r) => stack.push(&r.ast),
                _ => {}
            }
        }
    }

    /// One capture's own pattern: deferred when it is far below the size limit, else
    /// built now (E005 when over the limit).
    fn capture_regex(&mut self, t: &Text, name: &str, full: &str) -> Option<LazyRegex> {
        let hir = regex_syntax::ParserBuilder::new()
            .build()
            .parse(full)
            .ok()?;
        if !could_be_big(&hir, REGEX_SIZE_LIMIT) {
            return Some(LazyRegex::deferred(full, REGEX_SIZE_LIMIT));
        }
        match RegexBuilder::new(full).size_limit(REGEX_SIZE_LIMIT).build() {
            Ok(re) => Some(LazyRegex::built(re, REGEX_SIZE_LIMIT)),
            Err(regex::Error::CompiledTooBig(n)) => {
                self.err(
                    Code::E005,
                    t,
                    format!("capture `{name}` is too big once compiled on its own (limit {n} bytes; flags of an enclosing group do not apply to it); narrow it or put its flags inside it"),
                );
                None
            }
            Err(_) => None,
        }
    }

    fn cond(&mut self, c: &model::Condition) -> Option<Cond> {
        use model::Condition as C;
        Some(Tree::Leaf(match c {
            C::Message(t) => Leaf::Message(self.regex(t)?),
            C::Text(t) => Leaf::Text(self.regex(t)?),
            C::Stream(t) => Leaf::Stream(self.regex(t)?),
            C::Contains(t) => {
                self.specificity += 1;
                Leaf::Contains(t.value.clone())
            }
            C::Exception(t) => {
                let name = t.value.trim();
                if name.is_empty() || name.contains(char::is_whitespace) {
                    self.err(
                        Code::E009,
                        t,
                        format!("`{}` is not an exception type name", t.value),
                    );
                    return None;
                }
                self.specificity += 1;
                Leaf::Exception(name.to_string())
            }
            C::Kind(t) => match FailureKind::parse(t.value.trim()) {
                Some(k) => Leaf::Kind(k),
                None => {
                    self.err(
                        Code::E009,
                        t,
                        format!(
                            "unknown failure kind `{}` (one of: {})",
                            t.value,
                            FailureKind::ALL
                                .iter()
                                .map(|k| k.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    );
                    return None;
                }
            },
            C::Frame(f) => {
                let file = match &f.file {
                    Some(t) => Some(self.regex(t)?),
                    None => None,
                };
                let function = match &f.function {
                    Some(t) => Some(self.regex(t)?),
                    None => None,
                };
                Leaf::Frame { file, function }
            }
            C::Package(p) => self.fact(&p.name, crate::knowledge::cond::compile_package(p))?,
            C::GpuCapability(t) => {
                self.fact(t, crate::knowledge::cond::compile_gpu_capability(t))?
            }
            C::Driver(t) => self.fact(t, crate::knowledge::cond::compile_driver(t))?,
            C::TorchCuda(t) => self.fact(t, crate::knowledge::cond::compile_torch_cuda(t))?,
            C::All(v) => return Some(Tree::All(self.conds(v)?)),
            C::Any(v) => return Some(Tree::Any(self.conds(v)?)),
            C::Not(b) => return Some(Tree::Not(Box::new(self.cond(b)?))),
        }))
    }

    fn fact(
        &mut self,
        at: &Text,
        r: Result<crate::knowledge::cond::Fact, crate::knowledge::cond::CondError>,
    ) -> Option<Leaf> {
        match r {
            Ok(f) => Some(Leaf::Fact(f)),
            Err(e) => {
                self.cond_error(at, e);
                None
            }
        }
    }

    fn cond_error(&mut self, at: &Text, e: crate::knowledge::cond::CondError) {
        let (line, col) = if e.line > 0 {
            (e.line, e.column)
        } else {
            (
                at.referenced.line() as usize,
                at.referenced.column() as usize,
            )
        };
        self.errors
            .push(Diagnostic::new(Code::E014, self.file, e.message).at(self.source, line, col));
    }

    /// A fact condition tree of a step or a note (`if:`).
    fn fact_tree(
        &mut self,
        at: &Text,
        c: &Option<crate::knowledge::cond::FactCondition>,
    ) -> Option<crate::knowledge::cond::FactCond> {
        let c = c.as_ref()?;
        let mut errs = Vec::new();
        let out = crate::knowledge::cond::compile(c, &mut errs);
        for e in errs {
            self.cond_error(at, e);
        }
        out
    }

    fn conds(&mut self, v: &[model::Condition]) -> Option<Vec<Cond>> {
        let mut out = Vec::with_capacity(v.len());
        let mut ok = true;
        for c in v {
            match self.cond(c) {
                Some(c) => out.push(c),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }
}

/// The necessary atoms of a compiled condition tree.
pub fn cond_atoms(c: &Cond) -> Option<AtomSet> {
    match c {
        Tree::Leaf(l) => leaf_atoms(l),
        Tree::Not(_) => None,
        Tree::All(v) => v.iter().filter_map(cond_atoms).max_by_key(atoms::strength),
        Tree::Any(v) => {
            let mut all = Vec::new();
            for c in v {
                for a in cond_atoms(c)? {
                    if !all.contains(&a) {
                        all.push(a);
                    }
                }
            }
            Some(all)
        }
    }
}

fn leaf_atoms(l: &Leaf) -> Option<AtomSet> {
    match l {
        Leaf::Message(re) | Leaf::Text(re) => regex_atoms(re),
        Leaf::Frame { file, function } => {
            let a = file.as_ref().and_then(regex_atoms);
            let b = function.as_ref().and_then(regex_atoms);
            match (a, b) {
                (Some(a), Some(b)) => Some(if atoms::strength(&a) >= atoms::strength(&b) {
                    a
                } else {
                    b
                }),
                (a, b) => a.or(b),
            }
        }
        Leaf::Contains(s) | Leaf::Exception(s) => atoms::of_literal(s),
        Leaf::Kind(_) | Leaf::Stream(_) | Leaf::Fact(_) => None,
    }
}

/// The necessary literals of the stream key a condition tree requires: those of a
/// `stream:` regex that must hold (the tree itself, or a child of a top-level `all`).
/// A line whose stream key has none of them (ASCII case-insensitively) cannot match.
pub fn stream_atoms(c: &Cond) -> Option<AtomSet> {
    match c {
        Tree::Leaf(Leaf::Stream(re)) => regex_atoms(re),
        Tree::All(v) => v.iter().find_map(|c| match c {
            Tree::Leaf(Leaf::Stream(re)) => regex_atoms(re),
            _ => None,
        }),
        _ => None,
    }
}

fn regex_atoms(re: &LazyRegex) -> Option<AtomSet> {
    re.atoms().cloned()
}

/// Parses a remediation command template, reporting (E007, located at the value) a
/// syntax error or each variable `unknown` has a message for. Shared by signatures and
/// compatibility rules, which differ only in the variables they know.
pub(crate) fn command_template(
    t: &Text,
    file: &str,
    source: &str,
    errors: &mut Vec<Diagnostic>,
    unknown: impl Fn(&str) -> Option<String>,
) -> Option<Template> {
    let (line, column) = (t.referenced.line() as usize, t.referenced.column() as usize);
    match Template::parse(&t.value) {
        Ok(tpl) => {
            for v in tpl.variables() {
                if let Some(msg) = unknown(v) {
                    errors.push(Diagnostic::new(Code::E007, file, msg).at(source, line, column));
                }
            }
            Some(tpl)
        }
        Err(e) => {
            let msg = format!("bad command template at offset {}: {}", e.offset, e.message);
            errors.push(Diagnostic::new(Code::E007, file, msg).at(source, line, column));
            None
        }
    }
}

/// The parts of a signature compiled one by one (what [`compile`] puts together).
impl Ctx<'_> {
    /// The atoms: the file's own (E006 when one is short), else those the condition
    /// yields (E006 when none is usable).
    fn atoms(&mut self, f: &SignatureFile, cond: Option<&Cond>) -> Option<AtomSet> {
        let explicit: Vec<String> = f
            .atoms
            .iter()
            .map(|a| a.value.to_ascii_lowercase())
            .collect();
        for a in &f.atoms {
            if a.value.len() < atoms::MIN_ATOM_LEN {
                self.err(
                    Code::E006,
                    a,
                    format!(
                        "atom `{}` is shorter than {} characters",
                        a.value,
                        atoms::MIN_ATOM_LEN
                    ),
                );
            }
        }
        let atoms = if !explicit.is_empty() {
            Some(explicit)
        } else {
            cond.and_then(cond_atoms)
        };
        if cond.is_some() && atoms.is_none() {
            self.err(
                Code::E006,
                &f.id,
                "no usable atom: no condition yields a literal of 3 or more characters that every match must contain; add a `message`/`text` regex with a literal part, an `exception`, or give `atoms:`".to_string(),
            );
        }
        atoms
    }

    /// The remediation steps, their command templates checked against the captures.
    fn remediation(&mut self, f: &SignatureFile) -> Vec<Step> {
        let mut remediation = Vec::new();
        for s in &f.remediation {
            let command = s.command.as_ref().and_then(|t| {
                command_template(t, self.file, self.source, &mut self.errors, |v| {
                    if self.captures.contains_key(v)
                        || CONTEXT_VARIABLES.contains(&v)
                        || crate::knowledge::vars::is_known(v)
                    {
                        return None;
                    }
                    let known: Vec<&str> = self
                        .captures
                        .keys()
                        .map(String::as_str)
                        .chain(CONTEXT_VARIABLES.iter().copied())
                        .collect();
                    Some(format!("template variable `{v}` is not a capture of this signature nor a context value (known: {}, {})", known.join(", "), crate::knowledge::vars::known_list()))
                })
            });
            let at = s.command.as_ref().unwrap_or(&f.id);
            let condition = self.fact_tree(at, &s.condition);
            // a folded scalar (`description: >`) ends with a newline: prose is kept trimmed
            remediation.push(Step {
                description: s.description.trim().to_string(),
                command,
                when: s.when.as_deref().map(|w| w.trim().to_string()),
                condition,
            });
        }
        remediation
    }

    /// The `explain_env` notes, their variables checked (E007).
    fn explain_env(
        &mut self,
        f: &SignatureFile,
    ) -> Vec<(Option<crate::knowledge::cond::FactCond>, String)> {
        let mut explain_env = Vec::new();
        for n in &f.explain_env {
            for v in crate::knowledge::vars::prose_variables(&n.text) {
                if !crate::knowledge::vars::is_known(&v) {
                    self.err(
                        Code::E007,
                        &f.id,
                        format!(
                            "explain_env variable `{v}` is not an environment value (known: {})",
                            crate::knowledge::vars::known_list()
                        ),
                    );
                }
            }
            let c = self.fact_tree(&f.id, &n.condition);
            explain_env.push((c, n.text.trim().to_string()));
        }
        explain_env
    }

    /// `wraps` names a capture (E017); only a benign signature `completes` (E018).
    fn wraps_and_completes(&mut self, f: &SignatureFile) {
        if let Some(w) = &f.wraps {
            if !self.captures.contains_key(&w.value) {
                let msg = format!(
                    "wraps names `{}`, which is not a capture of the match",
                    w.value
                );
                self.err(Code::E017, w, msg);
            }
        }
        if f.completes && f.severity != Severity::Benign {
            let msg = "`completes: true` marks a finished run: only a `severity: benign` signature may say it";
            self.err(Code::E018, &f.id, msg.to_string());
        }
    }
}

/// Compiles one parsed file. `stem` is the file name without `.yaml`.
pub fn compile(
    f: &SignatureFile,
    file: &str,
    source: &str,
    stem: &str,
) -> Result<Signature, Vec<Diagnostic>> {
    let mut cx = Ctx {
        file,
        source,
        errors: Vec::new(),
        captures: BTreeMap::new(),
        specificity: 0,
    };
    let id = f.id.value.clone();
    cx.errors.extend(crate::knowledge::reading::check_id(
        &f.id, stem, file, source,
    ));
    let cond = cx.cond(&f.condition);
    let atoms = cx.atoms(f, cond.as_ref());
    check_prose(&mut cx, f);
    let remediation = cx.remediation(f);
    let explain_env = cx.explain_env(f);
    cx.wraps_and_completes(f);
    let (layer, max_confidence) = if f.fallback {
        let cap = Some(model::ConfidenceCap::Low);
        (super::table::Layer::Fallback, cap)
    } else {
        (
            super::table::Layer::Signature,
            rare_cap(f.rare, f.max_confidence),
        )
    };
    match (cond, atoms) {
        (Some(cond), Some(atoms)) if cx.errors.is_empty() => Ok(Signature {
            id,
            title: f.title.trim().to_string(),
            category: f.category,
            severity: f.severity,
            projects: f.projects.clone(),
            tags: f.tags.clone(),
            consequence_of: f.consequence_of.iter().map(|t| t.value.clone()).collect(),
            overrides_benign: f.overrides_benign.iter().map(|t| t.value.clone()).collect(),
            info_evidence: f.info_evidence,
            cond,
            atoms,
            prose: Deflated::new(Prose {
                explain: f.explain.trim().to_string(),
                explain_env,
                remediation,
                references: f.references.clone(),
            }),
            examples: LazyExamples::new(f.examples.clone()),
            file: file.to_string(),
            capture_patterns: cx.captures,
            specificity: cx.specificity,
            layer,
            max_confidence,
            wraps: f.wraps.as_ref().map(|w| w.value.clone()),
            explains: f.explains.iter().map(|t| t.value.clone()).collect(),
            completes: f.completes,
            rare: f.rare,
        }),
        _ => Err(cx.errors),
    }
}

/// A rare signature (one public source) is never more than `medium`: the lower of its
/// own cap and `medium`.
fn rare_cap(rare: bool, cap: Option<model::ConfidenceCap>) -> Option<model::ConfidenceCap> {
    let medium = model::ConfidenceCap::Medium;
    match (rare, cap) {
        (false, c) => c,
        (true, Some(c)) => Some(c.min(medium)),
        (true, None) => Some(medium),
    }
}

/// Prose (title, explain, a step's description and `when`) is filled from the captures
/// when a cause is reported: a `{{name}}` there that no regex of the match captures
/// would be printed as it is written, so it is an error (E007), as in a command.
fn check_prose(cx: &mut Ctx, f: &SignatureFile) {
    let mut fields: Vec<(&str, &str)> = vec![("title", &f.title), ("explain", &f.explain)];
    for s in &f.remediation {
        fields.push(("a step's description", &s.description));
        if let Some(w) = &s.when {
            fields.push(("a step's when", w));
        }
    }
    for (field, text) in fields {
        for v in crate::knowledge::vars::prose_variables(text) {
            if cx.captures.contains_key(&v) {
                continue;
            }
            let known: Vec<&str> = cx.captures.keys().map(String::as_str).collect();
            let msg = format!(
                "`{{{{{v}}}}}` in {field} is not a capture of this signature (prose is filled from the match's captures; known: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            );
            cx.err(Code::E007, &f.id, msg);
        }
    }
}
