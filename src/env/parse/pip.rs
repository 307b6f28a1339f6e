//! Package reports: `pip list` / `uv pip list` tables, `pip freeze`, `pip list --format
//! json`, `pip show` blocks and collect_env's `[pip3] name==version` lines.

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use super::{Mode, Scanner};
use crate::knowledge::version::parse_version;

#[allow(clippy::expect_used)]
static FREEZE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\[(?:pip3?|uv)\]\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9,._ -]*\])?\s*===?\s*([0-9][^\s;#]*)\s*$")
        .expect("freeze regex")
});
#[allow(clippy::expect_used)]
static HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Package\s+Version(?:\s+\S.*)?$").expect("header regex"));
#[allow(clippy::expect_used)]
static DASHES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^-{3,}(?:\s+-{3,})+$").expect("dashes regex"));
#[allow(clippy::expect_used)]
static NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9._-]*$").expect("name regex"));

#[derive(Deserialize)]
struct JsonPackage {
    name: String,
    version: String,
}

fn add_json(s: &mut Scanner, line: usize, text: &str) -> bool {
    let Ok(list) = serde_json::from_str::<Vec<JsonPackage>>(text) else {
        return false;
    };
    if list.is_empty() {
        return false;
    }
    let origin = s.origin(line);
    for p in &list {
        s.facts_mut()
            .add_package(&p.name, &p.version, origin.clone());
    }
    s.facts_mut().has_package_list = true;
    s.report("pip list --format json", line);
    true
}

/// The whole text as one JSON package list.
pub fn whole_json(s: &mut Scanner, text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('[') && t.contains("\"name\"") && add_json(s, 1, text.trim())
}

/// One line outside any mode.
pub fn line(s: &mut Scanner, line: usize, t: &str) -> bool {
    if t.starts_with("[{") && t.contains("\"name\"") && add_json(s, line, t) {
        return true;
    }
    if HEADER.is_match(t) {
        s.set_mode(Mode::PipHeader);
        return true;
    }
    if let Some(name) = t.strip_prefix("Name:") {
        let name = name.trim();
        if NAME.is_match(name) {
            s.report("pip show", line);
            s.set_mode(Mode::PipShow {
                name: name.to_string(),
            });
            return true;
        }
    }
    if let Some(c) = FREEZE.captures(t) {
        let (name, version) = (&c[1], &c[2]);
        let kind = if t.starts_with('[') {
            "collect_env libraries"
        } else {
            "pip freeze"
        };
        s.report(kind, line);
        let o = s.origin(line);
        s.facts_mut().add_package(name, version, o);
        s.facts_mut().has_package_list = true;
        return true;
    }
    false
}

/// After the header: the dashes line starts the table.
pub fn table_dashes(s: &mut Scanner, t: &str) -> bool {
    if DASHES.is_match(t) {
        s.set_mode(Mode::PipTable);
        true
    } else {
        false
    }
}

/// A row `name version [location] [installer]`.
pub fn table_row(s: &mut Scanner, line: usize, t: &str) -> bool {
    let mut it = t.split_whitespace();
    let (Some(name), Some(version)) = (it.next(), it.next()) else {
        return false;
    };
    if !NAME.is_match(name) || parse_version(version).is_none() {
        return false;
    }
    s.report("pip list", line);
    let o = s.origin(line);
    s.facts_mut().add_package(name, version, o);
    s.facts_mut().has_package_list = true;
    s.set_mode(Mode::PipTable);
    true
}

fn names(v: &str) -> Vec<String> {
    v.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect()
}

/// A field of a `pip show` block.
pub fn show_field(s: &mut Scanner, line: usize, name: &str, t: &str) -> bool {
    if t == "---" {
        return true;
    }
    let Some((k, v)) = t.split_once(':') else {
        return false;
    };
    let v = v.trim();
    let keep = |s: &mut Scanner| {
        s.set_mode(Mode::PipShow {
            name: name.to_string(),
        })
    };
    match k {
        "Version" => {
            let o = s.origin(line);
            s.facts_mut().add_package(name, v, o);
            keep(s);
        }
        "Requires" => {
            s.facts_mut().set_dependencies(name, Some(names(v)), None);
            keep(s);
        }
        "Required-by" => {
            // the last field of a block
            s.facts_mut().set_dependencies(name, None, Some(names(v)));
        }
        "Summary"
        | "Home-page"
        | "Author"
        | "Author-email"
        | "License"
        | "Location"
        | "Editable project location"
        | "License-Expression"
        | "Metadata-Version"
        | "Installer"
        | "Classifiers"
        | "Entry-points"
        | "Files" => keep(s),
        _ => return false,
    }
    true
}
