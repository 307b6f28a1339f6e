//! The human report: what to read first, on one screen.

use std::fmt::Write as _;

use super::when_phrase;
use crate::engine::diagnosis::{Cause, Diagnosis};
use crate::engine::extract::{Extraction, Failure};
use crate::engine::findings::Finding;
use crate::engine::rank::Confidence;
use crate::engine::remedy::RenderedStep;
use crate::knowledge::text::{clip, escape_control};

/// Terminal styling; off when not a terminal or when `NO_COLOR` is set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    pub color: bool,
    /// Columns to fit lines into (`--width N`, or the terminal's); `None` (piped output)
    /// shows lines whole, up to [`UNBOUNDED`] characters.
    pub width: Option<usize>,
}

impl Style {
    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    fn conf(&self, c: Confidence, s: &str) -> String {
        match c {
            Confidence::High => self.paint("1;32", s),
            Confidence::Medium => self.paint("1;33", s),
            Confidence::Low => self.paint("1;31", s),
        }
    }
    fn cmd(&self, s: &str) -> String {
        self.paint("36", s)
    }
}

/// Characters of one log line shown when no width bounds the output (the JSON report
/// has the line whole).
pub const UNBOUNDED: usize = 4096;
/// Characters left for a line's text however narrow the width is.
const MIN_TEXT: usize = 20;
/// Characters of a clipped message's log prefix still shown (its tail: the logger's
/// origin, next to the message).
const PREFIX_MIN: usize = 12;
/// The explanation is shown in whole sentences, up to this many characters (at least
/// one sentence, however long).
const WHY_BUDGET: usize = 480;
/// A line-number gutter is at least this wide (it grows with the largest number).
const GUTTER_MIN: usize = 6;

impl Style {
    /// Characters left on a line after `used` columns.
    fn budget(&self, used: usize) -> usize {
        self.width
            .map_or(UNBOUNDED, |w| w.saturating_sub(used).max(MIN_TEXT))
    }
}

/// The text with at most `max` characters kept from its end (`…` in front when cut).
fn clip_start(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n + 1 - max.max(1)).collect();
    format!("…{tail}")
}

/// A log line split into its recognised prefix (journald, process tag, logger…) and its
/// message; the prefix is empty when none is recognised.
fn split_prefix(raw: &str) -> (&str, &str) {
    let rec = crate::engine::normalize::normalize_text(0, raw);
    match raw.strip_suffix(rec.message.as_str()) {
        Some(prefix) if !rec.message.is_empty() => (prefix, &raw[prefix.len()..]),
        _ => ("", raw),
    }
}

/// An evidence line fitted into `budget` characters: the message is kept first, the
/// prefix is dimmed and shortened from the front; only then is the message clipped.
fn fit_line(raw: &str, budget: usize, st: Style) -> String {
    let (prefix, msg) = split_prefix(raw);
    let (prefix, msg) = (escape_control(prefix), escape_control(msg));
    let (plen, mlen) = (prefix.chars().count(), msg.chars().count());
    if plen + mlen <= budget {
        return format!("{}{msg}", st.dim(&prefix));
    }
    let keep = budget.saturating_sub(mlen).max(PREFIX_MIN.min(plen));
    let prefix = clip_start(&prefix, keep);
    let rest = budget.saturating_sub(prefix.chars().count()).max(1);
    format!("{}{}", st.dim(&prefix), clip(&msg, rest))
}

/// Whole sentences of `text` up to `budget` characters (at least the first), and
/// whether some were left out.
fn sentences(text: &str, budget: usize) -> (&str, bool) {
    let mut end = 0;
    for (i, _) in text.match_indices(". ") {
        let next = text[i + 2..].chars().next();
        if !next.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit() || c == '(') {
            continue;
        }
        if end > 0 && text[..=i].chars().count() > budget {
            break;
        }
        end = i + 1;
    }
    if end == 0 || text.chars().count() <= budget {
        return (text, false);
    }
    (&text[..end], true)
}

/// Words of `text` on lines of at most `width` columns (a longer word has a line of
/// its own); the first line starts at column `first_used`, the others with `indent`.
fn wrap(text: &str, first_used: usize, indent: &str, width: Option<usize>) -> String {
    let Some(w) = width else {
        return text.to_string();
    };
    let mut out = String::new();
    let mut col = first_used;
    let mut line_empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let n = word.chars().count();
        if !line_empty && col + 1 + n > w {
            out.push('\n');
            out.push_str(indent);
            col = indent.chars().count();
            line_empty = true;
        }
        if !line_empty {
            out.push(' ');
            col += 1;
        }
        out.push_str(word);
        col += n;
        line_empty = false;
    }
    out
}

fn spread_text(c: &Cause) -> Option<String> {
    if c.spread.is_empty() {
        return None;
    }
    let per: Vec<String> = c
        .spread
        .iter()
        .map(|(_, s, w)| {
            if *w > 1 && *s > 1 {
                format!("{s}/{w} workers")
            } else if *s > 1 {
                format!("{s} streams")
            } else {
                String::new()
            }
        })
        .collect();
    let all_same = per.windows(2).all(|w| w[0] == w[1]);
    let n = c.spread.len();
    let mut out = String::new();
    if n > 1 {
        if all_same && !per[0].is_empty() {
            let _ = write!(out, "{} in each of {n} attempts (a crash loop)", per[0]);
        } else {
            let _ = write!(out, "in {n} attempts (a crash loop)");
            let detail: Vec<&str> = per
                .iter()
                .map(String::as_str)
                .filter(|s| !s.is_empty())
                .collect();
            if !detail.is_empty() {
                let _ = write!(out, ": {}", detail.join(", "));
            }
        }
    } else if !per[0].is_empty() {
        out.push_str(&per[0]);
    } else if c.occurrences > 1 {
        let _ = write!(out, "{} times", c.occurrences);
    } else {
        return None;
    }
    Some(out)
}

/// The "Seen:" line of a cause: its spread, and where it was first seen (the stream,
/// the time in a form a person reads, the line); None when there is neither.
fn seen_text(c: &Cause) -> Option<String> {
    let mut seen = Vec::new();
    if let Some(s) = spread_text(c) {
        seen.push(s);
    }
    if let Some(f) = &c.first {
        let who = if f.stream.is_empty() {
            String::new()
        } else {
            format!("{} ", escape_control(&f.stream))
        };
        let when = f
            .timestamp
            .as_deref()
            .map(|t| format!("at {} ", escape_control(&readable_time(t))))
            .unwrap_or_default();
        seen.push(if who.is_empty() && when.is_empty() {
            format!("first at line {}", f.line)
        } else {
            format!("first: {who}{when}(line {})", f.line)
        });
    }
    (!seen.is_empty()).then(|| seen.join("; "))
}

/// glog's `MMDD hh:mm:ss.uuuuuu` (no year).
#[allow(clippy::expect_used)]
static GLOG_TIME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"^([01][0-9])([0-3][0-9]) ([0-2][0-9]:[0-5][0-9]:[0-6][0-9])(\.[0-9]{1,3})?[0-9]*$",
    )
    .expect("built-in glog time regex")
});

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A log's timestamp as a person reads it: journald's raw `__REALTIME_TIMESTAMP`
/// (microseconds since the epoch) as a UTC date and time, glog's `0410 15:08:27.848000`
/// as `Apr 10 15:08:27.848`; any other form as written.
pub fn readable_time(t: &str) -> String {
    let t = t.trim();
    if (13..=17).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(us) = t.parse::<u64>() {
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_micros(us);
            let iso = humantime::format_rfc3339_seconds(at).to_string();
            return format!("{} UTC", iso.trim_end_matches('Z').replacen('T', " ", 1));
        }
    }
    if let Some(c) = GLOG_TIME.captures(t) {
        let month = c[1]
            .parse::<usize>()
            .ok()
            .and_then(|m| m.checked_sub(1))
            .and_then(|m| MONTHS.get(m));
        if let Some(month) = month {
            let frac = c.get(4).map_or("", |m| m.as_str());
            return format!("{month} {} {}{frac}", &c[2], &c[3]);
        }
    }
    t.to_string()
}

/// `[category · severity · confidence score · likely P %]`: the severity in red when the
/// cause is fatal or an error, the confidence in its own colour (a green `fatal` read as
/// fine); `likely P %` the cause's calibrated probability, when it has one.
fn badge(c: &Cause, st: Style) -> String {
    use crate::knowledge::signature::model::Severity;
    let sev = c.severity.as_str();
    let sev = match c.severity {
        Severity::Fatal => st.paint("1;31", sev),
        Severity::Error => st.paint("31", sev),
        _ => sev.to_string(),
    };
    let conf = format!("{} {:.2}", c.confidence.as_str(), c.score);
    let likely = c
        .probability
        .map(|p| format!(" · likely {:.0} %", p * 100.0))
        .unwrap_or_default();
    format!(
        "[{} · {sev} · {}{likely}]",
        c.category,
        st.conf(c.confidence, &conf)
    )
}

fn cause(out: &mut String, c: &Cause, st: Style) {
    let _ = writeln!(
        out,
        "{}. {}  {}",
        c.rank,
        st.bold(&escape_control(&c.title)),
        badge(c, st)
    );
    identity(out, c, st);
    if !c.captures.is_empty() {
        let caps: Vec<String> = c
            .captures
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_control(v)))
            .collect();
        let _ = writeln!(out, "   Read from the log: {}", caps.join("  "));
    }
    if let Some(seen) = seen_text(c) {
        let _ = writeln!(out, "   Seen: {}", wrap(&seen, 9, "         ", st.width));
    }
    where_line(out, c, st);
    evidence(out, c, st);
    why(out, c, st);
    for e in &c.environment {
        let _ = writeln!(out, "   In this environment: {}", escape_control(e));
    }
    fix_block(out, &c.remediation, st);
    consequences(out, c, st);
    for a in &c.also_matches {
        let _ = writeln!(
            out,
            "   Also matches (same evidence, less specific): {} — {} {}",
            escape_control(&a.signature),
            clip(&escape_control(&a.title), 90),
            st.dim(&format!("[{} · {:.2}]", a.category.as_str(), a.score))
        );
    }
    if let Some(r) = c.references.first() {
        let _ = writeln!(out, "   See: {}", escape_control(r));
    }
}

/// Under a cause's title: its signature (and layer), how it was found, and the folder it
/// came from when not crashdoc's own.
fn identity(out: &mut String, c: &Cause, st: Style) {
    match &c.layer {
        Some(layer) => {
            let _ = writeln!(out, "   {}", st.dim(&format!("{} ({layer})", c.signature)));
        }
        None => {
            let _ = writeln!(out, "   {}", st.dim(&c.signature));
        }
    }
    if let Some(note) = layer_note(c) {
        let _ = writeln!(out, "   {}", escape_control(&note));
    }
    if let Some(file) = super::provenance::origin(&c.signature) {
        let _ = writeln!(
            out,
            "   {}",
            st.bold(&format!(
                "from {} (a folder library, not crashdoc's own: check its commands)",
                escape_control(file)
            ))
        );
    }
}

/// `Where:` the module being imported, the crash site and the raise site when apart.
fn where_line(out: &mut String, c: &Cause, st: Style) {
    let mut wh = Vec::new();
    if let Some(m) = &c.importing {
        wh.push(format!("while importing {}", escape_control(m)));
    }
    if let Some(s) = &c.crash_site {
        let src = s
            .source
            .as_deref()
            .map(|x| format!(" `{}`", clip(&escape_control(x), 60)))
            .unwrap_or_default();
        wh.push(format!(
            "crash site {} in {}{src}",
            escape_control(&s.short()),
            escape_control(&s.function)
        ));
    }
    if let (Some(r), Some(cs)) = (&c.raise_site, &c.crash_site) {
        if r != cs {
            wh.push(format!("raised at {}", escape_control(&r.short())));
        }
    }
    if !wh.is_empty() {
        let _ = writeln!(
            out,
            "   Where: {}",
            wrap(&wh.join("; "), 10, "          ", st.width)
        );
    }
}

/// The consequences folded under a cause (the first six).
fn consequences(out: &mut String, c: &Cause, st: Style) {
    if !c.consequences.is_empty() {
        let _ = writeln!(
            out,
            "   Consequences (follow from this cause, not separate causes):"
        );
        for q in c.consequences.iter().take(6) {
            let times = if q.count > 1 {
                format!(" ×{}", q.count)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "     - line {}: {}{times}",
                q.line,
                clip(&escape_control(&q.text), st.budget(16 + times.len()))
            );
        }
        if c.consequences.len() > 6 {
            let _ = writeln!(out, "     - … {} more", c.consequences.len() - 6);
        }
    }
}

/// The first evidence lines under a gutter as wide as the largest line number.
fn evidence(out: &mut String, c: &Cause, st: Style) {
    let _ = writeln!(out, "   Evidence:");
    let shown = &c.evidence[..c.evidence.len().min(3)];
    let g = shown
        .iter()
        .map(|e| e.line.to_string().len())
        .max()
        .unwrap_or(0)
        .max(GUTTER_MIN);
    let budget = st.budget(3 + g + 3);
    for e in shown {
        let _ = writeln!(out, "   {:>g$} │ {}", e.line, fit_line(&e.text, budget, st));
    }
    if c.evidence.len() > 3 {
        let _ = writeln!(
            out,
            "   {:>g$} │ {}",
            "",
            st.dim(&format!(
                "… {} more (--format json for all)",
                c.evidence.len() - 3
            ))
        );
    }
}

/// The explanation in whole sentences, wrapped to the width.
fn why(out: &mut String, c: &Cause, st: Style) {
    let text = escape_control(&c.explain.replace('\n', " "));
    let (shown, cut) = sentences(text.trim(), WHY_BUDGET);
    let mut text = wrap(shown, 8, "        ", st.width);
    if cut {
        const MORE: &str = "(… --format json for the rest)";
        let last = text.rsplit('\n').next().map_or(0, |l| l.chars().count());
        let first_line = !text.contains('\n');
        let col = last + if first_line { 8 } else { 0 };
        if st.width.is_some_and(|w| col + 1 + MORE.chars().count() > w) {
            text.push_str("\n        ");
        } else {
            text.push(' ');
        }
        text.push_str(&st.dim(MORE));
    }
    let _ = writeln!(out, "   Why: {text}");
}

/// The "Fix" block of a cause or a finding: each step, when it applies, whether it fits
/// the environment, and its command (or why it has none); printed, never run; wrapped
/// to the width, the `when` on a line of its own then. Written here only.
fn fix_block(out: &mut String, steps: &[RenderedStep], st: Style) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "   Fix (printed, never run):");
    for (i, s) in steps.iter().enumerate() {
        let fits = if s.fits {
            st.bold(" [fits this environment]")
        } else {
            String::new()
        };
        let desc = escape_control(&s.description);
        let when = s.when.as_deref().map(|w| escape_control(&when_phrase(w)));
        match (when, st.width) {
            (Some(w), Some(_)) => {
                let d = wrap(&desc, 8, "        ", st.width);
                let w = wrap(&format!("— {w}"), 8, "          ", st.width);
                let _ = writeln!(out, "     {}. {d}{fits}\n        {}", i + 1, st.dim(&w));
            }
            (Some(w), None) => {
                let w = st.dim(&format!(" — {w}"));
                let _ = writeln!(out, "     {}. {desc}{w}{fits}", i + 1);
            }
            (None, _) => {
                let d = wrap(&desc, 8, "        ", st.width);
                let _ = writeln!(out, "     {}. {d}{fits}", i + 1);
            }
        }
        if let Some(cmd) = &s.command {
            let _ = writeln!(
                out,
                "        {}",
                st.cmd(&format!("$ {}", escape_control(cmd)))
            );
        } else if let Some(n) = &s.note {
            // the unfilled template itself is not printed: `{{unit}}` is no command
            let _ = writeln!(
                out,
                "        {}",
                st.dim(&format!("(command not shown: {})", escape_control(n)))
            );
        }
    }
}

/// Environment findings (compatibility rules the facts break), as text.
pub fn findings(findings: &[Finding]) -> String {
    let st = Style {
        color: false,
        width: None,
    };
    let mut out = String::new();
    for (i, f) in findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "{}. [{}] {} ({}, rule {})",
            i + 1,
            f.severity.as_str(),
            escape_control(&f.title),
            f.category.as_str(),
            f.rule
        );
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "   {}  ({})",
                escape_control(&e.what),
                escape_control(&e.origin.to_string())
            );
        }
        let _ = writeln!(
            out,
            "   Why: {}",
            escape_control(&f.explain.replace('\n', " "))
        );
        fix_block(&mut out, &f.remediation, st);
        if let Some(r) = f.references.first() {
            let _ = writeln!(out, "   See: {}", escape_control(r));
        }
    }
    out
}

/// The text format: for people, colour on a terminal; environment findings after the
/// causes.
/// Two inputs' reports are set apart by a blank line.
pub struct Text {
    pub style: Style,
    written: super::Written,
}

impl Text {
    pub fn new(style: Style) -> Text {
        Text {
            style,
            written: super::Written::default(),
        }
    }

    /// The report of one diagnosis: its causes, then its environment findings.
    pub fn one(&self, d: &Diagnosis) -> String {
        let mut out = render(d, self.style);
        if !d.findings.is_empty() {
            out.push_str("Environment problems (compatibility rules on the facts given):\n");
            out.push_str(&findings(&d.findings));
        }
        out
    }
}

impl super::Render for Text {
    fn diagnosis(
        &mut self,
        out: &mut dyn std::io::Write,
        d: Diagnosis,
    ) -> Result<(), super::RenderError> {
        let text = self.one(&d);
        self.written.write(out, "\n", &text)
    }
}

/// Lines of the primary block shown when no cause explains it.
const PRIMARY_SHOWN: usize = 12;

/// With no cause: the failing block (the log's structure found it), then how to teach it.
fn no_cause(out: &mut String, d: &Diagnosis, st: Style) {
    let Some(p) = &d.primary else {
        let _ = writeln!(
            out,
            "No known cause found. No failure was found in the log either."
        );
        return;
    };
    let span = if p.start == p.end {
        format!("line {}", p.start)
    } else {
        format!("lines {}\u{2013}{}", p.start, p.end)
    };
    let _ = writeln!(
        out,
        "No known cause. {}:",
        st.bold(&format!("The failure, {span}"))
    );
    for (n, text) in p.lines.iter().take(PRIMARY_SHOWN) {
        let _ = writeln!(
            out,
            "  {n:>6} \u{2502} {}",
            clip(&escape_control(text), st.budget(11))
        );
    }
    if p.lines.len() > PRIMARY_SHOWN {
        let _ = writeln!(
            out,
            "         \u{2026} {} more lines",
            p.lines.len() - PRIMARY_SHOWN
        );
    }
    if p.lines.is_empty() {
        if let Some(u) = &d.unexplained {
            let _ = writeln!(out, "  {}", clip(&escape_control(u), st.budget(2)));
        }
    }
    let failure = p
        .failure
        .and_then(|id| d.failures.iter().find(|f| f.id == id));
    if let Some(site) = failure.and_then(|f| f.crash_site.as_ref()) {
        let _ = writeln!(out, "  crash site {}", escape_control(&site.short()));
    }
    let _ = writeln!(
        out,
        "To teach crashdoc this failure: crashdoc sig new --from <log> (see CONTRIBUTING.md)."
    );
}

/// Renders a diagnosis.
pub fn render(d: &Diagnosis, st: Style) -> String {
    let mut out = String::new();
    let attempts = d.attempts.iter().filter(|a| a.failures > 0).count();
    let mut head = format!("crashdoc: {} — {} lines", escape_control(&d.input), d.lines);
    if attempts > 1 {
        let unit = d
            .unit
            .as_deref()
            .map(|u| format!(" of {}", escape_control(u)))
            .unwrap_or_default();
        let _ = write!(head, ", {attempts} crash attempts{unit}");
        if let Some(n) = d.attempts.iter().filter_map(|a| a.restart_counter).max() {
            let _ = write!(head, " (restart counter at {n})");
        }
    }
    let _ = writeln!(out, "{}\n", st.bold(&head));
    if !d.found() {
        // no known cause: the failing block first, then what an inferred cause suggests
        no_cause(&mut out, d, st);
        if !d.causes.is_empty() {
            let _ = writeln!(out, "\n{} (layer inferred):\n", suggests(d));
        }
    }
    if let Some(f) = &d.first_failure {
        let _ = writeln!(
            out,
            "{} line {}: {}\n",
            st.bold("The first failure, which no cause below explains (the top cause follows from another failure), is at"),
            f.line,
            clip(&escape_control(&f.headline), st.budget(0))
        );
    }
    for c in &d.causes {
        cause(&mut out, c, st);
        out.push('\n');
    }
    if !d.noise.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            st.bold("Explained noise (harmless; not the cause):")
        );
        for n in d.noise.iter().take(8) {
            let line = n
                .evidence
                .first()
                .map(|e| format!(" (first: line {})", e.line))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "   ×{:<4} {} — {}{line}",
                n.count,
                n.signature,
                escape_control(&n.title)
            );
        }
        if d.noise.len() > 8 {
            let _ = writeln!(out, "   … {} more", d.noise.len() - 8);
        }
    }
    if d.dropped_failures > 0 {
        let _ = writeln!(
            out,
            "{} further distinct failures were counted but not kept (limit: {} failures or {} MiB of their text)",
            d.dropped_failures,
            crate::engine::extract::MAX_FAILURES,
            crate::engine::extract::MAX_STORE_BYTES >> 20
        );
    }
    if let Some(f) = super::provenance::footer() {
        let _ = writeln!(out, "{}", st.dim(&f));
    }
    fitted(out, st)
}

/// A report fitted into the width, when there is one ([`super::fit`]).
fn fitted(out: String, st: Style) -> String {
    match st.width {
        Some(w) => super::fit::fit(&out, w),
        None => out,
    }
}

/// Renders an extraction: the signature author's debugging view.
pub fn render_extraction(input: &str, x: &Extraction, st: Style) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!(
            "{} — {} lines, {} failures, {} attempt(s){}",
            escape_control(input),
            x.lines,
            x.failures.len(),
            x.attempts.len(),
            x.unit
                .as_deref()
                .map(|u| format!(", unit {}", escape_control(u)))
                .unwrap_or_default()
        ))
    );
    for a in &x.attempts {
        let restart = a
            .restart_counter
            .map(|n| format!(", then restart counter at {n}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\n{}",
            st.bold(&format!(
                "Attempt {} (lines {}–{}): {} failure(s), {} worker stream(s){restart}",
                a.index, a.first_line, a.last_line, a.failures, a.workers
            ))
        );
        for f in x.failures.iter().filter(|f| f.attempt == a.index) {
            failure(&mut out, f, st);
        }
    }
    if x.dropped_failures > 0 {
        let _ = writeln!(
            out,
            "\n{} further distinct failures were counted but not kept (limit: {} failures or {} MiB of their text)",
            x.dropped_failures,
            crate::engine::extract::MAX_FAILURES,
            crate::engine::extract::MAX_STORE_BYTES >> 20
        );
    }
    if x.evicted_streams > 0 {
        let _ = writeln!(
            out,
            "{} streams had their open block closed early (limit of open streams)",
            x.evicted_streams
        );
    }
    fitted(out, st)
}

/// One failure of an extraction: its mark, kind, line and streams, the headline, then
/// the preamble, chain, module imported, crash and raise sites.
fn failure(out: &mut String, f: &Failure, st: Style) {
    let mark = if f.first_in_attempt {
        st.conf(Confidence::High, "FIRST ")
    } else if let Some(c) = f.consequence_of {
        st.dim(&format!("after #{c} "))
    } else {
        String::new()
    };
    let streams = if f.streams.len() > 1 {
        format!(
            " in {} streams ({}…), ×{}",
            f.streams.len(),
            escape_control(&f.streams[0]),
            f.count
        )
    } else if f.count > 1 {
        format!(" ×{}", f.count)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  #{} {mark}[{}] line {}{}{streams}",
        f.id,
        f.kind.as_str(),
        f.first.line,
        if f.first.stream.is_empty() {
            String::new()
        } else {
            format!(" {}", escape_control(&f.first.stream))
        },
    );
    let _ = writeln!(
        out,
        "      {}",
        clip(
            &escape_control(&f.headline.replace('\n', " ⏎ ")),
            st.budget(6)
        )
    );
    if let Some(p) = &f.preamble {
        let _ = writeln!(out, "      preamble: {}", escape_control(p));
    }
    if f.chain.len() > 1 {
        for e in &f.chain {
            let _ = writeln!(
                out,
                "      chain: line {} {}{}",
                e.line,
                clip(&escape_control(&e.headline()), 100),
                if e.wrapper { " (wrapper)" } else { "" }
            );
        }
    }
    if let Some(m) = &f.importing {
        let _ = writeln!(out, "      importing: {}", escape_control(m));
    }
    if let Some(s) = &f.crash_site {
        let _ = writeln!(
            out,
            "      crash site: {} ({}) line {}",
            escape_control(&s.file),
            escape_control(&s.function),
            s.line
        );
    }
    if let Some(s) = &f.raise_site {
        let _ = writeln!(
            out,
            "      raise site: {} ({}) line {}",
            escape_control(&s.file),
            escape_control(&s.function),
            s.line
        );
    }
    if f.truncated {
        let _ = writeln!(out, "      (cut off)");
    }
}

/// What the inferred causes read: the failure's words, or (a probable bug alone) the
/// traceback's structure.
pub(crate) fn suggests(d: &Diagnosis) -> &'static str {
    let structure = d
        .causes
        .iter()
        .all(|c| c.layer.as_deref() == Some("inferred") && c.probability.is_none());
    if structure && !d.causes.is_empty() {
        "What the failure's structure suggests"
    } else {
        "What the failure's words suggest"
    }
}

/// One sentence saying how a cause was found, when not by a signature's own conditions.
fn layer_note(c: &Cause) -> Option<String> {
    let layer = c.layer.as_deref().unwrap_or("signature");
    match (layer, c.similarity, &c.wrapped_by) {
        ("fuzzy", Some(s), _) => Some(format!(
            "layer fuzzy: resembles {} (similarity {s:.2}), not an exact match",
            c.signature
        )),
        ("wrapper", _, Some(w)) => Some(format!(
            "layer wrapper: found in the error wrapped by {w}"
        )),
        ("inferred", _, _) if c.probability.is_none() => Some(
            "layer inferred: read from the traceback's structure (the exception and the frame that raised it), not from its words".to_string(),
        ),
        ("inferred", _, _) => Some(format!(
            "layer inferred: no signature matched; the failure's words say {} with probability {:.2}{}",
            c.category.as_str(),
            c.probability.unwrap_or(c.score),
            if c.resembles.is_empty() {
                String::new()
            } else {
                format!(
                    "; resembles {}",
                    c.resembles
                        .iter()
                        .map(|r| format!("{} ({:.2})", r.signature, r.similarity))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        )),
        ("fallback", _, _) => Some(
            "layer fallback: no signature matched; a structural fallback (exception type, raising module) at low confidence".to_string(),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::readable_time;

    /// Issue 31, shortfall 15: raw glog and journald timestamps are not printed as read.
    #[test]
    fn raw_timestamps_are_made_readable() {
        assert_eq!(readable_time("1708471896000000"), "2024-02-20 23:31:36 UTC");
        assert_eq!(readable_time("0410 15:08:27.848000"), "Apr 10 15:08:27.848");
        assert_eq!(readable_time("1231 23:59:59"), "Dec 31 23:59:59");
        for kept in [
            "Feb 20 23:31:36",
            "2026-02-20T23:31:36Z",
            "1332 10:00:00",
            "12345",
        ] {
            assert_eq!(readable_time(kept), kept);
        }
    }
}
