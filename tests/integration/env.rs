//! Environment facts, rules and preflight on real reports (tests/data/env/README.md
//! names the source of each) and on the story's constructed pip list.

use crashdoc::env::parse_text;
use crashdoc::knowledge::rules::{self, RulesSource};

use crate::util::{crashdoc, repo};

fn facts(file: &str) -> crashdoc::env::Facts {
    let text = std::fs::read_to_string(repo(&format!("tests/data/env/{file}"))).expect("read");
    parse_text(file, &text)
}

#[test]
fn real_collect_env_reports_parse() {
    let f = facts("vllm-22297-collect-env.txt");
    assert_eq!(
        f.package("torch").map(|p| p.version.as_str()),
        Some("2.7.1+cu126")
    );
    assert_eq!(
        f.torch_cuda.as_ref().map(|x| x.value.as_str()),
        Some("12.6")
    );
    assert_eq!(
        f.cuda_runtime.as_ref().map(|x| x.value.as_str()),
        Some("12.8.93")
    );
    assert_eq!(
        f.driver.as_ref().map(|x| x.value.as_str()),
        Some("570.133.13")
    );

    let f = facts("vllm-13207-collect-env.txt");
    assert_eq!(f.gpus.len(), 4, "{:?}", f.gpus);
    assert_eq!(f.gpus[3].name, "NVIDIA H20");
    assert_eq!(
        f.driver.as_ref().map(|x| x.value.as_str()),
        Some("550.54.14")
    );
    assert!(
        f.cuda_runtime.is_none(),
        "Could not collect is not a version"
    );

    let f = facts("vllm-25848-libraries.txt");
    assert_eq!(
        f.package("flashinfer_python").map(|p| p.version.as_str()),
        Some("0.3.1.post1")
    );
    assert_eq!(f.packages.len(), 25);
    assert_eq!(f.torch_cuda_version().map(|x| x.0), Some("12.8".into()));

    let f = facts("flashinfer-4337-collect-env.txt");
    assert_eq!(
        f.package("flashinfer-jit-cache")
            .map(|p| p.version.as_str()),
        Some("0.6.16+cu130")
    );
    assert_eq!(
        f.package("flashinfer-python").map(|p| p.version.as_str()),
        Some("0.6.16")
    );
    assert_eq!(
        f.gpus.first().and_then(|g| g.capability.as_deref()),
        Some("10.0")
    );

    let f = facts("sglang-7502-env.txt");
    assert_eq!(f.gpus.len(), 8);
    assert!(f
        .gpus
        .iter()
        .all(|g| g.capability.as_deref() == Some("8.0")));
    assert_eq!(
        f.driver.as_ref().map(|x| x.value.as_str()),
        Some("535.129.03")
    );
}

#[test]
fn real_rtx5090_report_breaks_the_arch_rule() {
    let rules = rules::load(&[RulesSource::Builtin]).expect("rules");
    let f = facts("leggedlab-26-rtx5090.txt");
    let found = crashdoc::engine::findings::check(&rules, &f);
    assert_eq!(
        found.first().map(|x| x.rule.as_str()),
        Some("torch-arch-list-covers-gpu")
    );
    assert!(found[0].explain.contains("sm_120"), "{}", found[0].explain);
    // the Blackwell step fits (capability 12.0)
    assert!(found[0].remediation[0].fits);
    // consistent real reports break nothing
    for ok in [
        "vllm-22297-collect-env.txt",
        "vllm-13207-collect-env.txt",
        "vllm-25848-libraries.txt",
        "flashinfer-4337-collect-env.txt",
        "sglang-7502-env.txt",
    ] {
        let v = crashdoc::engine::findings::check(&rules, &facts(ok));
        assert!(
            v.is_empty(),
            "{ok}: {:?}",
            v.iter().map(|x| &x.rule).collect::<Vec<_>>()
        );
    }
}

#[test]
fn builtin_rules_pass_their_examples_and_name_real_signatures() {
    let rules = rules::load(&[RulesSource::Builtin]).expect("rules");
    assert!(rules.rules.len() >= 5);
    let rep = crashdoc::tools::examples::test_rules(&rules, None);
    assert_eq!(rep.failed, 0, "{:?}", rep.messages);
    let lib = crate::util::library();
    for r in &rules.rules {
        if let Some(s) = &r.signature {
            assert!(
                lib.get(s).is_some(),
                "{}: signature {s} does not exist",
                r.id
            );
        }
    }
}

#[test]
fn broken_rule_is_located() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join("bad-rule.yaml"),
        "id: bad-rule\ntitle: t\ncategory: other\nseverity: error\nwhen:\n  package: {name: numpy, version: \"=>2\"}\nexplain: x\nreferences: [x]\nexamples:\n  fail: [{source: s, env: \"numpy==2.0.0\"}]\n  pass: [{source: s, env: \"numpy==1.0.0\"}]\n",
    )
    .expect("write");
    let out = crashdoc()
        .args(["rules", "list", "--no-builtin-rules", "--rules"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad-rule.yaml:6:") && err.contains("E014"),
        "{err}"
    );
}

#[test]
fn preflight_fails_on_the_story_and_passes_when_fixed() {
    let out = crashdoc()
        .args(["preflight", "--env"])
        .arg(repo("tests/data/env/story-pip-list.txt"))
        .arg("--env")
        .arg(repo("tests/data/env/story-pip-show.txt"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("flashinfer-cubin-matches-python"), "{s}");
    assert!(
        s.contains("pip install --no-deps \"flashinfer-cubin==0.6.4\""),
        "{s}"
    );
    assert!(s.contains("required by sglang"), "{s}");
    // without pip show, the generic step is offered (who pins it is unknown)
    let out = crashdoc()
        .args(["preflight", "--format", "json", "--env"])
        .arg(repo("tests/data/env/story-pip-list.txt"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["ok"], false);
    let cmds: Vec<&str> = v["findings"][0]["remediation"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["command"].as_str())
        .collect();
    assert!(
        cmds.contains(&"pip install \"flashinfer-cubin==0.6.4\""),
        "{cmds:?}"
    );
    let out = crashdoc()
        .args(["preflight", "--env"])
        .arg(repo("tests/data/env/consistent-pip-list.txt"))
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // unreadable or unrecognised input is a usage error
    let out = crashdoc()
        .args(["preflight", "--env", "/nonexistent"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let out = crashdoc()
        .args(["preflight", "--env"])
        .arg(repo("tests/data/scenario/truth.yaml"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn diagnose_with_env_names_who_pinned_and_the_fitting_fix() {
    let out = crashdoc()
        .args(["diagnose", "--format", "json"])
        .arg(repo("tests/data/scenario/journal.txt"))
        .arg("--env")
        .arg(repo("tests/data/env/story-pip-list.txt"))
        .arg("--env")
        .arg(repo("tests/data/env/story-pip-show.txt"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let c = &v["causes"][0];
    assert_eq!(c["signature"], "flashinfer-cubin-version-mismatch");
    let env = c["environment"][0].as_str().expect("environment note");
    assert!(env.contains("required by sglang"), "{env}");
    let first = &c["remediation"][0];
    assert_eq!(first["fits"], true);
    assert_eq!(
        first["command"],
        "pip install --no-deps \"flashinfer-cubin==0.6.4\" && pip check"
    );
    // the plain step (nothing requires the cubin) does not fit and is left out
    assert!(c["remediation"]
        .as_array()
        .expect("steps")
        .iter()
        .all(|s| s["command"] != "pip install \"flashinfer-cubin==0.6.4\""));
    assert_eq!(v["findings"][0]["rule"], "flashinfer-cubin-matches-python");

    // without facts: the diagnosis is what it was (both steps, none marked)
    let out = crashdoc()
        .args(["diagnose", "--format", "json"])
        .arg(repo("tests/data/scenario/journal.txt"))
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let steps = v["causes"][0]["remediation"].as_array().expect("steps");
    assert!(steps.iter().all(|s| s.get("fits").is_none()));
    assert!(v["causes"][0].get("environment").is_none());
    assert!(v.get("findings").is_none());
}
