//! Bounded input and quiet output for subcommands: files are read up to a
//! cap with a clear error past it, and output to a reader that went away
//! (`relaunch pm4 dump x | head`) ends the command quietly, not in a panic.

use std::io::{self, Write};
use std::path::Path;

use super::Failure;

/// Largest code-object file a subcommand reads by path (an offload bundle,
/// plain or compressed, is at most this; an ELF image is smaller).
pub const MAX_CODE_OBJECT_FILE_BYTES: u64 = relaunch_device::codeobj::extent::MAX_BUNDLE_BYTES;

/// Reads at most `cap` bytes of the regular file `path`; more, or a FIFO,
/// device or directory, is refused naming why (`inspect /dev/zero` must not
/// grow without end, nor `certify` of a FIFO block). `what` prefixes errors.
pub fn read_capped(what: &str, path: &Path, cap: u64) -> Result<Vec<u8>, Failure> {
    relaunch_device::file::read_regular(path, cap, "this command's input")
        .map_err(|e| Failure::input(format!("{what}: {e}")))
}

/// Runs `write` against locked, buffered stdout and flushes. A closed pipe
/// is the reader saying "enough": success, nothing printed.
pub fn to_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let done = write(&mut out).and_then(|()| out.flush());
    match done {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure {
            message: format!("writing to stdout: {e}"),
            code: 1,
        }),
    }
}

/// `println!` for subcommands that print as they go (`relaunch demo`): a
/// reader that went away (`relaunch demo | head`) ends the process quietly
/// with status 0, as it does for other Unix tools, instead of a panic.
macro_rules! say {
    () => {
        $crate::output::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

/// One line to stdout for [`say!`].
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = io::stdout().lock();
    if let Err(e) = writeln!(out, "{args}").and_then(|()| out.flush()) {
        if e.kind() == io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("relaunch: writing to stdout: {e}");
        std::process::exit(1);
    }
}

/// Like `to_stdout` for text already built.
pub fn print(text: &str) -> Result<(), Failure> {
    to_stdout(|out| out.write_all(text.as_bytes()))
}
