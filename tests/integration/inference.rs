//! The long tail: inferred causes (layer `inferred`), category guides and the knock-out.

use crashdoc::corpus::knockout;
use crashdoc::engine::diagnosis::BuildOptions;
use crashdoc::engine::matcher::EngineKind;
use crashdoc::engine::pipeline::Engine;
use crashdoc::engine::rank::Confidence;
use crashdoc::knowledge::signature::{self, Category, LibrarySource};

use crate::util::{compiled, library, repo};

fn diagnose(incident: &str) -> crashdoc::engine::diagnosis::Diagnosis {
    let text = std::fs::read_to_string(repo(&format!("corpus/{incident}/log.txt")))
        .expect("the incident's log");
    diagnose_text(incident, &text)
}

fn diagnose_text(name: &str, text: &str) -> crashdoc::engine::diagnosis::Diagnosis {
    Engine::new(compiled(), EngineKind::Prefilter).diagnose_text(
        name,
        text,
        BuildOptions::default(),
    )
}

/// The signatures of a diagnosis's causes, in order (for failure messages).
fn ids(d: &crashdoc::engine::diagnosis::Diagnosis) -> Vec<&str> {
    d.causes.iter().map(|c| c.signature.as_str()).collect()
}

/// A real failure no signature names (vLLM refusing a prompt longer than the context,
/// in its own words) gets its category from the words, never `high`, with the
/// category's guide and the signatures it resembles.
#[test]
fn a_failure_no_signature_names_gets_an_inferred_category_with_its_guide() {
    let d = diagnose("foam-standards-vllm-unsupported-config-prompt-over-262k");
    let top = d.causes.first().expect("an inferred cause");
    assert_eq!(top.layer.as_deref(), Some("inferred"), "{}", top.signature);
    assert_eq!(top.category, Category::UnsupportedConfig);
    assert_eq!(top.signature, "inferred:unsupported-config");
    assert_ne!(top.confidence, Confidence::High);
    assert!(top.score < 0.75);
    let p = top.probability.expect("a probability");
    assert!((0.0..=1.0).contains(&p));
    assert!(!top.resembles.is_empty());
    for r in &top.resembles {
        assert!(library().get(&r.signature).is_some(), "{}", r.signature);
    }
    let guide = library()
        .guide(Category::UnsupportedConfig)
        .expect("a guide");
    assert_eq!(top.explain, guide.explain);
    assert_eq!(top.remediation.len(), guide.checks.len());
    assert!(top.remediation.iter().all(|s| s.command.is_some()));
    assert!(!top.evidence.is_empty());
}

/// A short paste in which no failure shape is found (two DeepSpeed log lines: memory
/// use at 84.6 %, then the launcher killing its subprocess) is read whole by the model:
/// a `low` inferred cause tied to no failure, its evidence the paste's first line.
#[test]
fn a_short_paste_with_no_failure_shape_is_read_whole_at_low() {
    let d = diagnose("deepspeed-host-oom-zero-offload-killing-subprocess");
    assert!(d.failures.is_empty(), "no failure shape in this paste");
    let top = d.causes.first().expect("an inferred cause");
    assert_eq!(top.layer.as_deref(), Some("inferred"), "{}", top.signature);
    assert_eq!(top.category, Category::HostOom);
    assert_eq!(top.confidence, Confidence::Low);
    assert!(top.failures.is_empty());
    assert_eq!(top.evidence.first().map(|e| e.line), Some(1));
}

/// The same paste inside an issue's markdown (CONSTRUCTED: the prose and the fence
/// around the two real lines of the incident): the first fenced block is the paste, not
/// the headings and sentences around it.
#[test]
fn a_short_paste_fenced_in_markdown_is_read_as_the_paste() {
    let log = std::fs::read_to_string(repo(
        "corpus/deepspeed-host-oom-zero-offload-killing-subprocess/log.txt",
    ))
    .expect("the incident's log");
    let text = format!(
        "### Describe the bug\n\nThe run stops during training. Full log:\n\n```text\n{}```\n\n### Environment\n\nUbuntu 22.04, one GPU.\n",
        log.trim_end().to_string() + "\n"
    );
    let d = diagnose_text("issue.md", &text);
    let top = d.causes.first().expect("an inferred cause");
    assert_eq!(top.layer.as_deref(), Some("inferred"), "{}", top.signature);
    assert_eq!(top.category, Category::HostOom);
    // the evidence is the fenced lines (6 and 7), never the prose around them
    assert!(
        top.evidence.iter().all(|e| (6..=7).contains(&e.line)),
        "{:?}",
        top.evidence.iter().map(|e| e.line).collect::<Vec<_>>()
    );
    assert_eq!(top.evidence.first().map(|e| e.line), Some(6));
}

/// Healthy logs get no inferred cause from the error lines a healthy run prints.
#[test]
fn a_healthy_log_with_routine_error_lines_gets_no_inferred_cause() {
    for incident in [
        "aigis-llama-cpp-none-vulkan-serving",
        "demo-env-l4-vllm-none-tf-noise",
        "tfg-ollama-none-a40-partial-offload",
        // a logger's WARNING lines in a healthy run's last lines ("force killing remaining
        // processes", "may waste at most 4.17% KV cache memory") are no cause
        "dgx-spark-vllm-none-qwen36",
        "club-3090-none-2",
    ] {
        let d = diagnose(incident);
        assert!(d.causes.is_empty(), "{incident}: {:?}", ids(&d));
    }
}

/// Every category has a guide, and every guide's checks are commands printed as written.
#[test]
fn every_category_has_a_guide_with_read_only_checks() {
    for c in Category::ALL {
        let g = library()
            .guide(*c)
            .unwrap_or_else(|| panic!("no guide for {}", c.as_str()));
        assert!(
            !g.explain.is_empty() && !g.checks.is_empty(),
            "{}",
            c.as_str()
        );
        for s in &g.checks {
            let cmd = s.command.as_ref().expect("a command");
            assert_eq!(cmd.variables().count(), 0, "{}", cmd.source);
            for w in [
                " install", "rm ", "restart", "kill ", "chown", "chmod", "sudo",
            ] {
                assert!(!cmd.source.contains(w), "{}: {}", c.as_str(), cmd.source);
            }
        }
    }
}

fn guide_errors(name: &str, text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tmp");
    let cats = dir.path().join("categories");
    std::fs::create_dir_all(&cats).expect("mkdir");
    std::fs::write(cats.join(name), text).expect("write");
    match signature::load(&[LibrarySource::Dir(dir.path().to_path_buf())]) {
        Ok(_) => Vec::new(),
        Err(e) => e.0.iter().map(|d| d.to_string()).collect(),
    }
}

/// A guide is loaded like a signature: unknown fields, a name other than its category, an
/// unknown category and a placeholder in a check are located errors.
#[test]
fn a_broken_guide_is_a_located_error() {
    let ok = "category: disk-full\ntitle: t\nexplain: e\nchecks:\n  - description: d\n    command: df -h\n";
    assert!(guide_errors("disk-full.yaml", ok).is_empty());
    let named_otherwise = guide_errors("gpu-oom.yaml", ok);
    assert!(
        named_otherwise.iter().any(|e| e.contains("E003")),
        "{named_otherwise:?}"
    );
    let unknown = guide_errors("nope.yaml", &ok.replace("disk-full", "nope"));
    assert!(unknown.iter().any(|e| e.contains("E002")), "{unknown:?}");
    let field = guide_errors("disk-full.yaml", &format!("{ok}colour: red\n"));
    assert!(field.iter().any(|e| e.contains("E001")), "{field:?}");
    let placeholder = guide_errors("disk-full.yaml", &ok.replace("df -h", "df -h {{path}}"));
    assert!(
        placeholder
            .iter()
            .any(|e| e.contains("E007") && e.contains("disk-full.yaml:6")),
        "{placeholder:?}"
    );
}

/// Knock-out leaves out a signature with every signature sharing one of its example
/// texts, and the incident it explained is then diagnosed without them.
#[test]
fn knock_out_leaves_out_the_explaining_signature_and_its_siblings() {
    let lib = library();
    let set = knockout::knocked_with(lib, "torch-cuda-out-of-memory");
    assert!(set.contains("torch-cuda-out-of-memory"));
    let texts: Vec<String> = lib
        .get("torch-cuda-out-of-memory")
        .expect("the signature")
        .examples
        .matches
        .iter()
        .map(|e| e.log.trim().to_string())
        .collect();
    for s in &lib.signatures {
        let shares = s
            .examples
            .matches
            .iter()
            .any(|e| texts.contains(&e.log.trim().to_string()));
        assert_eq!(shares, set.contains(&s.id), "{}", s.id);
    }
    let reduced = knockout::without(lib, &set);
    assert_eq!(reduced.signatures.len(), lib.signatures.len() - set.len());
    let incidents: Vec<_> = crashdoc::corpus::load_dir(&repo("corpus"))
        .expect("the corpus")
        .into_iter()
        .filter(|i| i.name == "mineru-sglang-gpu-oom")
        .collect();
    let ks = knockout::run(lib, EngineKind::Prefilter, &incidents, &repo("corpus"));
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    assert!(!k.removed.is_empty());
    let top = k.outcome.top_signature.as_deref().unwrap_or("");
    assert!(!k.removed.iter().any(|r| r == top), "{top} was left out");
    let text = knockout::render(&ks);
    assert!(text.starts_with("knock-out: top-1 category "), "{text}");
    assert!(
        text.contains("signature layers: calibrated probability (Platt per layer"),
        "{text}"
    );
    assert!(
        text.contains("reliability of the top cause's probability"),
        "{text}"
    );
}

/// NCCL's generic `unhandled system error` follows from the failing call its `Last error:`
/// line names: that call's signature ranks first, the generic one folds under it (so the
/// first failure is explained, not "hidden"), and the bare `Last error:` label is no
/// failure for the model to read.
#[test]
fn the_call_nccl_names_after_last_error_is_the_root_of_its_system_error() {
    let d = diagnose("production-stack-disk-full-k8s-pod-dev-shm-64m-nccl");
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.signature, "nccl-shm-segment-create-failed");
    assert!(top
        .consequences
        .iter()
        .any(|c| c.signature.as_deref() == Some("nccl-unhandled-system-error")));
    assert!(d.first_failure.is_none(), "{:?}", d.first_failure);
    assert!(
        d.causes
            .iter()
            .all(|c| c.layer.as_deref() != Some("inferred")),
        "{:?}",
        ids(&d)
    );
}

/// An inferred root printed first goes before a later `low` cause of its attempt whose
/// category its own explains (the category link table): the kernel log's Xid 32, which no
/// signature names, read as a GPU fault, before the Xid 31 MMU fault (`other`) after it.
/// And not before a cause it does not outscore: the order stays the scores' then.
#[test]
fn an_earlier_inferred_root_goes_before_the_low_cause_it_explains() {
    let d = diagnose("bumblebee-kernel-gpu-hardware-fault-nvrm-xid-32-31-laptop");
    assert_eq!(
        ids(&d),
        ["inferred:gpu-hardware-fault", "nvidia-xid-31-mmu-fault"],
        "{:?}",
        ids(&d)
    );
    let (root, effect) = (&d.causes[0], &d.causes[1]);
    assert_eq!(effect.category, Category::Other);
    assert!(root.evidence[0].line < effect.evidence[0].line);
    assert!(root.score >= effect.score);
    assert!(crashdoc::knowledge::links::explains(
        root.category,
        effect.category
    ));
}

/// The runner's shutdown signal (`other`) follows what its own explanation names — the
/// VM's memory exhausted by the job — when the step's exit 137 is in the same log, even
/// printed after it: the host-oom cause leads and the shutdown is its consequence.
#[test]
fn a_runner_shutdown_follows_the_steps_sigkill_printed_after_it() {
    let d = diagnose("runner-host-oom-github-actions-shutdown-signal-137");
    let top = d.causes.first().expect("a cause");
    assert_eq!(
        top.signature,
        "github-actions-step-exit-code-137",
        "{:?}",
        ids(&d)
    );
    assert_eq!(top.category, Category::HostOom);
    assert!(top
        .consequences
        .iter()
        .any(|c| c.signature.as_deref() == Some("github-actions-runner-shutdown-signal")));
}

/// The named corpus incidents under knock-out.
fn knocked_out(names: &[&str]) -> Vec<knockout::KnockedIncident> {
    let incidents: Vec<_> = crashdoc::corpus::load_dir(&repo("corpus"))
        .expect("the corpus")
        .into_iter()
        .filter(|i| names.contains(&i.name.as_str()))
        .collect();
    knockout::run(
        library(),
        EngineKind::Prefilter,
        &incidents,
        &repo("corpus"),
    )
}

/// A pasted Python warning that ends the run (`…/torch/cuda/__init__.py:124: UserWarning:
/// CUDA initialization: The NVIDIA driver on your system is too old`, NumPy's API version)
/// is read when the signatures that name it are left out: an inferred cause, `low` (a
/// warning never says more), where it used to be silence.
#[test]
fn a_python_warning_that_ends_the_run_is_read_by_the_model() {
    let names = ["yuan2-cuda-driver-too-old", "facechain-version-mismatch"];
    let ks = knocked_out(&names);
    assert_eq!(ks.len(), names.len());
    for k in &ks {
        assert!(!k.removed.is_empty(), "{}: nothing left out", k.name);
        assert!(!k.no_cause(), "{}: no cause", k.name);
        assert_eq!(k.top_layer.as_deref(), Some("inferred"), "{}", k.name);
        assert_eq!(
            k.outcome.top_confidence,
            Some(Confidence::Low),
            "{}",
            k.name
        );
    }
}

/// Two independent failures in one log (Ollama's pull stopped by a disk quota, then a
/// script missing a module): with the quota's signature left out, the attempt failed
/// first in a way no cause explains, so the model reads that first failure and its
/// reading (the quota's words: disk-full) goes before the module's cause (which led,
/// `high` and wrong; then capped at `medium`). With the whole library the quota leads,
/// `high`.
#[test]
fn a_cause_after_an_unexplained_earlier_failure_is_not_high() {
    let name = "material-agent-ollama-disk-full-hpc-home-quota";
    let ks = knocked_out(&[name]);
    let k = ks.first().expect("the incident");
    assert!(!k.removed.is_empty(), "nothing left out");
    assert_eq!(k.top_signature.as_deref(), Some("inferred:disk-full"));
    assert!(k.right);
    assert_eq!(
        k.outcome.got.get(..2),
        Some(&["disk-full".to_string(), "import-error".to_string()][..]),
        "the module's cause follows the quota's reading"
    );
    let d = diagnose(name);
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.category, Category::DiskFull, "{:?}", ids(&d));
    assert_eq!(top.confidence, Confidence::High);
}

/// An error line every rank prints in turn, each with the stack of its failed collective,
/// ends the run though the first copy is far from the log's end: with the signatures that
/// name PyTorch's watchdog timeout left out, the model reads it (it used to be silence).
#[test]
fn an_error_every_rank_repeats_to_the_end_is_read_by_the_model() {
    let ks = knocked_out(&["vllm-ds4-hang-timeout-mtp1-logits-allgather"]);
    let k = ks.first().expect("the incident");
    assert!(!k.removed.is_empty(), "nothing left out");
    assert!(!k.no_cause(), "no cause");
    assert_eq!(k.top_layer.as_deref(), Some("inferred"));
}

/// The committed calibration, as `corpus bless` writes it.
fn committed_calibration() -> crashdoc::knowledge::calibrate::CalibrationFile {
    let text = std::fs::read_to_string(repo("corpus/calibration.json")).expect("calibration");
    serde_json::from_str(&text).expect("corpus/calibration.json parses")
}

#[test]
fn the_build_froze_the_committed_calibration_into_the_model() {
    let file = committed_calibration();
    assert!(file.points > 0 && !file.inferred.is_empty());
    assert!(file.inferred.windows(2).all(|w| w[0].1 <= w[1].1));
    let model = crashdoc::knowledge::model::embedded().expect("the embedded model");
    assert_eq!(
        model.calibration, file.inferred,
        "rebuild after `corpus bless`"
    );
    let (lo, hi) = (file.inferred[0], file.inferred[file.inferred.len() - 1]);
    assert_eq!(model.calibrated(lo.0 / 2.0), lo.1);
    assert_eq!(model.calibrated(1.0), hi.1);
}

#[test]
#[ignore = "heavy (a whole knock-out run, about 40 s of CPU): cargo test --release -- --ignored"]
fn the_committed_calibration_is_the_fit_of_this_knock_out_run() {
    let lib = library();
    let incidents = crashdoc::corpus::load_dir(&repo("corpus")).expect("the corpus");
    let ks = knockout::run(lib, EngineKind::Prefilter, &incidents, &repo("corpus"));
    let fresh = knockout::calibration_file(&ks);
    let file = committed_calibration();
    assert_eq!(fresh.points, file.points, "run `crashdoc corpus bless`");
    assert_eq!(fresh.inferred, file.inferred, "run `crashdoc corpus bless`");
    assert_eq!(
        fresh.score_points, file.score_points,
        "run `crashdoc corpus bless`"
    );
    assert_eq!(fresh.scores, file.scores, "run `crashdoc corpus bless`");
}

/// The signature layers' calibration: the build froze each layer's fit, every fit is
/// monotone (a higher score never means a lower probability), and a cause a signature
/// found carries its score's probability through its own layer's fit.
#[test]
fn a_signatures_cause_carries_its_layers_calibrated_probability() {
    let file = committed_calibration();
    assert!(file.score_points > 0);
    for layer in ["signature", "table", "fuzzy"] {
        let map = file
            .scores
            .get(layer)
            .expect("a fit for each signature layer");
        assert!(
            map.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
            "{layer}"
        );
    }
    use crashdoc::knowledge::calibrate::{apply, shipped_probability};
    // the build froze the committed fits: each layer's map, read through the shipped one
    for (layer, map) in &file.scores {
        let name = match layer.as_str() {
            "signature" => None,
            "table" => Some("table:errno"),
            other => Some(other),
        };
        for (score, _) in map {
            let want = apply(map, *score).clamp(0.01, 0.99);
            assert_eq!(
                shipped_probability(name, *score),
                Some(want),
                "rebuild after `corpus bless`"
            );
        }
    }
    let d = diagnose("accelerate-hang-timeout-nccl-allreduce-end-of-epoch");
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.layer, None, "a signature file's cause");
    let p = top.probability.expect("a calibrated probability");
    let want = shipped_probability(None, top.score).expect("the fit");
    assert!((p - want).abs() < 0.006, "{p} vs {want}");
    // an inferred cause keeps its own calibration; a structural one has none
    assert_eq!(shipped_probability(Some("inferred"), 0.5), None);
}

/// A requested shutdown's teardown (vLLM's `[shutdown] … trigger received signal=SIGTERM`,
/// then the API server's spurious `EngineDeadError` of vllm issue #48745) is no failure
/// for the model to read either: the wrapper a benign marker explains explains its own
/// failure. With GitHub's copy of long lines (space runs inside them) the teardown's
/// traceback got an inferred `other` cause on a healthy run.
#[test]
fn a_shutdowns_teardown_traceback_is_not_read_as_an_unexplained_failure() {
    use crashdoc::corpus::metamorph::{self, Ctx};
    let incident = "dgx-spark-vllm-none-laguna-nvfp4";
    let text = std::fs::read_to_string(repo(&format!("corpus/{incident}/log.txt")))
        .expect("the incident's log");
    let ctx = Ctx {
        seed: crashdoc::corpus::invariance::SEED,
        healthy: &[],
        noise: &[],
        bury_lines: 0,
    };
    let spaced = (metamorph::get("github-space-runs")
        .expect("the transformation")
        .apply)(&text, &ctx)
    .expect("long lines to space");
    for (how, t) in [("plain", &text), ("space runs", &spaced)] {
        let d = diagnose_text(incident, t);
        assert!(d.causes.is_empty(), "{how}: {:?}", ids(&d));
    }
}

/// A bare `NotImplementedError` has no words for the model; its traceback says the
/// software failed. Raised in the program's own code (a reward function verl calls): a
/// probable bug in the program, `low`, category `other`, no model probability, no
/// issue-tracker query (no package to search).
#[test]
fn a_bare_not_implemented_error_in_the_programs_code_is_a_probable_bug() {
    let d = diagnose("verl-maze-other-ppo-default-compute-score-not-implemented");
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.signature, "inferred:other");
    assert_eq!(top.category, Category::Other);
    assert_eq!(top.confidence, Confidence::Low);
    assert_eq!(top.probability, None);
    assert_eq!(top.raw_probability, None);
    assert!(
        top.title.contains("`_default_compute_score`"),
        "{}",
        top.title
    );
    assert!(top.title.contains("bug in the program"), "{}", top.title);
    assert!(
        top.references
            .iter()
            .all(|r| !r.starts_with("https://github.com/search")),
        "{:?}",
        top.references
    );
    assert!(top.remediation.iter().all(|s| s
        .command
        .as_deref()
        .is_none_or(|c| !c.starts_with("pip show"))));
}

/// Raised inside an installed package (`torch.nn.Module.forward`, never overridden): a
/// probable bug in `torch` or a use it does not support, with `pip show torch` and the
/// query for its issues (tests/data/bug/SOURCES.md: deep-person-reid issue 220).
#[test]
fn a_not_implemented_error_raised_in_a_library_names_it_and_its_issue_query() {
    let text = std::fs::read_to_string(repo(
        "tests/data/bug/deep-person-reid-module-forward-not-implemented.log",
    ))
    .expect("the log");
    let d = diagnose_text("forward", &text);
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.signature, "inferred:other");
    assert_eq!(top.confidence, Confidence::Low);
    assert!(top.title.contains("bug in `torch`"), "{}", top.title);
    assert!(
        top.title.contains("`forward` (module.py:103)"),
        "{}",
        top.title
    );
    let commands: Vec<&str> = top
        .remediation
        .iter()
        .filter_map(|s| s.command.as_deref())
        .collect();
    assert_eq!(commands.first(), Some(&"pip show torch"), "{commands:?}");
    assert_eq!(
        top.references.first().map(String::as_str),
        Some("https://github.com/search?type=issues&q=torch%20NotImplementedError%20forward")
    );
    assert_eq!(top.evidence.first().map(|e| e.line), Some(10));
}

/// The kernel's hung-task report begins with `INFO:` (hung_task.c prints it with
/// `pr_err`): a word of the message, not the line's level. With the signature that names
/// it left out, the model reads it (it used to be silence: the line was taken for an
/// informational one).
#[test]
fn a_kernel_hung_task_report_is_read_by_the_model() {
    let names = [
        "k8s-device-plugin-hang-timeout-nvc-driver-hung-task",
        "nvidia-driver-hang-timeout-hung-task-rm-rwsem",
    ];
    let ks = knocked_out(&names);
    assert_eq!(ks.len(), names.len());
    for k in &ks {
        assert!(!k.removed.is_empty(), "{}: nothing left out", k.name);
        assert_eq!(k.top_layer.as_deref(), Some("inferred"), "{}", k.name);
        assert!(k.right, "{}", k.name);
    }
    // an error line's inferred cause is never more than `low`; the report counts them
    let report = knockout::render(&ks);
    assert!(
        report.contains(
            "top causes by confidence: high 0/0 right (0.0 %), medium 0/0 right (0.0 %), low 2/2 right (100.0 %)"
        ),
        "{report}"
    );
}

/// An environment signature that matches a failure whose structure says the software
/// failed (here an `ImportError` between a package's own modules) and reads no
/// environmental fact says `low`, and the probable bug is named beside it; the same
/// signature on another package's missing name (version skew between two packages, a
/// real log of the corpus) keeps its confidence.
#[test]
fn an_environment_match_on_a_bug_shaped_failure_says_low() {
    // CONSTRUCTED: Python's traceback layout around the message the
    // python-cannot-import-name signature names, raised inside the package it imports from
    let log = "Traceback (most recent call last):
  File \"/app/serve.py\", line 3, in <module>
    import fancylib.server
  File \"/usr/lib/python3.11/site-packages/fancylib/server.py\", line 12, in <module>
    from fancylib.utils import load_weights
ImportError: cannot import name 'load_weights' from 'fancylib.utils' (/usr/lib/python3.11/site-packages/fancylib/utils.py)
";
    let d = diagnose_text("self-import", log);
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.signature, "python-cannot-import-name");
    assert_eq!(top.confidence, Confidence::Low, "{top:?}");
    assert!(top.score < 0.5, "{}", top.score);
    assert!(
        d.causes
            .iter()
            .any(|c| c.signature == "inferred:other" && c.title.contains("fancylib")),
        "{:?}",
        d.causes.iter().map(|c| &c.title).collect::<Vec<_>>()
    );
    let d = diagnose("vllm-ascend-import-error");
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.signature, "python-cannot-import-name");
    assert_eq!(top.confidence, Confidence::High);
}

/// An error line in the block of a step the runner said failed is read by the model
/// however far the runner's cleanup runs after it: the runner, not the distance to the
/// log's end, says the run stopped there. Constructed (labelled so): the shape of a
/// GitHub Actions build step — ninja's `FAILED:` line and the shell's `not found` for the
/// command it ran, the build's wrappers, then 40 lines of post-job cleanup and the
/// runner's exit line. Before, none of its lines was read (none within 30 lines of the
/// end); with fewer cleanup lines, ninja's summary (`build stopped`) alone was.
#[test]
fn an_error_line_in_a_failed_steps_block_is_read_however_long_the_cleanup() {
    let mut log = String::from(
        "##[group]Run python setup.py bdist_wheel\n\
         [1276/3874] Building CXX object c10/CMakeFiles/c10.dir/core/Allocator.cpp.o\n\
         FAILED: [code=127] third_party/fmt/CMakeFiles/fmt.dir/src/format.cc.o.ddi\n\
         \"CMAKE_CXX_COMPILER_CLANG_SCAN_DEPS-NOTFOUND\" -format=p1689 -- /usr/bin/clang++ -c format.cc\n\
         /bin/sh: 1: CMAKE_CXX_COMPILER_CLANG_SCAN_DEPS-NOTFOUND: not found\n\
         [1277/3874] Linking CXX static library lib/libc10.a\n\
         ninja: build stopped: subcommand failed.\n",
    );
    for i in 0..40 {
        log.push_str(&format!(
            "Post job cleanup: removing container volume {i}\n"
        ));
    }
    log.push_str("##[error]Process completed with exit code 1.\n");
    let d = diagnose_text("constructed-ninja-step", &log);
    let inferred = d
        .causes
        .iter()
        .find(|c| c.layer.as_deref() == Some("inferred"))
        .expect("an inferred cause");
    let lines: Vec<usize> = inferred.evidence.iter().map(|e| e.line).collect();
    assert!(
        lines.iter().all(|l| (3..=5).contains(l)),
        "the inferred cause reads the step's error block, got lines {lines:?}"
    );
}

/// A weak (`low`) cause printed before the step a CI runner said failed goes after the
/// inferred reading of that step's failing block: the runner says where the run stopped.
/// Constructed (labelled so): the shape of a Travis CI job whose setup prints the
/// runner's routine `command not found` (which resembles a CRLF script's `$'\r': command
/// not found` to the fuzzy layer), then a build step that fails. Before, the setup's line
/// led the report.
#[test]
fn a_weak_cause_before_the_failed_step_goes_after_the_steps_own_failure() {
    let log = "$ nvm install 10\n\
               /Users/travis/.travis/job_stages: line 476: yarn: command not found\n\
               Now using node v10.15.0\n\
               $ ./build.sh\n\
               Restoring packages for App.csproj...\n\
               Build FAILED.\n\
               App.csproj(12,5): error MSB4019: The imported project \"Microsoft.Common.props\" was not found.\n\
               \x20   0 Warning(s)\n\
               \x20   1 Error(s)\n\
               \n\
               The command \"./build.sh\" exited with 1.\n";
    let d = diagnose_text("constructed-travis-setup-noise", log);
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.layer.as_deref(), Some("inferred"), "{:?}", ids(&d));
    assert!(
        top.evidence.iter().all(|e| e.line >= 4),
        "{:?}",
        top.evidence
    );
    assert!(
        d.causes
            .iter()
            .skip(1)
            .any(|c| c.evidence.iter().any(|e| e.line == 2)),
        "the setup's weak cause stays, after: {:?}",
        ids(&d)
    );
}

/// An inferred cause that reads a wrapper's summary inside the failing block the
/// structure shows (`npm ERR! Test failed.`) leads its evidence with the block's first
/// line, the failure the summary follows. Constructed (labelled so): the shape of a
/// Travis CI `npm test` step running stylelint, whose report row is the failure.
#[test]
fn an_inferred_cause_on_a_summary_leads_with_the_blocks_first_line() {
    let log = "$ npm test\n\
               \n\
               > normalize.css@8.0.0 test /home/travis/build/x/normalize.css\n\
               > stylelint normalize.css\n\
               \n\
               normalize.css\n\
               \x2012:3  \u{2716}  Expected indentation of 2 spaces   indentation\n\
               \n\
               npm ERR! Test failed.  See above for more details.\n\
               \n\
               The command \"npm test\" exited with 1.\n";
    let d = diagnose_text("constructed-npm-stylelint", log);
    let top = d.causes.first().expect("a cause");
    assert_eq!(top.layer.as_deref(), Some("inferred"), "{:?}", ids(&d));
    let lines: Vec<usize> = top.evidence.iter().map(|e| e.line).collect();
    assert_eq!(lines, [7, 9]);
}

/// A step a CI runner said failed whose failing block has no error words (a usage text
/// after `flag provided but not defined`) is what the model reads, not a message a later
/// step prints about the failure (Travis's `after_failure`); words the model is not sure
/// of give no cause, and the report shows the block. Constructed (labelled so): the shape
/// of a Travis CI job whose test script stops on a flag its validator lacks.
#[test]
fn a_later_steps_message_is_not_read_for_a_failed_steps_wordless_block() {
    let log = "$ ci/run-tests.sh\n\
               All tests successful.\n\
               +t/validator --trace2_event_file=/tmp/x --progress=10000\n\
               flag provided but not defined: -trace2_event_file\n\
               Usage of t/validator:\n\
               \x20 -progress int\n\
               \x20   \tPrint progress message each time we have validated this many lines\n\
               The command \"ci/run-tests.sh\" exited with 1.\n\
               \n\
               $ ci/print-test-failures.sh\n\
               Build job failed before the tests could have been run\n\
               Done. Your build exited with 1.\n";
    let d = diagnose_text("constructed-travis-wordless-block", log);
    assert!(
        d.causes
            .iter()
            .all(|c| c.evidence.iter().all(|e| e.line <= 8)),
        "{:?}",
        ids(&d)
    );
    let primary = d.primary.as_ref().expect("the failing block");
    assert_eq!((primary.start, primary.end), (2, 8));
}
