//! Reading a file relaunch is given (a manifest, an archive, a code object):
//! one helper every such reader goes through.
//!
//! Owns: the rule that only a regular file is read, and never past a limit.
//! A path naming a FIFO, a device (`/dev/zero`), a socket or a directory is
//! refused before any byte is read, and the open never blocks (a FIFO is
//! opened non-blocking, then its type is checked on the opened descriptor,
//! so a file swapped in between the two checks is caught too). The limit is
//! enforced on what is read, not on the size the file reports (a proc or
//! sysfs file reports 0). Symbolic links to regular files are followed; a
//! caller that must stay inside a directory checks that itself.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file was not read. Messages name the path and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    #[error("cannot read {}: {message}", path.display())]
    Io {
        path: PathBuf,
        kind: std::io::ErrorKind,
        message: String,
    },
    #[error(
        "{} is {kind}, not a regular file; relaunch reads only regular files here \
         (copy the content into a file)", path.display()
    )]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error(
        "{} is larger than {limit} bytes, the limit for {what}; this is not a file relaunch \
         reads", path.display()
    )]
    TooLarge {
        path: PathBuf,
        limit: u64,
        what: &'static str,
    },
}

impl FileError {
    /// The file (or a directory on its path) does not exist.
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            FileError::Io {
                kind: std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory,
                ..
            }
        )
    }
}

/// A regular file's bytes and its metadata (from the opened descriptor).
#[derive(Debug)]
pub struct RegularFile {
    pub bytes: Vec<u8>,
    pub metadata: Metadata,
}

/// The bytes of the regular file at `path`, at most `limit` of them (`what`
/// names the limit in the error).
pub fn read_regular(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, FileError> {
    read_regular_file(path, limit, what).map(|f| f.bytes)
}

/// As [`read_regular`], with the metadata of the file that was read.
pub fn read_regular_file(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<RegularFile, FileError> {
    let io = |e: std::io::Error| FileError::Io {
        path: path.to_path_buf(),
        kind: e.kind(),
        message: e.to_string(),
    };
    // Refuse by type before opening: opening some devices has effects.
    check_type(path, &std::fs::metadata(path).map_err(io)?)?;
    let file: File = OpenOptions::new()
        .read(true)
        // A FIFO swapped in after the check must not block the open.
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let metadata = file.metadata().map_err(io)?;
    check_type(path, &metadata)?;
    let too_large = || FileError::TooLarge {
        path: path.to_path_buf(),
        limit,
        what,
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(RegularFile { bytes, metadata })
}

fn check_type(path: &Path, metadata: &Metadata) -> Result<(), FileError> {
    let ty = metadata.file_type();
    let kind = if ty.is_file() {
        return Ok(());
    } else if ty.is_dir() {
        "a directory"
    } else if ty.is_fifo() {
        "a FIFO"
    } else if ty.is_char_device() {
        "a character device"
    } else if ty.is_block_device() {
        "a block device"
    } else if ty.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(FileError::NotRegular {
        path: path.to_path_buf(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_directories_are_refused_before_reading() {
        for (path, kind) in [("/dev/zero", "a character device"), ("/", "a directory")] {
            match read_regular(Path::new(path), 16, "a test") {
                Err(FileError::NotRegular { kind: k, .. }) => assert_eq!(k, kind),
                other => panic!("{path}: {other:?}"),
            }
        }
    }
}
