//! Files crashdoc reads and writes, handled the same way everywhere.
//!
//! - Reads take **regular files only**: a symlink is followed to a regular file at most;
//!   a FIFO, a device (`/dev/zero`) or a socket is refused with an error naming the file
//!   (a FIFO is opened non-blocking, so that refusing it never waits for a writer). The
//!   size is checked on the opened file, and the read itself stops past the limit, so a
//!   file that grows (or lies about its size) still costs at most the limit.
//! - Folder walks ([`walk`]) skip a folder already visited (symlink loops) and stop at
//!   [`MAX_DEPTH`].
//! - Writes ([`write_atomic`], [`AtomicFile`]) go to a temporary file beside the
//!   destination, then are renamed over it: a reader sees the old file or the new one,
//!   never half of one. A destination that is a symlink is refused (a planted link
//!   cannot redirect a write).

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// How deep a folder is searched.
pub const MAX_DEPTH: usize = 32;

/// What is at a path (after following symlinks).
fn kind_name(ft: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// The error for a path that is not a regular file.
fn not_regular(ft: &std::fs::FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "is {}, not a regular file (crashdoc reads regular files only; pipe other sources to standard input)",
            kind_name(ft)
        ),
    )
}

/// Opens a regular file for reading (a symlink is followed); anything else is an error
/// whose message says what the path is.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // a FIFO without a writer would block the open itself
        o.custom_flags(libc::O_NONBLOCK);
    }
    let f = match o.open(path) {
        Ok(f) => f,
        // a socket cannot be opened at all (ENXIO): say what it is
        Err(e) => match std::fs::metadata(path) {
            Ok(m) if !m.is_file() && !m.is_dir() => return Err(not_regular(&m.file_type())),
            _ => return Err(e),
        },
    };
    let ft = f.metadata()?.file_type();
    if !ft.is_file() {
        return Err(not_regular(&ft));
    }
    #[cfg(unix)]
    clear_nonblock(&f);
    Ok(f)
}

#[cfg(unix)]
fn clear_nonblock(f: &File) {
    use std::os::unix::io::AsRawFd;
    let fd = f.as_raw_fd();
    // SAFETY: fcntl on a file descriptor this File owns; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
}

/// Whether a file or folder may be trusted by this process, as git decides for a
/// repository since CVE-2022-24765 (`safe.directory`): owned by the current user or by
/// root, and writable by nobody else (no group or other write bit). A file another
/// account could write is that account's text, whatever folder it sits in. Not Unix:
/// always trusted (no owner to compare).
pub fn check_trusted(meta: &std::fs::Metadata) -> Result<(), String> {
    check_owner(meta)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "writable by other users (mode {:o})",
                meta.mode() & 0o7777
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    Ok(())
}

/// The owner half of [`check_trusted`]: owned by the current user or root (what a
/// symlink itself must pass: its own mode means nothing).
pub fn check_owner(meta: &std::fs::Metadata) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = unsafe { libc::geteuid() };
        if meta.uid() != me && meta.uid() != 0 {
            return Err(format!(
                "owned by user id {}, not by you (user id {me}) or root",
                meta.uid()
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    Ok(())
}

/// [`read_capped`] of a file that must pass [`check_trusted`] (checked on the opened
/// file, so a file swapped in after the check is never read).
pub fn read_trusted(path: &Path, limit: usize) -> Result<Vec<u8>, ReadError> {
    let f = open_regular(path)?;
    let meta = f.metadata()?;
    check_trusted(&meta).map_err(|why| io::Error::new(io::ErrorKind::PermissionDenied, why))?;
    read_open(f, meta.len(), limit)
}

/// Why a bounded read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("file is {size} bytes; the limit is {limit}")]
    TooBig { size: u64, limit: usize },
}

/// Reads a regular file of at most `limit` bytes (checked on the opened file, and again
/// while reading).
pub fn read_capped(path: &Path, limit: usize) -> Result<Vec<u8>, ReadError> {
    let f = open_regular(path)?;
    let size = f.metadata()?.len();
    read_open(f, size, limit)
}

/// Reads an opened file of `size` bytes, at most `limit`.
fn read_open(f: File, size: u64, limit: usize) -> Result<Vec<u8>, ReadError> {
    if size > limit as u64 {
        return Err(ReadError::TooBig { size, limit });
    }
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(limit));
    f.take(limit as u64 + 1).read_to_end(&mut buf)?;
    if buf.len() > limit {
        return Err(ReadError::TooBig {
            size: buf.len() as u64,
            limit,
        });
    }
    Ok(buf)
}

/// [`read_capped`] as UTF-8 text (an invalid byte is an error).
pub fn read_capped_string(path: &Path, limit: usize) -> Result<String, ReadError> {
    let bytes = read_capped(path, limit)?;
    String::from_utf8(bytes).map_err(|e| {
        ReadError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        ))
    })
}

impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> io::Error {
        match e {
            ReadError::Io(e) => e,
            e @ ReadError::TooBig { .. } => io::Error::new(io::ErrorKind::FileTooLarge, e),
        }
    }
}

/// [`read_capped_string`] with the error as an [`io::Error`].
pub fn read_text(path: &Path, limit: usize) -> io::Result<String> {
    Ok(read_capped_string(path, limit)?)
}

/// Largest `--env` report, `expected.yaml`, configuration file read.
pub const MAX_SMALL_FILE_BYTES: usize = 16 << 20;

/// Largest saved corpus result (`baseline.json`) read.
pub const MAX_REPORT_BYTES: usize = 256 << 20;

/// What a folder walk found: files (sorted) and the paths it could not search, each
/// with a message.
#[derive(Debug, Default)]
pub struct Walk {
    pub files: Vec<PathBuf>,
    pub errors: Vec<(PathBuf, String)>,
}

/// Every file under `dir` (symlinks followed; a folder already visited is skipped, one
/// deeper than [`MAX_DEPTH`] is reported), in sorted order. `keep` says which files
/// (by path) are wanted.
pub fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Walk {
    let mut out = Walk::default();
    let mut seen = BTreeSet::new();
    walk_into(dir, 0, &mut seen, keep, &mut out);
    out.files.sort();
    out
}

fn walk_into(
    dir: &Path,
    depth: usize,
    seen: &mut BTreeSet<PathBuf>,
    keep: &dyn Fn(&Path) -> bool,
    out: &mut Walk,
) {
    let canon = match dir.canonicalize() {
        Ok(c) => c,
        Err(e) => {
            out.errors
                .push((dir.to_path_buf(), format!("cannot open the folder: {e}")));
            return;
        }
    };
    if !seen.insert(canon) {
        return;
    }
    if depth > MAX_DEPTH {
        out.errors.push((
            dir.to_path_buf(),
            format!("deeper than {MAX_DEPTH} folders, not searched"),
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => {
            out.errors
                .push((dir.to_path_buf(), format!("cannot read the folder: {e}")));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            walk_into(&p, depth + 1, seen, keep, out);
        } else if keep(&p) {
            out.files.push(p);
        }
    }
}

/// Refuses a destination that is a symbolic link.
fn refuse_symlink(path: &Path) -> io::Result<Option<std::fs::Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a symbolic link: crashdoc does not write through one (name its target instead)",
        )),
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// A file being written: bytes go to a temporary file beside the destination, which
/// [`AtomicFile::commit`] renames over it. Dropped without a commit, the temporary file
/// is removed and the destination is untouched.
pub struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<io::BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest` (refused when it is a symlink or a folder).
    pub fn create(dest: &Path) -> io::Result<AtomicFile> {
        AtomicFile::create_mode(dest, 0o666)
    }

    /// [`AtomicFile::create`], the new file readable and writable by its owner only
    /// (mode 0600: the cache's entries).
    pub fn create_private(dest: &Path) -> io::Result<AtomicFile> {
        AtomicFile::create_mode(dest, 0o600)
    }

    fn create_mode(dest: &Path, mode: u32) -> io::Result<AtomicFile> {
        let existing = refuse_symlink(dest)?;
        if let Some(m) = &existing {
            if !m.file_type().is_file() {
                return Err(not_regular(&m.file_type()));
            }
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = dest
            .file_name()
            .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
        let (tmp, file) = create_temp(&dir, &base, mode)?;
        if let (Some(m), 0o666) = (existing, mode) {
            // keep the mode of the file replaced
            let _ = file.set_permissions(m.permissions());
        }
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp,
            file: Some(io::BufWriter::new(file)),
        })
    }

    /// Flushes the temporary file to disk and renames it over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(w) = self.file.take() else {
            return Ok(());
        };
        let f = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        f.sync_all()?;
        drop(f);
        // the destination may have become a symlink since: still never write through it
        refuse_symlink(&self.dest)?;
        std::fs::rename(&self.tmp, &self.dest)
    }
}

/// A new file `.<base>.<pid>-<n>.tmp` in `dir`, created exclusively (never an existing
/// file or a symlink).
fn create_temp(dir: &Path, base: &str, mode: u32) -> io::Result<(PathBuf, File)> {
    const ATTEMPTS: u32 = 64;
    let mut last = None;
    for _ in 0..ATTEMPTS {
        let tmp = dir.join(format!(
            ".{base}.{}-{:08x}.tmp",
            std::process::id(),
            fastrand::u32(..)
        ));
        let mut o = OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, mode);
        #[cfg(not(unix))]
        let _ = mode;
        match o.open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no temporary file name left")))
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("already committed")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically (see [`AtomicFile`]).
pub fn write_atomic(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

/// [`write_atomic`] with [`AtomicFile::create_private`].
pub fn write_atomic_private(dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create_private(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_refuses_symlinks() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("a.txt");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("rewrite");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        #[cfg(unix)]
        {
            let target = d.path().join("target");
            std::fs::write(&target, b"keep").expect("target");
            let link = d.path().join("link");
            std::os::unix::fs::symlink(&target, &link).expect("symlink");
            assert!(write_atomic(&link, b"x").is_err());
            assert_eq!(std::fs::read(&target).expect("read"), b"keep");
        }
        let left: Vec<_> = std::fs::read_dir(d.path())
            .expect("ls")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }

    #[test]
    fn capped_reads_refuse_devices_and_big_files() {
        #[cfg(unix)]
        assert!(read_capped(Path::new("/dev/zero"), 16).is_err());
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("big");
        std::fs::write(&p, vec![b'x'; 100]).expect("write");
        assert!(matches!(
            read_capped(&p, 10),
            Err(ReadError::TooBig { size: 100, .. })
        ));
        assert_eq!(read_capped(&p, 100).expect("fits").len(), 100);
    }
}
