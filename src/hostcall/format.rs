//! C `printf` conversions as HIP's device printf reaches the host: the
//! format string and 64-bit argument words the hostcall printf service
//! assembled (`printf.rs`). Integers arrive zero-extended to 64 bits and
//! floating-point values widened to `double` (clang's printf lowering), so
//! the length modifier says how many low bits an integer conversion reads,
//! as a C `printf` reading an `int` from a 64-bit slot does.
//!
//! Owns: parsing one conversion ([`Spec`]) and rendering `%d %i %u %o %x
//! %X %c %s %p %f %F %e %E %g %G %a %A` with the flags `-+ #0`, width,
//! precision (`*` included) and the length modifiers `hh h l ll j z t L`,
//! byte for byte as glibc prints them. `%n` writes nothing here (nothing
//! on the host can receive it) and consumes its argument.

/// One parsed conversion specification (`%-08.3lx`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Spec {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    /// `Some(None)`: `*` (taken from the arguments).
    width: Option<Option<usize>>,
    precision: Option<Option<usize>>,
    /// Bits an integer conversion reads: 8 (`hh`), 16 (`h`), 32 (none), 64.
    int_bits: u32,
    pub(crate) conv: u8,
}

/// The conversion characters that end a specification.
const CONVERSIONS: &[u8] = b"diouxXfFeEgGaAcspn";

impl Spec {
    /// Parses the specification after a `%` at the start of `fmt`; returns
    /// it and the bytes it took, or `None` when no conversion character
    /// ends it (the rest of the format is then printed as it is).
    pub(crate) fn parse(fmt: &[u8]) -> Option<(Spec, usize)> {
        let mut spec = Spec {
            int_bits: 32,
            ..Spec::default()
        };
        let mut i = 0;
        while let Some(&c) = fmt.get(i) {
            match c {
                b'-' => spec.left = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'#' => spec.alt = true,
                b'0' => spec.zero = true,
                _ => break,
            }
            i += 1;
        }
        let number = |i: &mut usize| -> Option<Option<usize>> {
            if fmt.get(*i) == Some(&b'*') {
                *i += 1;
                return Some(None);
            }
            let start = *i;
            while fmt.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            let digits = std::str::from_utf8(&fmt[start..*i]).ok()?;
            Some(Some(digits.parse().unwrap_or(0)))
        };
        if fmt.get(i).is_some_and(|c| *c == b'*' || c.is_ascii_digit()) {
            spec.width = number(&mut i);
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            spec.precision = number(&mut i);
        }
        loop {
            match fmt.get(i) {
                Some(b'h') if spec.int_bits == 16 => spec.int_bits = 8,
                Some(b'h') => spec.int_bits = 16,
                Some(b'l' | b'j' | b'z' | b't' | b'L' | b'q') => spec.int_bits = 64,
                _ => break,
            }
            i += 1;
        }
        let conv = *fmt.get(i)?;
        if !CONVERSIONS.contains(&conv) {
            return None;
        }
        spec.conv = conv;
        Some((spec, i + 1))
    }

    /// How many `*` arguments precede the value.
    pub(crate) fn stars(&self) -> usize {
        usize::from(self.width == Some(None)) + usize::from(self.precision == Some(None))
    }

    /// Takes the `*` values (in order: width, then precision), as C reads
    /// them: an `int`; a negative width means `-` and its magnitude, a
    /// negative precision means none.
    pub(crate) fn resolve_stars(&mut self, words: &[u64]) {
        let mut words = words.iter().map(|w| *w as u32 as i32);
        if self.width == Some(None) {
            let w = words.next().unwrap_or(0);
            self.left |= w < 0;
            self.width = Some(Some(w.unsigned_abs() as usize));
        }
        if self.precision == Some(None) {
            let p = words.next().unwrap_or(-1);
            self.precision = (p >= 0).then_some(Some(p as usize));
        }
    }

    fn width(&self) -> usize {
        self.width.flatten().unwrap_or(0)
    }

    fn precision(&self) -> Option<usize> {
        self.precision.flatten()
    }

    /// Renders an integer, character or pointer conversion of `word`.
    pub(crate) fn render_word(&self, word: u64, out: &mut Vec<u8>) {
        match self.conv {
            b'd' | b'i' => {
                let v = sign_extend(word, self.int_bits);
                let sign = if v < 0 {
                    "-"
                } else if self.plus {
                    "+"
                } else if self.space {
                    " "
                } else {
                    ""
                };
                self.integer(sign, "", &v.unsigned_abs().to_string(), out);
            }
            b'u' => self.integer("", "", &truncate(word, self.int_bits).to_string(), out),
            b'o' => {
                let digits = format!("{:o}", truncate(word, self.int_bits));
                // `#`: the first digit is a 0 (precision raised if needed).
                let digits = if self.alt && !digits.starts_with('0') {
                    format!("0{digits}")
                } else {
                    digits
                };
                self.integer("", "", &digits, out);
            }
            b'x' | b'X' => {
                let v = truncate(word, self.int_bits);
                let (digits, prefix) = if self.conv == b'x' {
                    (format!("{v:x}"), "0x")
                } else {
                    (format!("{v:X}"), "0X")
                };
                let prefix = if self.alt && v != 0 { prefix } else { "" };
                self.integer("", prefix, &digits, out);
            }
            b'c' => self.pad(b"", &[word as u8], false, out),
            // glibc: `(nil)` for null, else `%#lx`.
            b'p' if word == 0 => self.pad(b"", b"(nil)", false, out),
            b'p' => self.pad(b"", format!("0x{word:x}").as_bytes(), false, out),
            _ => self.render_float(f64::from_bits(word), out),
        }
    }

    /// An integer's digits under precision (minimum digits; 0 with value 0
    /// prints none), then sign/prefix and padding.
    fn integer(&self, sign: &str, prefix: &str, digits: &str, out: &mut Vec<u8>) {
        let mut body = String::new();
        match self.precision() {
            Some(0) if digits == "0" => {
                // `%#.0o` of 0 still prints its 0.
                if self.alt && self.conv == b'o' {
                    body.push('0');
                }
            }
            Some(p) => {
                body.extend(std::iter::repeat_n('0', p.saturating_sub(digits.len())));
                body.push_str(digits);
            }
            None => body.push_str(digits),
        }
        let head = format!("{sign}{prefix}");
        // `0` pads with zeros only when no precision is given.
        let zero = self.zero && self.precision().is_none();
        self.pad(head.as_bytes(), body.as_bytes(), zero, out);
    }

    /// `head` (sign, prefix) and `body` padded to the width: spaces on the
    /// left (or right with `-`), or zeros between head and body.
    fn pad(&self, head: &[u8], body: &[u8], zero: bool, out: &mut Vec<u8>) {
        let len = head.len() + body.len();
        let fill = self.width().saturating_sub(len);
        if self.left {
            out.extend_from_slice(head);
            out.extend_from_slice(body);
            out.extend(std::iter::repeat_n(b' ', fill));
        } else if zero {
            out.extend_from_slice(head);
            out.extend(std::iter::repeat_n(b'0', fill));
            out.extend_from_slice(body);
        } else {
            out.extend(std::iter::repeat_n(b' ', fill));
            out.extend_from_slice(head);
            out.extend_from_slice(body);
        }
    }

    /// `%s` of `bytes` (the string without its NUL), cut to the precision.
    pub(crate) fn render_str(&self, bytes: &[u8], out: &mut Vec<u8>) {
        let cut = self.precision().map_or(bytes.len(), |p| p.min(bytes.len()));
        self.pad(b"", &bytes[..cut], false, out);
    }

    /// `%f %e %g %a` and their capitals.
    fn render_float(&self, v: f64, out: &mut Vec<u8>) {
        let upper = self.conv.is_ascii_uppercase();
        let sign = if v.is_sign_negative() {
            "-"
        } else if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        };
        if !v.is_finite() {
            let text = match (v.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            return self.pad(sign.as_bytes(), text.as_bytes(), false, out);
        }
        let a = v.abs();
        let (prefix, body) = match self.conv.to_ascii_lowercase() {
            b'f' => ("", fixed(a, self.precision().unwrap_or(6), self.alt)),
            b'e' => ("", exponent(a, self.precision().unwrap_or(6), self.alt)),
            b'g' => ("", general(a, self.precision().unwrap_or(6), self.alt)),
            _ => ("0x", hex_float(a, self.precision(), self.alt)),
        };
        let (prefix, body) = if upper {
            (prefix.to_ascii_uppercase(), body.to_ascii_uppercase())
        } else {
            (prefix.to_string(), body)
        };
        let head = format!("{sign}{prefix}");
        self.pad(head.as_bytes(), body.as_bytes(), self.zero, out);
    }
}

fn truncate(word: u64, bits: u32) -> u64 {
    if bits >= 64 {
        word
    } else {
        word & ((1u64 << bits) - 1)
    }
}

fn sign_extend(word: u64, bits: u32) -> i64 {
    if bits >= 64 {
        word as i64
    } else {
        let shift = 64 - bits;
        ((word << shift) as i64) >> shift
    }
}

/// `%f` digits of a non-negative finite value.
fn fixed(a: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{a:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// `%e` of a non-negative finite value: `d.ddde±XX`.
fn exponent(a: f64, precision: usize, alt: bool) -> String {
    let s = format!("{a:.precision$e}");
    let (mantissa, exp) = s.split_once('e').expect("Rust's {:e} has an exponent");
    let exp: i32 = exp.parse().expect("Rust's exponent is an integer");
    let dot = if alt && precision == 0 { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{dot}e{sign}{:02}", exp.unsigned_abs())
}

/// `%g`: `%e` or `%f` by the exponent, trailing zeros dropped unless `#`.
fn general(a: f64, precision: usize, alt: bool) -> String {
    let p = precision.max(1);
    // The exponent `%e` with P-1 digits would show (after its rounding).
    let e = format!("{a:.*e}", p - 1);
    let x: i64 = e
        .split_once('e')
        .and_then(|(_, x)| x.parse().ok())
        .unwrap_or(0);
    let mut s = if (x as i128) < p as i128 && x >= -4 {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    } else {
        exponent(a, p - 1, alt)
    };
    if !alt {
        let (digits, tail) = match s.find('e') {
            Some(at) => (s[..at].to_string(), s[at..].to_string()),
            None => (s.clone(), String::new()),
        };
        let digits = if digits.contains('.') {
            digits
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            digits
        };
        s = digits + &tail;
    }
    s
}

/// `%a` without its `0x`: `h.hhhp±d` (glibc: normal values lead with 1,
/// subnormals with 0 and exponent -1022; no precision prints the exact
/// digits, a precision rounds to nearest even).
fn hex_float(a: f64, precision: Option<usize>, alt: bool) -> String {
    if a == 0.0 {
        let digits = precision.map_or(String::new(), |p| "0".repeat(p));
        let dot = if !digits.is_empty() || alt { "." } else { "" };
        return format!("0{dot}{digits}p+0");
    }
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i64;
    let mut mantissa = bits & ((1u64 << 52) - 1);
    let (mut lead, exp) = if biased == 0 {
        (0u64, -1022)
    } else {
        (1u64, biased - 1023)
    };
    let digits = match precision {
        None => {
            let mut d = format!("{mantissa:013x}");
            while d.ends_with('0') {
                d.pop();
            }
            d
        }
        Some(p) if p >= 13 => format!("{mantissa:013x}{}", "0".repeat(p - 13)),
        Some(p) => {
            let drop = 4 * (13 - p) as u32;
            let kept = mantissa >> drop;
            let rest = mantissa & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            let mut kept = kept;
            if rest > half || (rest == half && kept & 1 == 1) {
                kept += 1;
            }
            if p == 0 {
                lead += kept;
                String::new()
            } else if kept >> (4 * p) != 0 {
                lead += 1;
                mantissa = kept & ((1u64 << (4 * p)) - 1);
                format!("{mantissa:0p$x}")
            } else {
                format!("{kept:0p$x}")
            }
        }
    };
    let dot = if !digits.is_empty() || alt { "." } else { "" };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{lead}{dot}{digits}p{sign}{}", exp.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Formats one conversion `spec` (without `%`) of `word`.
    fn one(spec: &str, word: u64) -> String {
        let (mut s, used) = Spec::parse(spec.as_bytes()).expect("a conversion");
        assert_eq!(used, spec.len());
        s.resolve_stars(&[]);
        let mut out = Vec::new();
        if s.conv == b's' {
            let bytes = word.to_le_bytes();
            let len = bytes.iter().position(|b| *b == 0).unwrap_or(8);
            s.render_str(&bytes[..len], &mut out);
        } else {
            s.render_word(word, &mut out);
        }
        String::from_utf8(out).unwrap()
    }

    fn f(v: f64) -> u64 {
        v.to_bits()
    }

    /// Zero-extended as clang's lowering passes an `int`.
    fn int(v: i32) -> u64 {
        u64::from(v as u32)
    }

    #[test]
    fn integers_follow_length_flags_width_and_precision() {
        assert_eq!(one("d", int(-7)), "-7");
        assert_eq!(one("i", int(42)), "42");
        assert_eq!(one("5d", int(-7)), "   -7");
        assert_eq!(one("-5d", int(7)), "7    ");
        assert_eq!(one("05d", int(-7)), "-0007");
        assert_eq!(one("+d", int(7)), "+7");
        assert_eq!(one(" d", int(7)), " 7");
        assert_eq!(one(".3d", int(7)), "007");
        assert_eq!(one("08.3d", int(7)), "     007");
        assert_eq!(one(".0d", 0), "");
        assert_eq!(one("u", int(-1)), "4294967295");
        assert_eq!(one("lu", u64::MAX), "18446744073709551615");
        assert_eq!(one("ld", u64::MAX), "-1");
        assert_eq!(one("hd", 0x1_8000), "-32768");
        assert_eq!(one("hhu", 0x1FF), "255");
        assert_eq!(one("x", 0xbeef), "beef");
        assert_eq!(one("#X", 0xbeef), "0XBEEF");
        assert_eq!(one("#x", 0), "0");
        assert_eq!(one("#08x", 0xbeef), "0x00beef");
        assert_eq!(one("o", 8), "10");
        assert_eq!(one("#o", 8), "010");
        assert_eq!(one("#.0o", 0), "0");
        assert_eq!(one("llx", 0x1234_5678_9abc_def0), "123456789abcdef0");
        assert_eq!(one("c", u64::from(b'A')), "A");
        assert_eq!(one("3c", u64::from(b'A')), "  A");
        assert_eq!(one("p", 0x1000), "0x1000");
        assert_eq!(one("p", 0), "(nil)");
    }

    #[test]
    fn floats_match_glibc() {
        assert_eq!(one("f", f(1.5)), "1.500000");
        assert_eq!(one("5.2f", f(1.5)), " 1.50");
        assert_eq!(one(".0f", f(2.5)), "2");
        assert_eq!(one("#.0f", f(3.0)), "3.");
        assert_eq!(one("+08.3f", f(-4.56789)), "-004.568");
        assert_eq!(one("e", f(1234.5)), "1.234500e+03");
        assert_eq!(one(".2E", f(0.000123)), "1.23E-04");
        assert_eq!(one("e", f(0.0)), "0.000000e+00");
        assert_eq!(one("g", f(100000.0)), "100000");
        assert_eq!(one("g", f(1000000.0)), "1e+06");
        assert_eq!(one("g", f(0.0001)), "0.0001");
        assert_eq!(one("g", f(0.00001)), "1e-05");
        assert_eq!(one("g", f(1.5)), "1.5");
        assert_eq!(one(".3g", f(4.56789)), "4.57");
        assert_eq!(one("#g", f(1.5)), "1.50000");
        assert_eq!(one("G", f(1e-10)), "1E-10");
        assert_eq!(one("a", f(1.5)), "0x1.8p+0");
        assert_eq!(one("a", f(1.0)), "0x1p+0");
        assert_eq!(one("a", f(-0.5)), "-0x1p-1");
        assert_eq!(one("A", f(255.0)), "0X1.FEP+7");
        assert_eq!(one(".1a", f(1.96875)), "0x2.0p+0");
        assert_eq!(one("a", f(0.0)), "0x0p+0");
        assert_eq!(one("a", f(f64::from_bits(1))), "0x0.0000000000001p-1022");
        assert_eq!(one("f", f(f64::INFINITY)), "inf");
        assert_eq!(one("5F", f(f64::NEG_INFINITY)), " -INF");
        assert_eq!(one("f", f(f64::NAN)), "nan");
    }

    #[test]
    fn strings_and_stars() {
        assert_eq!(one("s", u64::from_le_bytes(*b"hello\0\0\0")), "hello");
        assert_eq!(one("7s", u64::from_le_bytes(*b"hi\0\0\0\0\0\0")), "     hi");
        assert_eq!(one("-4s", u64::from_le_bytes(*b"hi\0\0\0\0\0\0")), "hi  ");
        assert_eq!(one(".3s", u64::from_le_bytes(*b"hello\0\0\0")), "hel");
        let (mut s, _) = Spec::parse(b"*.*f").unwrap();
        assert_eq!(s.stars(), 2);
        s.resolve_stars(&[int(-8), int(2)]);
        let mut out = Vec::new();
        s.render_word(f(1.0), &mut out);
        assert_eq!(out, b"1.00    ");
        assert!(Spec::parse(b"5").is_none());
        assert!(Spec::parse(b"k").is_none());
    }
}
