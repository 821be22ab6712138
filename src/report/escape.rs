//! User text (labels, profile, group and target names, notes) made safe for
//! each output format, one function per format, used by every writer of it.
//! The store keeps the text as given; only what is written out is escaped.
//!
//! - `html`: the five characters that make markup;
//! - `markdown`: Markdown's inline markup and any HTML in it (a renderer
//!   would run a `<img onerror=...>` in a label), a line break as `<br>`;
//! - `csv_field`: a text cell that a spreadsheet would take for a formula
//!   (it begins with `=`, `+`, `-`, `@`, a tab or a carriage return) gets a
//!   single quote in front, as OWASP recommends; a number stays a number; a
//!   field with a comma, a quote or a line break is quoted;
//! - `terminal`: control characters, and so every ANSI escape sequence
//!   (they all begin with ESC or the C1 CSI), shown in caret notation
//!   instead of acting on the terminal. Line breaks and tabs stay.

/// The entity that shows `c` as itself in HTML, for the characters markup gives a meaning to.
fn entity(c: char) -> Option<&'static str> {
    Some(match c {
        '&' => "&amp;",
        '<' => "&lt;",
        '>' => "&gt;",
        '"' => "&quot;",
        '\'' => "&#39;",
        _ => return None,
    })
}

/// Text for HTML, in an element or a quoted attribute.
pub fn html(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match entity(c) {
            Some(e) => out += e,
            // A control character (an ANSI escape's ESC) is drawn as a box: shown in caret notation instead.
            None if c.is_control() && c != '\n' && c != '\t' => out += &caret(c),
            None => out.push(c),
        }
    }
    out
}

/// Text for Markdown (in a table cell or a line): the characters of inline
/// markup backslash-escaped, those of HTML as entities (Markdown passes raw
/// HTML through; an entity is shown as its character), a line break as `<br>`.
pub fn markdown(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' | '<' | '>' | '"' => out += entity(c).expect("an HTML character"),
            '\n' => out += "<br>",
            '\r' => {}
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '!' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => out += &caret(c),
            c => out.push(c),
        }
    }
    out
}

/// One CSV field: a formula neutralised, quoted when it must be.
pub fn csv_field(f: &str) -> String {
    let formula = f.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(f);
    let f = if formula { format!("'{f}") } else { f.to_string() };
    // Control characters other than line breaks and tabs (an ANSI escape's ESC) act on a terminal that shows the file: caret notation.
    let f: String = f.chars().map(|c| if c.is_control() && !matches!(c, '\n' | '\r' | '\t') { caret(c) } else { c.to_string() }).collect();
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f
    }
}

/// A plain number ("-5", "+1.5", "-1e3"): a spreadsheet reads it as that
/// number, not as a formula, so it stays as it is.
fn is_number(f: &str) -> bool {
    let body = f.strip_prefix(['-', '+']).unwrap_or(f);
    body.starts_with(|c: char| c.is_ascii_digit() || c == '.') && f.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Text for a terminal: every control character but the line break and the
/// tab in caret notation (ESC as `^[`, so `ESC[2J` prints as `^[[2J` and
/// clears nothing); C1 controls as `<U+009B>`.
pub fn terminal(t: &str) -> String {
    if !t.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return t.to_string();
    }
    t.chars().map(|c| if c.is_control() && c != '\n' && c != '\t' { caret(c) } else { c.to_string() }).collect()
}

fn caret(c: char) -> String {
    match c as u32 {
        n @ 0..=0x1f => format!("^{}", char::from(n as u8 + 0x40)),
        0x7f => "^?".into(),
        n => format!("<U+{n:04X}>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An escape sequence in a label is shown, not obeyed, in HTML and CSV too.
    #[test]
    fn control_characters_are_shown_in_caret_notation_in_html_and_csv() {
        assert_eq!(html("a\u{1b}[2Jb<"), "a^[[2Jb&lt;");
        assert_eq!(csv_field("x\u{1b}[31m"), "x^[[31m");
        assert_eq!(csv_field("a\tb"), "a\tb");
    }

    #[test]
    fn markdown_shows_markup_and_html_as_text() {
        let md = markdown("<img src=x onerror=alert(1)> **b** [l](http://x) a|b\nc");
        assert_eq!(md, "&lt;img src=x onerror=alert(1)&gt; \\*\\*b\\*\\* \\[l\\](http://x) a\\|b<br>c");
        assert_eq!(markdown("42.5"), "42.5");
    }

    #[test]
    fn csv_neutralises_formulas_but_keeps_numbers() {
        assert_eq!(csv_field("=1+2"), "'=1+2");
        assert_eq!(csv_field("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_field("+cmd"), "'+cmd");
        assert_eq!(csv_field("-2+3"), "'-2+3");
        assert_eq!(csv_field("\tx"), "'\tx");
        assert_eq!(csv_field("\rx"), "\"'\rx\"");
        assert_eq!(csv_field("a\rb"), "\"a\rb\"");
        assert_eq!(csv_field("-5"), "-5");
        assert_eq!(csv_field("-1.5e3"), "-1.5e3");
        assert_eq!(csv_field("-inf"), "'-inf");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn terminal_text_carries_no_escape_sequence() {
        assert_eq!(terminal("a\x1b[2Jb\x1b]0;title\x07\n\tc\u{9b}"), "a^[[2Jb^[]0;title^G\n\tc<U+009B>");
        assert_eq!(terminal("plain\n"), "plain\n");
    }
}
