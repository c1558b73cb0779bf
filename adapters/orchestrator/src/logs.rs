//! Bounded log lines: whatever a request contains, no line on stderr is longer than a
//! few KiB, including the lines of rmcp, hyper and every other dependency.
//!
//! Two cuts, both marked: every field value (the message included) is cut at
//! [`LOG_FIELD_BYTES_MAX`], so the fields after a long one still show; the whole line is
//! cut at [`LOG_LINE_BYTES_MAX`] as a backstop (many fields, long span contexts).

use std::fmt::{self, Write as _};
use std::io;
use tracing::field::Field;
use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::format::{Writer, debug_fn};
use tracing_subscriber::fmt::{FormatFields, MakeWriter};

/// The longest field value written, in bytes; the rest is replaced by a marker.
pub const LOG_FIELD_BYTES_MAX: usize = 1_024;
/// The longest line written, in bytes (newline and marker included).
pub const LOG_LINE_BYTES_MAX: usize = 4_096;

/// Installs the process's subscriber: `filter` (an `EnvFilter` directive), bounded lines
/// on stderr, no colors.
pub fn init(filter: &str) -> Result<(), tracing_subscriber::filter::ParseError> {
    let filter = tracing_subscriber::EnvFilter::try_new(filter)?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .fmt_fields(bounded_fields())
        .with_writer(BoundedLines(io::stderr))
        .with_ansi(false)
        .init();
    Ok(())
}

/// Field formatting as the default (`message` bare, others `name=value`, space
/// separated), with every value cut at [`LOG_FIELD_BYTES_MAX`].
pub fn bounded_fields() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
    debug_fn(|writer: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug| {
        let name = field.name();
        if name != "message" {
            write!(writer, "{}=", name.strip_prefix("r#").unwrap_or(name))?;
        }
        let mut cut = Cut { out: writer, left: LOG_FIELD_BYTES_MAX, dropped: 0 };
        write!(cut, "{value:?}")?;
        let dropped = cut.dropped;
        if dropped > 0 {
            write!(writer, "…[cut {dropped} bytes]")?;
        }
        Ok(())
    })
    .delimited(" ")
}

/// Writes the first `left` bytes (at a character boundary) and counts the rest.
struct Cut<'a, W: fmt::Write> {
    out: &'a mut W,
    left: usize,
    dropped: usize,
}

impl<W: fmt::Write> fmt::Write for Cut<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if self.dropped > 0 || s.len() > self.left {
            let end = floor_char_boundary(s, if self.dropped > 0 { 0 } else { self.left });
            self.out.write_str(&s[..end])?;
            self.left = 0;
            self.dropped += s.len() - end;
            return Ok(());
        }
        self.left -= s.len();
        self.out.write_str(s)
    }
}

/// The largest index `<= at` that is a character boundary of `s`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    let mut end = at.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A `MakeWriter` whose writers cut each formatted event (the fmt layer writes one event
/// in one `write`) at [`LOG_LINE_BYTES_MAX`].
#[derive(Clone, Copy, Debug)]
pub struct BoundedLines<M>(pub M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for BoundedLines<M> {
    type Writer = BoundedLine<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        BoundedLine(self.0.make_writer())
    }
}

/// One event's writer ([`BoundedLines`]).
#[derive(Debug)]
pub struct BoundedLine<W>(W);

impl<W: io::Write> io::Write for BoundedLine<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if buf.len() <= LOG_LINE_BYTES_MAX {
            self.0.write_all(buf)?;
            return Ok(buf.len());
        }
        let marker = format!("…[line cut: {} bytes]\n", buf.len());
        let mut end = LOG_LINE_BYTES_MAX.saturating_sub(marker.len());
        // Back to a UTF-8 character boundary (a continuation byte is 0b10xx_xxxx).
        while end > 0 && (buf[end] & 0xC0) == 0x80 {
            end -= 1;
        }
        self.0.write_all(&buf[..end])?;
        self.0.write_all(marker.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn a_long_value_is_cut_with_a_marker_and_later_fields_survive() {
        let mut out = String::new();
        let mut cut = Cut { out: &mut out, left: 5, dropped: 0 };
        cut.write_str("abcdé").expect("write");
        cut.write_str("fgh").expect("write");
        let dropped = cut.dropped;
        assert_eq!((out.as_str(), dropped), ("abcd", "éfgh".len()));
    }

    #[test]
    fn a_long_line_is_cut_at_the_cap_with_its_length() {
        let mut sink = Vec::new();
        let line = format!("{}\n", "é".repeat(LOG_LINE_BYTES_MAX));
        BoundedLine(&mut sink).write_all(line.as_bytes()).expect("write");
        let text = String::from_utf8(sink).expect("still UTF-8");
        assert!(text.len() <= LOG_LINE_BYTES_MAX, "{}", text.len());
        assert!(text.ends_with(&format!("…[line cut: {} bytes]\n", line.len())), "{}", &text[text.len() - 40..]);
        let mut short = Vec::new();
        BoundedLine(&mut short).write_all(b"short\n").expect("write");
        assert_eq!(short, b"short\n");
    }
}
