//! Every file the library opens goes through here: params and `.vk` files (trusted by the
//! caller), decoded-SRS caches and their temp files (copies anyone with write access to the
//! cache directory could have made). A path is opened without following a final symbolic link
//! and without blocking (a FIFO or device at the path would hang `open` or `read` forever),
//! then must be a regular file with an acceptable owner and mode — or the open fails with a
//! message naming the path and the reason.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Who may have written a file for us to believe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// A file of the caller's params directory: owned by this process's user or root, not
    /// writable by everyone.
    Params,
    /// A file only this library writes (the decoded-SRS cache): owned by this process's user
    /// (or root), writable by nobody else.
    Private,
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

fn kind(mode: u32) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => "a directory",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        libc::S_IFLNK => "a symbolic link",
        _ => "not a regular file",
    }
}

/// Why a file with this owner and mode may not be believed under `trust`, if it may not.
fn refusal(uid: u32, mode: u32, trust: Trust) -> Option<String> {
    let me = euid();
    if uid != me && uid != 0 {
        return Some(format!("is owned by uid {uid}, not by this process's user (uid {me}) or root"));
    }
    let writable_by_others = match trust {
        Trust::Params => mode & 0o002 != 0,
        Trust::Private => mode & 0o022 != 0,
    };
    if writable_by_others {
        return Some(format!("is writable by other users (mode {:o})", mode & 0o7777));
    }
    None
}

/// Open `path` for reading as a regular file believed under `trust`. Errors are plain
/// strings naming the reason (the caller adds the status and what the file was for).
pub fn open_regular(path: &Path, trust: Trust) -> std::result::Result<File, String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => "is a symbolic link (give the real path)".to_string(),
            _ => e.to_string(),
        })?;
    let meta = file.metadata().map_err(|e| format!("cannot stat it: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!("is {}, not a regular file", kind(meta.mode())));
    }
    if let Some(why) = refusal(meta.uid(), meta.mode(), trust) {
        return Err(why);
    }
    Ok(file)
}

/// Check that a directory's own owner and mode let nobody else replace files in it: owned by
/// this user or root, and not writable by others unless sticky (like `/tmp`).
pub fn check_private_dir(dir: &Path) -> std::result::Result<(), String> {
    let meta = fs::metadata(dir).map_err(|e| e.to_string())?;
    if !meta.is_dir() {
        return Err(format!("is {}, not a directory", kind(meta.mode())));
    }
    let (uid, mode, me) = (meta.uid(), meta.mode(), euid());
    if uid != me && uid != 0 {
        return Err(format!("is owned by uid {uid}, not by this process's user (uid {me}) or root"));
    }
    if mode & 0o022 != 0 && mode & libc::S_ISVTX == 0 {
        return Err(format!("is writable by other users (mode {:o})", mode & 0o7777));
    }
    Ok(())
}

/// Create `dir` (and its parents) readable and writable by this user only, if missing.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

/// A new file beside `target` under a unique name (`<target>.<pid>.<n>.partial`), created
/// exclusively with mode 0600 and never through a link. It is removed on drop unless
/// [`TempFile::commit`] renamed it onto `target`.
pub struct TempFile {
    path: PathBuf,
    file: Option<File>,
}

impl TempFile {
    pub fn create(target: &Path) -> std::io::Result<TempFile> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let mut name: OsString = target.as_os_str().to_owned();
        let suffix = format!(".{}.{}{nanos:x}.partial", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        name.push(suffix);
        let path = PathBuf::from(OsString::from_vec(name.into_vec()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)?;
        // The mode asked for is masked by the umask; make sure of 0600.
        file.set_permissions(fs::Permissions::from_mode(0o600))?;
        Ok(TempFile { path, file: Some(file) })
    }

    pub fn file(&self) -> &File {
        self.file.as_ref().expect("open until commit")
    }

    /// Flush to disk and rename onto `target` (atomic: readers see the old file or the new one).
    pub fn commit(mut self, target: &Path) -> std::io::Result<()> {
        let file = self.file.take().expect("open until commit");
        file.sync_all()?;
        drop(file);
        fs::rename(&self.path, target)?;
        self.path = PathBuf::new(); // nothing left to remove
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("cuzk-files-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        create_private_dir(&d).unwrap();
        d
    }

    #[test]
    fn refuses_links_fifos_dirs_and_loose_modes() {
        let d = dir("refuse");
        let f = d.join("f");
        fs::write(&f, b"x").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(open_regular(&f, Trust::Params).is_ok());
        assert!(open_regular(&f, Trust::Private).is_ok());

        std::os::unix::fs::symlink(&f, d.join("link")).unwrap();
        assert!(open_regular(&d.join("link"), Trust::Params).unwrap_err().contains("symbolic link"));

        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(open_regular(&fifo, Trust::Params).unwrap_err().contains("FIFO"), "must not block on a FIFO");

        assert!(open_regular(&d, Trust::Params).unwrap_err().contains("directory"));

        fs::set_permissions(&f, fs::Permissions::from_mode(0o664)).unwrap();
        assert!(open_regular(&f, Trust::Params).is_ok());
        assert!(open_regular(&f, Trust::Private).unwrap_err().contains("writable by other users"));
        fs::set_permissions(&f, fs::Permissions::from_mode(0o646)).unwrap();
        assert!(open_regular(&f, Trust::Params).unwrap_err().contains("writable by other users"));

        assert!(check_private_dir(&d).is_ok());
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_private_dir(&d).unwrap_err().contains("writable"));
        fs::set_permissions(&d, fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(check_private_dir(&d).is_ok(), "sticky directories cannot have our files replaced");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn temp_files_are_unique_private_and_cleaned_up() {
        let d = dir("temp");
        let target = d.join("out");
        let a = TempFile::create(&target).unwrap();
        let b = TempFile::create(&target).unwrap();
        assert_ne!(a.path, b.path);
        assert_eq!(fs::metadata(&a.path).unwrap().mode() & 0o777, 0o600);
        let stale = b.path.clone();
        drop(b);
        assert!(!stale.exists(), "a dropped temp file is removed");
        use std::io::Write;
        (&*a.file()).write_all(b"data").unwrap();
        a.commit(&target).unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"data");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "only the target is left");
        fs::remove_dir_all(&d).unwrap();
    }
}
