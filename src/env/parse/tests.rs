//! Parser tests on report shapes (real reports are tested in tests/integration/env.rs).
use super::*;

#[test]
fn pip_list_table_and_show() {
    let text = "Package            Version\n------------------ -----------\nflashinfer-cubin   0.6.3\nflashinfer-python  0.6.4\nsglang             0.5.8\n\nName: flashinfer-cubin\nVersion: 0.6.3\nSummary: x\nRequires: \nRequired-by: sglang\n";
    let f = parse_text("t", text);
    assert_eq!(
        f.package("flashinfer_cubin").map(|p| p.version.as_str()),
        Some("0.6.3")
    );
    assert_eq!(f.package("sglang").map(|p| p.origin.line), Some(5));
    let p = f.package("flashinfer-cubin").expect("cubin");
    assert_eq!(p.required_by.as_deref(), Some(&["sglang".to_string()][..]));
    assert_eq!(p.requires.as_deref(), Some(&[][..]));
    assert!(f.has_package_list);
}

#[test]
fn json_and_freeze() {
    let f = parse_text(
        "j",
        r#"[{"name": "numpy", "version": "2.0.1"}, {"name": "torch", "version": "2.2.2"}]"#,
    );
    assert_eq!(
        f.package("torch").map(|p| p.version.as_str()),
        Some("2.2.2")
    );
    let f = parse_text(
        "f",
        "numpy==1.26.4\ntorch @ file:///x\nxformers==0.0.28.post3\n",
    );
    assert_eq!(
        f.package("xformers").map(|p| p.version.as_str()),
        Some("0.0.28.post3")
    );
    assert!(f.package("torch").is_none());
}

#[test]
fn nvidia_smi_table_and_csv() {
    let text = "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |\nname, compute_cap\nNVIDIA H100 80GB HBM3, 9.0\n";
    let f = parse_text("s", text);
    assert_eq!(
        f.driver.as_ref().map(|d| d.value.as_str()),
        Some("550.54.15")
    );
    assert_eq!(
        f.driver_cuda.as_ref().map(|d| d.value.as_str()),
        Some("12.4")
    );
    assert_eq!(f.gpus.len(), 1, "{:?}", f.gpus);
    assert_eq!(f.gpus[0].capability.as_deref(), Some("9.0"));
}

#[test]
fn log_lines_are_not_facts_by_accident() {
    let text = "ERROR 02-20 23:31:36 [multiproc_executor.py:783] Traceback (most recent call last):\nRuntimeError: flashinfer-cubin version (0.6.3) does not match flashinfer version (0.6.4).\n";
    let f = parse_text("log", text);
    assert!(f.is_empty(), "{f:?}");
}
