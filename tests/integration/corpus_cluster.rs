//! `crashdoc corpus cluster` on logs already in the repository (`corpus/`): with an
//! empty library nothing is explained, so the incidents that share a failure group into
//! one cluster each; with the embedded library the same logs are explained and give no
//! cluster; a tar archive of the logs clusters as the files do.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::util::{code, crashdoc, no_panic, repo, stderr};

/// Three incidents per failure shape, and two whose failures are their own.
const PORT: [&str; 3] = [
    "continuon-port-in-use-systemd-server",
    "jpmc-tech-task-port-in-use",
    "os-course-lab-port-in-use",
];
const DRIVER: [&str; 3] = [
    "chatglm3-pytorch-cuda-driver-too-old-11060",
    "colab-pytorch-cuda-driver-too-old-torch17",
    "gpt-sovits-cuda-driver-too-old",
];
const OTHERS: [&str; 2] = [
    "agent-distillation-import-error-faiss-missing",
    "armage-llama-cpp-model-load-error-gguf-missing-termux",
];

fn log(name: &str) -> String {
    format!("corpus/{name}/log.txt")
}

fn all_logs() -> Vec<String> {
    PORT.iter()
        .chain(DRIVER.iter())
        .chain(OTHERS.iter())
        .map(|n| log(n))
        .collect()
}

/// Runs `corpus cluster --format json` with the given library arguments.
fn cluster(library: &[&str], inputs: &[String]) -> (i32, Value) {
    let o = crashdoc()
        .args(["corpus", "cluster", "--format", "json"])
        .args(library)
        .args(inputs)
        .output()
        .expect("run");
    no_panic(&o);
    let v: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("json: {e}\n{}", stderr(&o)));
    (code(&o), v)
}

fn members(c: &Value) -> BTreeSet<String> {
    c["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m["log"].as_str().expect("log").to_string())
        .collect()
}

fn find<'v>(v: &'v Value, exception: &str, shape: &str) -> &'v Value {
    v["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .find(|c| c["exception"] == exception && c["shape"] == shape)
        .unwrap_or_else(|| panic!("no cluster {exception}: {shape} in {v:#}"))
}

#[test]
fn incidents_of_one_failure_group_into_one_cluster_with_a_draft_covering_them() {
    let empty = tempfile::tempdir().expect("tempdir");
    let lib = [
        "--no-builtin",
        "--signatures",
        empty.path().to_str().expect("utf-8"),
    ];
    let (rc, v) = cluster(&lib, &all_logs());
    assert_eq!(rc, 0, "{v:#}");
    assert_eq!(v["logs"], 8);
    // the port numbers, the quoted names and the driver versions are masked
    let port = find(&v, "OSError", "[Errno <n>] Address already in use");
    let driver = find(
        &v,
        "RuntimeError",
        "The NVIDIA driver on your system is too old (found version <n>).",
    );
    for (c, names) in [(port, &PORT), (driver, &DRIVER)] {
        assert_eq!(c["logs"], 3, "{c:#}");
        let want: BTreeSet<String> = names.iter().map(|n| log(n)).collect();
        assert_eq!(members(c), want);
        assert!(c["members"][0]["line"].as_u64().is_some_and(|l| l >= 1));
        // the draft lists every member as an example and matches each of them
        let d = &c["draft"];
        assert_eq!(d["examples"], 3, "{d:#}");
        assert_eq!(d["covers"], 3, "{d:#}");
        let yaml = d["yaml"].as_str().expect("yaml");
        for n in names.iter() {
            assert!(yaml.contains(&log(n)), "{n} not an example of\n{yaml}");
        }
    }
    // ranked by logs; every cluster shown occurs in at least --min-count (2) logs
    let counts: Vec<u64> = v["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .map(|c| c["logs"].as_u64().expect("logs"))
        .collect();
    assert!(counts.iter().all(|&n| n >= 2), "{counts:?}");
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    // the two failures of their own form no cluster of two
    for c in v["clusters"].as_array().expect("clusters") {
        let m = members(c);
        assert!(
            !OTHERS.iter().all(|n| m.contains(&log(n))),
            "unrelated logs grouped: {c:#}"
        );
    }
}

#[test]
fn failures_the_library_explains_are_not_clustered() {
    let (rc, v) = cluster(&[], &all_logs());
    let shown: Vec<&str> = v["clusters"]
        .as_array()
        .expect("clusters")
        .iter()
        .filter_map(|c| c["shape"].as_str())
        .collect();
    assert!(
        !shown.iter().any(|s| s.contains("Address already in use")
            || s.contains("NVIDIA driver on your system is too old")),
        "explained failures clustered: {shown:?}"
    );
    assert_eq!(rc == 1, shown.is_empty(), "exit {rc} with {shown:?}");
}

#[test]
fn a_tar_archive_clusters_as_its_files_do_and_a_missing_input_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tar_path = dir.path().join("logs.tar");
    {
        let f = std::fs::File::create(&tar_path).expect("create");
        let mut b = tar::Builder::new(f);
        for l in all_logs() {
            b.append_path_with_name(repo(&l), &l).expect("append");
        }
        b.finish().expect("finish");
    }
    let empty = tempfile::tempdir().expect("tempdir");
    let lib = [
        "--no-builtin",
        "--signatures",
        empty.path().to_str().expect("utf-8"),
    ];
    let (_, files) = cluster(&lib, &all_logs());
    let (rc, archived) = cluster(&lib, &[tar_path.display().to_string()]);
    assert_eq!(rc, 0);
    let shape = |v: &Value| -> Vec<(String, u64)> {
        v["clusters"]
            .as_array()
            .expect("clusters")
            .iter()
            .map(|c| (c["shape"].to_string(), c["logs"].as_u64().unwrap_or(0)))
            .collect()
    };
    assert_eq!(shape(&files), shape(&archived));
    let (rc, v) = cluster(&lib, &[log(PORT[0]), "no/such/log.txt".to_string()]);
    assert_eq!(rc, 2, "{v:#}");
    // a zip archive is refused with a message, not read as a log
    let zip = dir.path().join("logs.zip");
    std::fs::write(&zip, b"PK\x03\x04 not a log").expect("write");
    let (rc, v) = cluster(&lib, &[zip.display().to_string()]);
    assert_eq!(rc, 2, "{v:#}");
    assert_eq!(v["logs"], 0);
    assert!(
        v["errors"][0]
            .as_str()
            .is_some_and(|e| e.contains("zip archive")),
        "{v:#}"
    );
}
