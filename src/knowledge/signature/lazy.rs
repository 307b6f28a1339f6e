//! Regexes compiled on first use.
//!
//! Loading a library used to build every regex of every signature up front: with the
//! embedded library that was most of the start-up time (a 836-line journal spends far
//! longer compiling than matching), and with 10,000 signatures it took seconds and
//! hundreds of megabytes — while a typical log makes only a handful of signatures
//! candidates. So [`crate::knowledge::signature::compile`] checks each pattern where it can be
//! checked cheaply (the parser gives the same syntax errors as the regex engine, located
//! the same way) and defers the build to the first candidate that needs it.
//!
//! The one check that needs the build is the compiled size limit (E005). Patterns whose
//! parsed form could come anywhere near it ([`could_be_big`], a generous over-estimate)
//! are still built at load, so a pattern over the limit is reported exactly as before;
//! a deferred pattern is far below the limit by construction. `sig lint` builds every
//! regex of the files it lints regardless ([`LazyRegex::force`]), and a test builds every
//! regex of the embedded library under an eighth of the limit.

use std::fmt;
use std::ops::Deref;
use std::sync::OnceLock;

use regex::{Regex, RegexBuilder};
use regex_syntax::hir::{Class, Hir, HirKind};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::atoms::AtomSet;
use super::model::Examples;

/// Compiled size limit of one regex (bytes of the regex engine's program).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A regex with its pattern, built on first use. Dereferences to [`Regex`].
#[derive(Clone)]
pub struct LazyRegex {
    pattern: String,
    limit: usize,
    built: OnceLock<Regex>,
    /// The pattern's necessary literals ([`crate::knowledge::signature::atoms::necessary`]), read
    /// from the same parse that checked it.
    atoms: Option<AtomSet>,
}

impl LazyRegex {
    /// A regex that was already built (and checked).
    pub fn built(re: Regex, limit: usize) -> Self {
        let built = OnceLock::new();
        let pattern = re.as_str().to_string();
        let _ = built.set(re);
        LazyRegex {
            pattern,
            limit,
            built,
            atoms: None,
        }
    }

    /// A pattern whose syntax was checked and whose size is far below `limit`.
    pub fn deferred(pattern: &str, limit: usize) -> Self {
        LazyRegex {
            pattern: pattern.to_string(),
            limit,
            built: OnceLock::new(),
            atoms: None,
        }
    }

    /// Records the pattern's necessary literals.
    pub fn with_atoms(mut self, atoms: Option<AtomSet>) -> Self {
        self.atoms = atoms;
        self
    }

    /// The pattern's necessary literals, as recorded by [`LazyRegex::with_atoms`].
    pub fn atoms(&self) -> Option<&AtomSet> {
        self.atoms.as_ref()
    }

    /// The pattern.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// Whether it has been built yet.
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }

    /// Builds it now; the error is the regex engine's.
    pub fn force(&self) -> Result<&Regex, regex::Error> {
        if let Some(re) = self.built.get() {
            return Ok(re);
        }
        let re = RegexBuilder::new(&self.pattern)
            .size_limit(self.limit)
            .build()?;
        Ok(self.built.get_or_init(|| re))
    }

    fn get(&self) -> &Regex {
        self.built.get_or_init(|| {
            // Deferred patterns parsed cleanly and are far below the limit (every
            // pattern that could come near it, captures' own patterns included, is built
            // and checked at load: E005), so this build succeeds. It is never retried
            // without the limit: that is how a 1 KB file once cost 1.38 GB.
            RegexBuilder::new(&self.pattern)
                .size_limit(self.limit)
                .build()
                .unwrap_or_else(|_| never())
        })
    }
}

/// A regex that matches nothing (for a pattern the parser accepted and the engine did
/// not: not expected to happen, see [`LazyRegex::get`]).
fn never() -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new(r"[^\s\S]").expect("the empty class")
}

impl Deref for LazyRegex {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.get()
    }
}

/// The serialized form of a [`LazyRegex`] (the frozen library, see
/// [`crate::knowledge::frozen`]): the pattern and its atoms; never the built regex, and
/// never its size limit: a pattern read back is built under this build's
/// [`REGEX_SIZE_LIMIT`], whatever the bytes it came from say (a cache entry is not an
/// authority on how much memory a regex may take). It was checked when the library was
/// compiled, so it comes back deferred.
#[derive(serde::Serialize, serde::Deserialize)]
struct Frozen {
    pattern: String,
    atoms: Option<AtomSet>,
}

impl serde::Serialize for LazyRegex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Frozen {
            pattern: self.pattern.clone(),
            atoms: self.atoms.clone(),
        }
        .serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for LazyRegex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let f = Frozen::deserialize(d)?;
        Ok(LazyRegex::deferred(&f.pattern, REGEX_SIZE_LIMIT).with_atoms(f.atoms))
    }
}

impl fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LazyRegex({:?})", self.pattern)
    }
}

/// A signature's examples ([`Deflated`]): a run reads them only for the fuzzy index,
/// `sig test`, `explain` or `corpus`.
pub type LazyExamples = Deflated<Examples>;

/// A part of a signature a run seldom reads (its examples; its explanation, remediation
/// and references, read only for the signatures a diagnosis names). Compiled from YAML it
/// is held as it is; in a frozen library ([`crate::knowledge::frozen`]) it is kept as its
/// serialized bytes, deflated, and read on first use. Thawing every example log of every
/// signature at start-up was part of what thawing the embedded library cost (`sig list`
/// 5.5 → 5.1 ms, hyperfine); deflated, these parts are a fraction of the binary they were
/// (issue 32: its size). The bytes are the build's own ([`Deflated`]'s `Serialize`), so
/// reading them back cannot fail short of a corrupted binary; the frozen library is
/// compared with its YAML by a test.
#[derive(Clone, Default)]
pub struct Deflated<T> {
    value: OnceLock<T>,
    /// The serialized value, deflated, when `value` is yet to be read from it.
    frozen: Vec<u8>,
}

impl<T> Deflated<T> {
    pub fn new(value: T) -> Self {
        Deflated {
            value: OnceLock::from(value),
            frozen: Vec::new(),
        }
    }
}

impl<T: DeserializeOwned + Default> Deref for Deflated<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.value
            .get_or_init(|| postcard::from_bytes(&inflate(&self.frozen)).unwrap_or_default())
    }
}

impl<T: fmt::Debug + DeserializeOwned + Default> fmt::Debug for Deflated<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: Serialize + DeserializeOwned + Default> Serialize for Deflated<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let bytes = postcard::to_stdvec(&**self).map_err(serde::ser::Error::custom)?;
        s.serialize_bytes(&deflate(&bytes).map_err(serde::ser::Error::custom)?)
    }
}

impl<'de, T> serde::Deserialize<'de> for Deflated<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a serialized, deflated value")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        Ok(Deflated {
            value: OnceLock::new(),
            frozen: d.deserialize_byte_buf(Bytes)?,
        })
    }
}

/// `bytes` deflated (the frozen form of a [`Deflated`]).
fn deflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut z = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(bytes)?;
    z.finish()
}

/// `bytes` inflated; nothing when they do not inflate (not the build's own bytes).
fn inflate(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read as _;
    let mut out = Vec::new();
    match flate2::read::DeflateDecoder::new(bytes).read_to_end(&mut out) {
        Ok(_) => out,
        Err(_) => Vec::new(),
    }
}

/// An over-estimate of how much a parsed pattern can weigh once compiled, in units of
/// roughly one NFA state.
fn weight(h: &Hir) -> u64 {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(l) => l.0.len() as u64,
        // each range may become up to four UTF-8 byte-range states
        HirKind::Class(Class::Unicode(c)) => 4 * c.ranges().len() as u64 + 1,
        HirKind::Class(Class::Bytes(c)) => c.ranges().len() as u64 + 1,
        HirKind::Repetition(r) => {
            let copies = u64::from(r.max.unwrap_or(r.min).max(r.min)) + 1;
            weight(&r.sub).saturating_mul(copies).saturating_add(1)
        }
        HirKind::Capture(c) => weight(&c.sub).saturating_add(2),
        HirKind::Concat(v) | HirKind::Alternation(v) => v
            .iter()
            .map(weight)
            .fold(v.len() as u64, u64::saturating_add),
    }
}

/// Whether a parsed pattern could come near a compiled size limit of `limit` bytes:
/// a state of the engine's NFA takes well under 64 bytes, so a weight under a
/// sixty-fourth of the limit leaves a margin of several times.
pub fn could_be_big(h: &Hir, limit: usize) -> bool {
    weight(h) > (limit / 64) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hir(p: &str) -> Hir {
        regex_syntax::ParserBuilder::new()
            .build()
            .parse(p)
            .expect("parses")
    }

    #[test]
    fn small_patterns_are_deferred_and_big_ones_are_not() {
        let limit = REGEX_SIZE_LIMIT;
        assert!(!could_be_big(
            &hir(
                r"^(?P<ty>\w+Error): CUDA out of memory\. Tried to allocate (?P<n>[0-9.]+) (?P<u>[GM]iB)"
            ),
            limit
        ));
        // over the limit once compiled: must be built (and rejected) at load
        assert!(could_be_big(&hir(r"\w{1000}"), limit));
        assert!(RegexBuilder::new(r"\w{1000}")
            .size_limit(limit)
            .build()
            .is_err());
    }

    #[test]
    fn deferred_regexes_build_on_first_use() {
        let r = LazyRegex::deferred("a+b", 1 << 20);
        assert!(!r.is_built());
        assert!(r.is_match("xaab"));
        assert!(r.is_built());
        assert_eq!(r.as_str(), "a+b");
        let forced = LazyRegex::deferred("(c)", 1 << 20);
        assert_eq!(forced.force().map(|re| re.captures_len()).ok(), Some(2));
    }
}
