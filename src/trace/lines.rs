//! Text traces (blkparse output, MSR Cambridge CSV) read line by line: one
//! line is held at a time, so memory is the records kept, never the text (a
//! 2 GiB capture of mostly completion events once took 2 GiB and more to
//! parse). Lines are taken as UTF-8, invalid bytes replaced (as before).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{anyhow, Result};

use crate::input_path::{InputKind, TEXT_TRACE};
use crate::output_path::describe_io;

/// The longest line kept: an event or CSV line is under 200 bytes, so a
/// longer one is none of them (binary data, a file without newlines). Its
/// bytes are skipped, not stored.
pub const MAX_LINE: usize = 64 * 1024;

/// What a caller says after each line: read on, or stop here (a format
/// detected, an error found).
pub enum Next {
    More,
    Stop,
}

/// Calls `each(line number, line)` for every line of `reader` (the line
/// without its end, `None` for a line longer than `MAX_LINE`), holding one
/// line at a time. Returns the bytes read.
pub fn for_each(reader: &mut impl BufRead, mut each: impl FnMut(usize, Option<&str>) -> Result<Next>) -> Result<u64> {
    let (mut line, mut too_long, mut number, mut total) = (Vec::new(), false, 0usize, 0u64);
    let mut emit = |line: &mut Vec<u8>, too_long: &mut bool, number: &mut usize| -> Result<Next> {
        *number += 1;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        let next = if *too_long { each(*number, None)? } else { each(*number, Some(&String::from_utf8_lossy(line)))? };
        line.clear();
        *too_long = false;
        Ok(next)
    };
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            if !line.is_empty() || too_long {
                emit(&mut line, &mut too_long, &mut number)?;
            }
            return Ok(total);
        }
        let (take, ends) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        if !too_long && line.len() + take <= MAX_LINE {
            line.extend_from_slice(&buf[..take]);
        } else {
            (too_long, line) = (true, Vec::new());
        }
        let used = take + usize::from(ends);
        reader.consume(used);
        total += used as u64;
        if ends && matches!(emit(&mut line, &mut too_long, &mut number)?, Next::Stop) {
            return Ok(total);
        }
    }
}

/// `for_each` over the text trace at `path`: checked as every input is
/// (regular file, `TEXT_TRACE`'s limit), and refused if it grows past the
/// limit while it is read.
pub fn for_each_in(path: &Path, each: impl FnMut(usize, Option<&str>) -> Result<Next>) -> Result<()> {
    let kind: &InputKind = &TEXT_TRACE;
    let file = crate::input_path::open(path, kind)?;
    let mut reader = BufReader::with_capacity(1 << 20, file.take(kind.limit + 1));
    let read = for_each(&mut reader, each).map_err(|e| match e.downcast::<std::io::Error>() {
        Ok(io) => anyhow!("reading the trace {}: {}", path.display(), describe_io(&io)),
        Err(e) => e,
    })?;
    if read > kind.limit {
        anyhow::bail!("{}: grew past {} bytes while it was read: is something still writing it?", path.display(), kind.limit);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(text: &[u8], buf: usize) -> Vec<(usize, Option<String>)> {
        let mut out = Vec::new();
        let mut r = BufReader::with_capacity(buf, text);
        for_each(&mut r, |n, l| {
            out.push((n, l.map(str::to_string)));
            Ok(Next::More)
        })
        .unwrap();
        out
    }

    /// Lines across buffer boundaries, CRLF, a last line without a newline,
    /// and a line past `MAX_LINE` passed as None while the next is kept.
    #[test]
    fn lines_are_cut_at_newlines_whatever_the_buffer() {
        for buf in [1, 3, 4096] {
            let got = lines_of(b"ab\r\n\ncd\nlast", buf);
            let want = [(1, Some("ab")), (2, Some("")), (3, Some("cd")), (4, Some("last"))];
            assert_eq!(got, want.map(|(n, l)| (n, l.map(String::from))).to_vec(), "buffer {buf}");
        }
        let mut long = vec![b'x'; MAX_LINE + 10];
        long.extend_from_slice(b"\nok\n");
        assert_eq!(lines_of(&long, 8192), vec![(1, None), (2, Some("ok".to_string()))]);
    }
}
