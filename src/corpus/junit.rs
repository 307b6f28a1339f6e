//! JUnit XML for a corpus run (`crashdoc corpus run --format junit`), so CI systems
//! (GitLab, Jenkins, GitHub test reporters) show each incident as a test case.
//!
//! Layout, per the common JUnit schema CI tools read: one `<testsuites>` holding one
//! `<testsuite>` (`name`, `tests`, `failures`, `errors`, `skipped`, `time`); one
//! `<testcase>` per incident (`name` = incident, `classname` = `corpus.<category>`,
//! `time`); a wrong diagnosis is a `<failure message type>` with the problems as its
//! text, a log that cannot be read an `<error>`. quick-xml writes and escapes it;
//! characters XML 1.0 cannot carry at all (most C0 controls) are written as `\u{…}`.

use std::time::Duration;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;

use crate::corpus::run::Run;

/// Text XML 1.0 can carry: other control characters are spelled out.
fn xml_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            let ok = matches!(c, '\t' | '\n' | '\r')
                || (!c.is_control() && c != '\u{FFFE}' && c != '\u{FFFF}');
            if ok {
                c.to_string()
            } else {
                c.escape_unicode().to_string()
            }
        })
        .collect()
}

fn secs(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

fn write(run: &Run, suite: &str) -> std::io::Result<Vec<u8>> {
    let r = &run.report;
    let tests = r.incidents.len().to_string();
    let errors = r.incidents.iter().filter(|i| i.error.is_some()).count();
    let failures = r
        .incidents
        .iter()
        .filter(|i| !i.ok && i.error.is_none())
        .count();
    let (errors, failures) = (errors.to_string(), failures.to_string());
    let total = secs(run.total);
    let suite = xml_safe(suite);
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    w.create_element("testsuites")
        .with_attributes([
            ("name", suite.as_str()),
            ("tests", tests.as_str()),
            ("failures", failures.as_str()),
            ("errors", errors.as_str()),
            ("time", total.as_str()),
        ])
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attributes([
                    ("name", suite.as_str()),
                    ("tests", tests.as_str()),
                    ("failures", failures.as_str()),
                    ("errors", errors.as_str()),
                    ("skipped", "0"),
                    ("time", total.as_str()),
                ])
                .write_inner_content(|w| {
                    for i in &r.incidents {
                        let time = run
                            .durations
                            .iter()
                            .find(|(n, _)| *n == i.name)
                            .map_or_else(|| secs(Duration::ZERO), |(_, d)| secs(*d));
                        let classname = xml_safe(&format!("corpus.{}", i.expected));
                        let name = xml_safe(&i.name);
                        let case = w.create_element("testcase").with_attributes([
                            ("name", name.as_str()),
                            ("classname", classname.as_str()),
                            ("time", time.as_str()),
                        ]);
                        if i.ok {
                            case.write_empty()?;
                            continue;
                        }
                        let (tag, kind) = if i.error.is_some() {
                            ("error", "unreadable-log")
                        } else {
                            ("failure", "wrong-diagnosis")
                        };
                        let message = xml_safe(&i.problems.join("; "));
                        let body = xml_safe(&format!(
                            "expected: {}\ngot: {}\n{}",
                            i.expected,
                            if i.signatures.is_empty() {
                                "no cause".to_string()
                            } else {
                                i.signatures.join(", ")
                            },
                            i.problems.join("\n")
                        ));
                        case.write_inner_content(|w| {
                            w.create_element(tag)
                                .with_attributes([("message", message.as_str()), ("type", kind)])
                                .write_text_content(BytesText::new(&body))?;
                            Ok(())
                        })?;
                    }
                    Ok(())
                })?;
            Ok(())
        })?;
    let mut out = w.into_inner();
    out.push(b'\n');
    Ok(out)
}

/// The JUnit document of a run.
pub fn render(run: &Run, suite: &str) -> String {
    match write(run, suite) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        // writing to a Vec cannot fail; keep a valid document if it ever does
        Err(e) => format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"crashdoc corpus\" tests=\"0\" failures=\"0\" errors=\"1\"><!-- {} --></testsuites>\n",
            xml_safe(&e.to_string()).replace("--", "- -")
        ),
    }
}
