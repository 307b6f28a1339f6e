//! Compatibility rules: knowledge about environments, checked on facts alone.
//!
//! A rule (`rules/<area>/<id>.yaml`) states a combination of installed packages, GPU and
//! driver that is known to fail — flashinfer-cubin apart from flashinfer-python, a torch
//! build without kernels for the GPU, numpy 2 under a torch built against numpy 1 — with
//! its upstream source and its fix. Signatures recognize a failure once it is in a log;
//! rules recognize its cause before anything runs (`crashdoc preflight`) and add it to a
//! diagnosis when the environment is known (`crashdoc diagnose --env`).
//!
//! Rules are loaded by the same machinery as signatures ([`super::files`]): embedded
//! from `rules/` at build time, or from folders; parsed by serde-saphyr with the same
//! budget; every problem is a located
//! [`Diagnostic`] (E001 YAML, E002/E003 ids, E004 duplicates, E007 templates, E014 fact
//! conditions). A rule's `when` holds only when it is *true* on the facts — unknown
//! (the report does not tell) is not a problem. Each rule carries `examples`: reports
//! (real, or labelled as constructed) it must `fail` and reports it must `pass`;
//! [`crate::tools::examples`] runs them (`crashdoc rules test`); the engine checks facts
//! against them ([`crate::engine::findings`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cond::{self, FactCond, FactCondition};
use super::diagnostic::{Code, Diagnostic, LoadErrors, Text};
use super::reading::{
    check_id, file_stem, is_ignored, is_yaml, parse_yaml, read_sources, Ids, Kind,
};
use super::reading::{LibraryFile, Source};
use super::signature::compile::Step;
use super::signature::model::{self, Category, Severity};

/// One rule file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Kebab-case, unique, equal to the file name.
    #[schemars(with = "String")]
    pub id: Text,
    pub title: String,
    pub category: Category,
    /// `fatal`/`error` make preflight fail; `warning` is reported only.
    pub severity: Severity,
    #[serde(default)]
    pub projects: Vec<String>,
    /// The signature of the crash this combination produces, if there is one.
    #[serde(default)]
    pub signature: Option<String>,
    /// The problem: a condition on facts that is true when the environment is broken.
    pub when: FactCondition,
    /// What is wrong and why; `{{env.…}}` values are filled.
    pub explain: String,
    /// Ordered steps (commands use `{{env.…}}`; `if:` picks among them).
    #[serde(default)]
    pub remediation: Vec<model::Step>,
    pub references: Vec<String>,
    pub examples: RuleExamples,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleExamples {
    /// Reports that must break the rule.
    #[serde(default)]
    pub fail: Vec<EnvExample>,
    /// Reports that must not.
    #[serde(default)]
    pub pass: Vec<EnvExample>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvExample {
    /// Where the report comes from (a thread URL; "constructed: …" when made up).
    pub source: String,
    /// The report text (pip list, pip show, collect_env, nvidia-smi…), verbatim.
    pub env: String,
}

/// A compiled rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rule {
    pub id: String,
    pub title: String,
    pub category: Category,
    pub severity: Severity,
    pub signature: Option<String>,
    pub when: FactCond,
    pub explain: String,
    pub remediation: Vec<Step>,
    pub references: Vec<String>,
    pub examples: RuleExamples,
    pub file: String,
}

/// The loaded rules.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

impl Rules {
    /// Every package name the rules mention.
    pub fn package_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for r in &self.rules {
            cond::package_names(&r.when, &mut v);
            for s in &r.remediation {
                if let Some(c) = &s.condition {
                    cond::package_names(c, &mut v);
                }
            }
        }
        v
    }
}

/// Where rules come from (the embedded rules, folders).
pub type RulesSource = Source;

/// The embedded rules' files: (path relative to `rules/`, text).
pub fn builtin_files() -> &'static [(&'static str, &'static str)] {
    super::embedded::rule_files()
}

fn compile_rule(f: &RuleFile, name: &str, text: &str) -> Result<Rule, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let id = f.id.value.clone();
    let (l, c) = (
        f.id.referenced.line() as usize,
        f.id.referenced.column() as usize,
    );
    errors.extend(check_id(&f.id, file_stem(name), name, text));
    let mut cerr = Vec::new();
    let when = cond::compile(&f.when, &mut cerr);
    let mut remediation = Vec::new();
    for s in &f.remediation {
        let command = s.command.as_ref().and_then(|t| {
            super::signature::compile::command_template(t, name, text, &mut errors, |v| {
                (!super::vars::is_known(v)).then(|| {
                    format!(
                        "template variable `{v}` is not an environment value (rules see facts only; known: {})",
                        super::vars::known_list()
                    )
                })
            })
        });
        let condition = s
            .condition
            .as_ref()
            .and_then(|c| cond::compile(c, &mut cerr));
        remediation.push(Step {
            description: s.description.clone(),
            command,
            when: s.when.clone(),
            condition,
        });
    }
    for v in super::vars::prose_variables(&f.explain) {
        if !super::vars::is_known(&v) {
            errors.push(
                Diagnostic::new(
                    Code::E007,
                    name,
                    format!("explain variable `{v}` is not an environment value"),
                )
                .at(text, l, c),
            );
        }
    }
    for e in cerr {
        let (line, col) = if e.line > 0 {
            (e.line, e.column)
        } else {
            (l, c)
        };
        errors.push(Diagnostic::new(Code::E014, name, e.message).at(text, line, col));
    }
    if f.references.is_empty() {
        errors.push(
            Diagnostic::new(Code::E015, name, "a rule needs at least one reference").at(text, l, c),
        );
    }
    if f.examples.fail.is_empty() || f.examples.pass.is_empty() {
        errors.push(
            Diagnostic::new(
                Code::E015,
                name,
                "a rule needs examples: at least one report it must `fail` and one it must `pass`",
            )
            .at(text, l, c),
        );
    }
    match when {
        Some(when) if errors.is_empty() => Ok(Rule {
            id,
            title: f.title.clone(),
            category: f.category,
            severity: f.severity,
            signature: f.signature.clone(),
            when,
            explain: f.explain.trim().to_string(),
            remediation,
            references: f.references.clone(),
            examples: f.examples.clone(),
            file: name.to_string(),
        }),
        _ => Err(errors),
    }
}

/// Parses and compiles rule files into one set.
pub fn compile_files(files: &[LibraryFile]) -> Result<Rules, LoadErrors> {
    let mut errors = Vec::new();
    let mut out = Rules::default();
    let mut ids = Ids::default();
    for f in files {
        if is_ignored(&f.name) {
            continue;
        }
        if !is_yaml(&f.name) {
            errors.push(Diagnostic::new(
                Code::E010,
                &f.name,
                "not a rule file: a rules folder holds <id>.yaml rules, schema.json and Markdown only",
            ));
            continue;
        }
        let parsed: RuleFile = match parse_yaml(&f.name, &f.text, Kind::Rules.files()) {
            Ok(p) => p,
            Err(d) => {
                errors.push(d);
                continue;
            }
        };
        if let Err(d) = ids.define(&parsed.id, &f.name, &f.text) {
            errors.push(d);
            continue;
        }
        match compile_rule(&parsed, &f.name, &f.text) {
            Ok(r) => out.rules.push(r),
            Err(mut e) => errors.append(&mut e),
        }
    }
    if errors.is_empty() {
        out.rules.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    } else {
        Err(LoadErrors(errors))
    }
}

/// Loads the given sources as one rule set.
/// The embedded rules alone are read from their frozen form
/// ([`crate::knowledge::frozen`]); anything else is parsed and compiled ([`load_yaml`]).
pub fn load(sources: &[RulesSource]) -> Result<Rules, LoadErrors> {
    if let [Source::Builtin] = sources {
        if let Some(rules) = frozen_builtin() {
            return Ok(rules);
        }
    }
    load_yaml(sources)
}

/// The embedded rules, as compiled at build time ([`crate::knowledge::frozen`]); `None`
/// when they did not compile then.
pub fn frozen_builtin() -> Option<Rules> {
    super::frozen::thaw(super::embedded::FROZEN_RULES)
}

/// Parses and compiles the given sources' rule files.
pub fn load_yaml(sources: &[RulesSource]) -> Result<Rules, LoadErrors> {
    let (files, errors) = read_sources(sources, Kind::Rules);
    if !errors.is_empty() {
        return Err(LoadErrors(errors));
    }
    compile_files(&files)
}
