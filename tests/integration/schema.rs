//! `crashdoc schema …`: the committed JSON Schema of the diagnosis output is current, and
//! the real output of the corpus validates against it (a small validator of the JSON
//! Schema keywords schemars writes; it refuses a keyword it does not know, so no
//! constraint of the schema goes unchecked, and it refuses a field the schema does not
//! list).

use serde_json::Value;

use crate::util::{code, crashdoc, repo};

const DIAGNOSIS_SCHEMA: &str = "docs/schema/diagnosis.schema.json";
const REGENERATE: &str =
    "cargo run --release -- schema diagnosis > docs/schema/diagnosis.schema.json";

fn stdout_of(args: &[&str]) -> String {
    let out = crashdoc().args(args).output().expect("run");
    assert_eq!(code(&out), 0, "crashdoc {args:?}");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn committed_schema() -> Value {
    let text = std::fs::read_to_string(repo(DIAGNOSIS_SCHEMA)).expect("committed schema");
    serde_json::from_str(&text).expect("schema JSON")
}

#[test]
fn the_committed_diagnosis_schema_is_current() {
    let now = stdout_of(&["schema", "diagnosis"]);
    let committed = std::fs::read_to_string(repo(DIAGNOSIS_SCHEMA)).unwrap_or_default();
    assert!(
        now == committed,
        "{DIAGNOSIS_SCHEMA} is not the schema of the output; regenerate it:\n  {REGENERATE}\n\
         and say in the commit whether the change is breaking (then bump report::wire::VERSION)"
    );
}

#[test]
fn schema_signature_is_sig_schema_and_rules_is_the_rule_file() {
    assert_eq!(
        stdout_of(&["schema", "signature"]),
        stdout_of(&["sig", "schema"])
    );
    let committed = std::fs::read_to_string(repo("signatures/schema.json")).expect("schema");
    assert_eq!(stdout_of(&["schema", "signature"]), committed);
    let rules: Value = serde_json::from_str(&stdout_of(&["schema", "rules"])).expect("json");
    assert_eq!(rules["title"], "RuleFile");
    let out = crashdoc()
        .args(["schema", "nothing"])
        .output()
        .expect("run");
    assert_eq!(code(&out), 2);
}

#[test]
fn every_corpus_diagnosis_validates_against_the_committed_schema() {
    let schema = committed_schema();
    let out = crashdoc()
        .args(["--format", "jsonl", "--top", "5"])
        .arg(repo("corpus"))
        .output()
        .expect("run");
    assert!(code(&out) <= 1, "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut n = 0;
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).expect("one JSON document per line");
        assert_valid(&schema, &v);
        n += 1;
    }
    assert!(n > 200, "{n} diagnoses");
}

#[test]
fn a_diagnosis_with_environment_findings_validates() {
    let schema = committed_schema();
    let out = crashdoc()
        .args(["diagnose", "--format", "json"])
        .arg(repo("tests/data/scenario/journal.txt"))
        .arg("--env")
        .arg(repo("tests/data/env/story-pip-list.txt"))
        .arg("--env")
        .arg(repo("tests/data/env/story-pip-show.txt"))
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1);
    assert!(
        v["environment"].is_object() && v["findings"].is_array(),
        "{v}"
    );
    assert_valid(&schema, &v);
    // the validator is no rubber stamp
    let mut bad = v.clone();
    bad["causes"][0]["unknown_field"] = Value::Bool(true);
    assert!(!errors(&schema, &bad).is_empty());
    let mut bad = v;
    bad["causes"][0]["confidence"] = Value::from("certain");
    assert!(!errors(&schema, &bad).is_empty());
}

#[test]
fn extract_json_has_the_version_and_the_failures_of_a_diagnosis() {
    let log = "corpus/inkypi-host-oom/log.txt";
    let x: Value =
        serde_json::from_str(&stdout_of(&["extract", "--format", "json", log])).expect("json");
    let d: Value = serde_json::from_str(&stdout_of(&["--format", "json", log])).expect("json");
    assert_eq!(x["version"], d["version"]);
    assert_eq!(x["failures"], d["failures"]);
    assert_eq!(x["attempts"], d["attempts"]);
}

fn assert_valid(schema: &Value, v: &Value) {
    let e = errors(schema, v);
    assert!(
        e.is_empty(),
        "{} does not validate against {DIAGNOSIS_SCHEMA}:\n{}",
        v["input"],
        e.join("\n")
    );
}

fn errors(schema: &Value, v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, schema, v, "", &mut out);
    out
}

/// The keywords the validator understands (annotations included).
const KNOWN: &[&str] = &[
    "$schema",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "anyOf",
    "oneOf",
    "const",
    "enum",
    "minimum",
    "maximum",
];

fn check(root: &Value, s: &Value, v: &Value, at: &str, out: &mut Vec<String>) {
    let Some(s) = s.as_object() else {
        if s != &Value::Bool(true) {
            out.push(format!("{at}: schema {s} refuses everything"));
        }
        return;
    };
    if let Some(k) = s.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        panic!("the validator does not know the keyword {k:?} (at {at})");
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.strip_prefix("#/$defs/").expect("a local $ref");
        check(root, &root["$defs"][name], v, at, out);
    }
    check_alternatives(root, s, v, at, out);
    if s.get("const").is_some_and(|c| c != v) {
        out.push(format!("{at}: {v} is not {}", s["const"]));
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            out.push(format!("{at}: {v} is none of {e:?}"));
        }
    }
    if let Some(t) = s.get("type") {
        let types: Vec<&str> = match t {
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => t.as_str().into_iter().collect(),
        };
        if !types.iter().any(|t| is_type(v, t)) {
            out.push(format!("{at}: {v} is not of type {types:?}"));
            return;
        }
    }
    if let (Some(min), Some(n)) = (s.get("minimum").and_then(Value::as_f64), v.as_f64()) {
        if n < min {
            out.push(format!("{at}: {n} < {min}"));
        }
    }
    // the schema that describes the object (not one that only refers to it)
    let describes_object = s.contains_key("properties") || s.contains_key("additionalProperties");
    if let (Some(o), true) = (v.as_object(), describes_object) {
        check_object(root, s, o, at, out);
    }
    if let Some(a) = v.as_array() {
        check_array(root, s, a, at, out);
    }
}

fn check_alternatives(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    v: &Value,
    at: &str,
    out: &mut Vec<String>,
) {
    for (key, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        let Some(alts) = s.get(key).and_then(Value::as_array) else {
            continue;
        };
        let fits = alts.iter().filter(|a| errors_at(root, a, v, at).is_empty());
        let n = fits.count();
        if n == 0 || (exactly_one && n > 1) {
            out.push(format!("{at}: {v} fits {n} of the {key} alternatives"));
        }
    }
}

fn errors_at(root: &Value, s: &Value, v: &Value, at: &str) -> Vec<String> {
    let mut out = Vec::new();
    check(root, s, v, at, &mut out);
    out
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_u64() || v.is_i64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        other => panic!("unknown type {other:?}"),
    }
}

fn check_object(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    o: &serde_json::Map<String, Value>,
    at: &str,
    out: &mut Vec<String>,
) {
    let props = s.get("properties").and_then(Value::as_object);
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let r = r.as_str().unwrap_or_default();
        if !o.contains_key(r) {
            out.push(format!("{at}: required field {r:?} is missing"));
        }
    }
    for (k, v) in o {
        let here = format!("{at}/{k}");
        match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
            (Some(p), _) => check(root, p, v, &here, out),
            (None, Some(extra)) if extra.is_object() => check(root, extra, v, &here, out),
            // strict: a field the schema does not list (open for consumers, not for us)
            (None, _) => out.push(format!("{here}: not in the schema")),
        }
    }
}

fn check_array(
    root: &Value,
    s: &serde_json::Map<String, Value>,
    a: &[Value],
    at: &str,
    out: &mut Vec<String>,
) {
    let bound = |k: &str| s.get(k).and_then(Value::as_u64).map(|n| n as usize);
    if bound("minItems").is_some_and(|m| a.len() < m)
        || bound("maxItems").is_some_and(|m| a.len() > m)
    {
        out.push(format!("{at}: {} items out of bounds", a.len()));
    }
    let prefix = s.get("prefixItems").and_then(Value::as_array);
    for (i, v) in a.iter().enumerate() {
        let here = format!("{at}/{i}");
        match (prefix.and_then(|p| p.get(i)), s.get("items")) {
            (Some(p), _) => check(root, p, v, &here, out),
            (None, Some(items)) => check(root, items, v, &here, out),
            (None, None) => {}
        }
    }
}

#[test]
fn sig_test_and_preflight_json_carry_the_version() {
    let out = crashdoc()
        .args([
            "sig",
            "test",
            "--format",
            "json",
            "--filter",
            "nccl-unhandled-system-error",
        ])
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1);
    assert!(v["passed"].as_u64().is_some_and(|n| n > 0), "{v}");
    let out = crashdoc()
        .args(["preflight", "--format", "json", "--env"])
        .arg(repo("tests/data/env/story-pip-list.txt"))
        .output()
        .expect("run");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1);
    assert_eq!(v["findings"][0]["rule"], "flashinfer-cubin-matches-python");
    assert!(v["environment"]["packages"].is_object(), "{v}");
}
