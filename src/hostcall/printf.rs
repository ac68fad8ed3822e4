//! The hostcall printf service (service id 2), as ockl's `services.cl`
//! sends it and ROCclr's `devhcmessages.cpp` / `devhcprintf.cpp` serve it:
//! a work-item's printf is a message of several hostcall packets; each
//! packet's first word is a descriptor (bit 0 BEGIN, bit 1 END, bits 5..7
//! how many of the next seven words carry data, bits 8..63 the message
//! id the host assigned at BEGIN and returns in the first word), and the
//! message is formatted when its END packet arrives.
//!
//! A message is: a control word (bit 0: stderr instead of stdout; other
//! bits must be 0), the format string's bytes with their NUL padded to a
//! word, then one word per argument (integers zero-extended, floats as
//! `double`, pointers), a `%s` argument's bytes with their NUL padded to
//! whole words (a null string is one zero word).

use super::format::Spec;

const FLAG_BEGIN: u64 = 1;
const FLAG_END: u64 = 1 << 1;
const LEN_SHIFT: u32 = 5;
const LEN_MASK: u64 = 0b111;
const ID_SHIFT: u32 = 8;

/// Which stream a finished message goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// A finished message, formatted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Printed {
    pub stream: Stream,
    pub text: Vec<u8>,
}

/// Why a packet could not be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum PrintfError {
    #[error("printf packet continues message {0}, which is not open (no BEGIN packet started it, or it already ended)")]
    UnknownMessage(u64),
    #[error("printf message with control word {0:#x}: only bit 0 (stderr) is defined")]
    BadControl(u64),
    #[error("printf message without a control word")]
    Empty,
}

/// Messages being assembled, by id (ids of ended messages are reused).
#[derive(Debug, Default)]
pub(crate) struct Messages {
    open: Vec<Option<Vec<u64>>>,
}

impl Messages {
    /// Serves one work-item's packet `slot` (its eight payload words):
    /// appends its data to its message and, at END, formats it. Writes
    /// the reply into `slot[0]` as ROCclr does: the descriptor with the
    /// message id after BEGIN, the byte count after END.
    pub(crate) fn serve(&mut self, slot: &mut [u64; 8]) -> Result<Option<Printed>, PrintfError> {
        let desc = slot[0];
        let id = if desc & FLAG_BEGIN != 0 {
            let free = self.open.iter().position(Option::is_none);
            let id = free.unwrap_or(self.open.len());
            if id == self.open.len() {
                self.open.push(None);
            }
            self.open[id] = Some(Vec::new());
            slot[0] = (desc & !FLAG_BEGIN & ((1 << ID_SHIFT) - 1)) | ((id as u64) << ID_SHIFT);
            id
        } else {
            let id = desc >> ID_SHIFT;
            match self.open.get(id as usize) {
                Some(Some(_)) => id as usize,
                _ => return Err(PrintfError::UnknownMessage(id)),
            }
        };
        let len = ((desc >> LEN_SHIFT) & LEN_MASK) as usize;
        let data = self.open[id].as_mut().expect("opened or checked above");
        data.extend_from_slice(&slot[1..1 + len.min(7)]);
        if desc & FLAG_END == 0 {
            return Ok(None);
        }
        let words = self.open[id].take().expect("opened or checked above");
        let printed = render(&words);
        slot[0] = match &printed {
            Ok(p) => p.text.len() as u64,
            // What printf returns on an error.
            Err(_) => u64::MAX,
        };
        printed.map(Some)
    }
}

/// The bytes of a NUL-terminated string starting at `words[0]` and how
/// many words it takes (with its NUL, padded).
fn string_at(words: &[u64]) -> (Vec<u8>, usize) {
    let mut bytes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for b in w.to_le_bytes() {
            if b == 0 {
                return (bytes, i + 1);
            }
            bytes.push(b);
        }
    }
    (bytes, words.len())
}

/// Formats a whole message (control word first).
pub(crate) fn render(words: &[u64]) -> Result<Printed, PrintfError> {
    let (&control, rest) = words.split_first().ok_or(PrintfError::Empty)?;
    let stream = match control {
        0 => Stream::Stdout,
        1 => Stream::Stderr,
        other => return Err(PrintfError::BadControl(other)),
    };
    let (fmt, used) = string_at(rest);
    let mut args = &rest[used.min(rest.len())..];
    let mut text = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        let Some(at) = fmt[i..].iter().position(|b| *b == b'%') else {
            text.extend_from_slice(&fmt[i..]);
            break;
        };
        text.extend_from_slice(&fmt[i..i + at]);
        i += at + 1;
        if fmt.get(i) == Some(&b'%') {
            text.push(b'%');
            i += 1;
            continue;
        }
        // As ROCclr: out of arguments, or no conversion ends the
        // specification, ends the output there.
        let Some((mut spec, used)) = Spec::parse(&fmt[i..]) else {
            break;
        };
        i += used;
        let stars = spec.stars();
        if args.len() < stars + 1 {
            break;
        }
        spec.resolve_stars(&args[..stars]);
        args = &args[stars..];
        match spec.conv {
            b's' => {
                let (bytes, used) = string_at(args);
                spec.render_str(&bytes, &mut text);
                args = &args[used.max(1).min(args.len())..];
            }
            b'n' => args = &args[1..],
            _ => {
                spec.render_word(args[0], &mut text);
                args = &args[1..];
            }
        }
    }
    Ok(Printed { stream, text })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `s` packed into words as ockl's `append_string_n` sends it (with
    /// its NUL).
    fn words_of(s: &str) -> Vec<u64> {
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        bytes
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect()
    }

    /// Sends `data` as one message in packets of at most seven words.
    fn send(m: &mut Messages, data: &[u64]) -> Option<Printed> {
        let chunks: Vec<&[u64]> = data.chunks(7).collect();
        let mut desc = FLAG_BEGIN;
        let mut out = None;
        for (n, chunk) in chunks.iter().enumerate() {
            let mut slot = [0u64; 8];
            let end = if n + 1 == chunks.len() { FLAG_END } else { 0 };
            slot[0] = desc | end | ((chunk.len() as u64) << LEN_SHIFT);
            slot[1..1 + chunk.len()].copy_from_slice(chunk);
            out = m.serve(&mut slot).unwrap();
            desc = slot[0] & !FLAG_END & !(LEN_MASK << LEN_SHIFT);
        }
        out
    }

    #[test]
    fn a_message_in_several_packets_is_formatted_at_its_end() {
        let mut m = Messages::default();
        let mut data = vec![0];
        data.extend(words_of("tag %u: %s %d %5.2f %x%%\n"));
        data.push(7);
        data.extend(words_of("hello"));
        data.push(u64::from(-7i32 as u32));
        data.push(1.5f64.to_bits());
        data.push(0xbeef);
        let p = send(&mut m, &data).unwrap();
        assert_eq!(p.stream, Stream::Stdout);
        assert_eq!(
            String::from_utf8(p.text).unwrap(),
            "tag 7: hello -7  1.50 beef%\n"
        );
        // The id is free again.
        assert_eq!(m.open.iter().flatten().count(), 0);
    }

    #[test]
    fn interleaved_messages_keep_their_ids() {
        let mut m = Messages::default();
        let (mut a, mut b) = ([0u64; 8], [0u64; 8]);
        a[0] = FLAG_BEGIN | (1 << LEN_SHIFT);
        b[0] = FLAG_BEGIN | (2 << LEN_SHIFT);
        b[1] = 1;
        b[2] = words_of("b")[0];
        assert!(m.serve(&mut a).unwrap().is_none());
        assert!(m.serve(&mut b).unwrap().is_none());
        let mut a2 = [0u64; 8];
        a2[0] = (a[0] & !0xFF) | FLAG_END | (1 << LEN_SHIFT);
        a2[1] = words_of("a")[0];
        let mut b2 = [0u64; 8];
        b2[0] = (b[0] & !0xFF) | FLAG_END;
        assert_eq!(m.serve(&mut b2).unwrap().unwrap().stream, Stream::Stderr);
        let pa = m.serve(&mut a2).unwrap().unwrap();
        assert_eq!(pa.text, b"a");
        assert_eq!(a2[0], 1);
    }

    #[test]
    fn unknown_messages_and_controls_are_errors() {
        let mut m = Messages::default();
        let mut slot = [0u64; 8];
        slot[0] = (5 << ID_SHIFT) | FLAG_END;
        assert_eq!(m.serve(&mut slot), Err(PrintfError::UnknownMessage(5)));
        assert_eq!(render(&[4, 0]), Err(PrintfError::BadControl(4)));
    }

    #[test]
    fn missing_arguments_end_the_output_and_null_strings_print_empty() {
        let mut data = vec![0];
        data.extend(words_of("a=%d b=%d"));
        data.push(1);
        assert_eq!(render(&data).unwrap().text, b"a=1 b=");
        let mut data = vec![0];
        data.extend(words_of("[%s]%d"));
        data.push(0);
        data.push(3);
        assert_eq!(render(&data).unwrap().text, b"[]3");
    }
}
