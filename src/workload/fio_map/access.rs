//! The access lines of a job: `rw`, `rwmixread`, `bs`, `bssplit`, `bsrange`,
//! `blockalign`, the `rw=...:N` suffix and the random distribution.

use super::*;

/// Options whose value may hold one part per direction (`a,b[,c]`); elsewhere
/// a trailing comma is an empty part fio drops.
pub(super) const PER_DIRECTION: &[&str] = &["bs", "bssplit", "bsrange", "rate_iops", "rate", "blockalign", "random_distribution"];

/// A `bs` that is not a size; `bs=4k-512k` reads as a range but is not one:
/// fio 3.33 takes its first size and drops the rest without a word.
pub(super) fn bs_message(part: &str, message: String) -> String {
    match part.split_once('-') {
        Some((low, _)) if parse_size(low, 1024).is_ok() => format!(
            "'{}' is not one size: fio 3.33 reads it as {} and drops the rest without a word; for a range of sizes write bsrange={}, for one size bs={}",
            part.trim(),
            low.trim(),
            part.trim(),
            low.trim()
        ),
        _ => message,
    }
}

/// Most access lines one job may map to (bsrange makes one per size).
pub(super) const MAX_LINES: usize = 256;

/// `rw=read:8k` and `rw=randread:8` with `rw_sequencer`, onto the access lines:
/// a sequential job leaves a hole of N bytes after each I/O (`skip`); a random
/// one draws an offset every N I/Os and moves on sequentially between, or
/// repeats it with `rw_sequencer=identical` (`random_run`, `random_run_same`),
/// as fio 3.33's write_iolog shows.
pub(super) fn rw_suffix(set: &Settings, random: f64, kb_base: u64, lines: &mut [AccessLine], problems: &mut Problems, notes: &mut Notes) {
    let same = match set.value("rw_sequencer") {
        None | Some((_, "sequential")) => false,
        Some((_, "identical")) => true,
        Some((s, other)) => {
            problems.push(s, format!("'{}' is not an rw_sequencer: use sequential or identical", other.trim()), false);
            false
        }
    };
    let suffix = set.value("rw").and_then(|(s, v)| v.split_once(':').map(|(_, x)| (s, x.trim())));
    if random <= 0.0 {
        if let Some(s) = set.get("rw_sequencer") {
            notes.push(format!("{} ({}): it changes only random jobs with rw=...:N, in fio too", show(s), s.place()));
        }
        let Some((s, x)) = suffix.filter(|(_, x)| !x.is_empty()) else { return };
        if x.starts_with('-') {
            let m = format!("'{x}' moves fio backwards after each I/O; lunmark's sequential lines move forwards only: drop ':{x}', or give a hole after each I/O (rw=read:8k)");
            problems.push(s, m, false);
            return;
        }
        let Ok(skip) = parse_size(x, kb_base).map_err(|m| problems.push(s, m, false)) else { return };
        if skip > crate::workload::spec::MAX_SKIP {
            problems.push(
                s,
                format!("a hole of {skip} bytes after each I/O is more than lunmark allows ({})", Bytes(crate::workload::spec::MAX_SKIP)),
                false,
            );
            return;
        }
        notes.push(format!(
            "{} ({}): each sequential I/O leaves a hole of {} after it (the access line's skip)",
            show(s),
            s.place(),
            Bytes(skip)
        ));
        for l in lines.iter_mut() {
            l.skip = (skip > 0).then_some(Bytes(skip));
        }
        return;
    }
    let Some((s, x)) = suffix.filter(|(_, x)| !x.is_empty()) else {
        if let Some(s) = set.get("rw_sequencer") {
            notes.push(format!("{} ({}): it changes only rw=...:N with N above 1, in fio too", show(s), s.place()));
        }
        return;
    };
    let Ok(n) = x.parse::<u32>().map_err(|_| {
        problems.push(s, format!("'{x}' is not a number of I/Os per random offset: give a whole number, as rw=randread:8"), false)
    }) else {
        return;
    };
    if n <= 1 {
        notes.push(format!("{} ({}): a random offset for every I/O, as without the suffix", show(s), s.place()));
        return;
    }
    let between = if same { "repeat it" } else { "continue sequentially from it" };
    notes.push(format!(
        "{} ({}): a random offset every {n} I/Os, the {} between {between} (the access line's random_run)",
        show(s),
        s.place(),
        n - 1
    ));
    for l in lines.iter_mut() {
        l.random_run = Some(n);
        l.random_run_same = same;
    }
}

/// `rw` with `rwmixread`/`rwmixwrite`: the read, trim and random shares, in percent.
pub(super) fn direction(set: &Settings, problems: &mut Problems) -> (f64, f64, f64) {
    let Some((s, v)) = set.value("rw") else { return (100.0, 0.0, 0.0) };
    // The ':N' suffix is read by `rw_suffix`.
    let dir = v.split_once(':').map_or(v, |(d, _)| d).trim();
    let random = match dir {
        "read" | "write" | "rw" | "readwrite" => 0.0,
        "randread" | "randwrite" | "randrw" => 100.0,
        // Every I/O a trim (lunmark's --read 0 --trim 100).
        "trim" => return (0.0, 100.0, 0.0),
        "randtrim" => return (0.0, 100.0, 100.0),
        "trimwrite" | "randtrimwrite" => {
            problems.push(
                s,
                "trims each block and then writes it: lunmark draws trims and writes independently (--trim PCT), so it cannot keep that pairing",
                false,
            );
            return (100.0, 0.0, 0.0);
        }
        other => {
            problems.push(
                s,
                format!("'{other}' is not an I/O pattern: use read, write, randread, randwrite, rw, randrw, trim or randtrim"),
                false,
            );
            return (100.0, 0.0, 0.0);
        }
    };
    let mix_read = set.number::<f64>("rwmixread", problems);
    let mix_write = set.number::<f64>("rwmixwrite", problems);
    for (key, v) in [("rwmixread", mix_read), ("rwmixwrite", mix_write)] {
        if v.is_some_and(|v| !(0.0..=100.0).contains(&v)) {
            problems.push(set.get(key).expect("read above"), "a percentage must lie between 0 and 100", false);
        }
    }
    let read = match dir {
        "read" | "randread" => 100.0,
        "write" | "randwrite" => 0.0,
        _ => match (mix_read, mix_write) {
            (Some(r), Some(w)) if (r + w - 100.0).abs() > 0.01 => {
                let s = set.get("rwmixwrite").expect("read above");
                problems.push(s, format!("rwmixread={r} and rwmixwrite={w} do not add up to 100"), false);
                r
            }
            (Some(r), _) => r,
            (None, Some(w)) => 100.0 - w,
            (None, None) => 50.0,
        },
    };
    (read, 0.0, random)
}

/// `random_distribution=`: random, zipf:THETA, pareto:H and zoned:A/R:... mean
/// what lunmark's do (fio scatters zipf and pareto over the file by a hash, as
/// lunmark's default layout does; its zones lie in order). Refused: normal
/// (fio's is a sum of uniform draws, whose spread is not P% of the file),
/// zoned_abs, a centre, and zones per direction.
pub(super) fn distribution(set: &Settings, problems: &mut Problems) -> Option<crate::workload::dist::Distribution> {
    use crate::workload::dist::Distribution;
    let (s, v) = set.value("random_distribution")?;
    let v = v.trim();
    let kind = v.split(':').next().unwrap_or("");
    let args = v.split(':').count() - 1;
    match kind {
        "random" if args == 0 => None,
        "zipf" | "pareto" if args == 1 => match v.parse::<Distribution>() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(s, e.to_string(), false);
                None
            }
        },
        "zipf" | "pareto" => {
            problems.push(s, "a centre for zipf or pareto is not supported: give zipf:THETA or pareto:H", false);
            None
        }
        "zoned" if !v.contains(',') => match format!("{v}:contiguous").parse::<Distribution>() {
            Ok(d) => Some(d),
            Err(e) => {
                problems.push(s, e.to_string(), false);
                None
            }
        },
        "zoned" => {
            problems.push(s, "zones apart for reads, writes and trims are not supported: give one set of zones for all I/O", false);
            None
        }
        "normal" => {
            problems.push(
                s,
                "fio's normal is a sum of uniform draws whose spread is not P% of the file, and lunmark's normal:SIGMA% is a true bell curve: set dist = \"normal:SIGMA%\" in the imported profile instead",
                false,
            );
            None
        }
        _ => {
            problems.push(s, format!("'{v}' is not a distribution lunmark has: use random, zipf:THETA, pareto:H or zoned:A/R:..."), false);
            None
        }
    }
}

/// `blockalign=N` (`ba`): random offsets aligned to N (fio's default is the
/// transfer size, lunmark's too); `READ,WRITE` apart.
pub(super) fn block_align(set: &Settings, lines: &mut Vec<AccessLine>, kb_base: u64, problems: &mut Problems) {
    let Some((s, v)) = set.value("blockalign") else { return };
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 2 {
        problems.push(s, "a trim alignment of its own is not supported: give READ[,WRITE]", false);
        return;
    }
    let mut sizes = [None, None];
    for (i, p) in parts.iter().enumerate().filter(|(_, p)| !p.is_empty()) {
        match parse_size(p, kb_base) {
            Ok(n) if n > 0 => sizes[i] = Some(Bytes(n)),
            Ok(_) => problems.push(s, "an alignment must be above 0", false),
            Err(m) => problems.push(s, m, false),
        }
    }
    if parts.len() == 1 {
        sizes[1] = sizes[0];
    }
    let mut out = Vec::new();
    for l in lines.drain(..) {
        if l.read > 0.0 && l.read < 100.0 && l.trim == 0.0 && sizes[0] != sizes[1] {
            // One line of reads and writes, aligned apart: a line per direction.
            out.push(AccessLine { share: l.share * l.read / 100.0, read: 100.0, align: sizes[0].or(l.align), ..l.clone() });
            out.push(AccessLine { share: l.share * (100.0 - l.read) / 100.0, read: 0.0, align: sizes[1].or(l.align), ..l });
            continue;
        }
        let dir = if l.read >= 100.0 { 0 } else { 1 };
        out.push(AccessLine { align: sizes[dir].or(l.align), ..l });
    }
    *lines = out;
}

/// The access lines of a job: transfer sizes (bs, bssplit or bsrange, apart for
/// reads and writes when given so) times the read and random shares.
pub(super) fn access_lines(
    set: &Settings,
    kb_base: u64,
    read: f64,
    random: f64,
    problems: &mut Problems,
    notes: &mut Notes,
) -> Vec<AccessLine> {
    // Per direction (read, write): (size, share within the direction).
    let sizes: [Vec<(u64, f64)>; 2] = if let Some((s, v)) = set.value("bssplit") {
        per_direction(s, v, |s, part, problems| bssplit(s, part, kb_base, problems, notes), problems)
    } else if let Some((s, v)) = set.value("bsrange") {
        per_direction(s, v, |s, part, problems| bsrange(s, part, kb_base, problems), problems)
    } else if let Some((s, v)) = set.value("bs") {
        per_direction(
            s,
            v,
            |s, part, problems| {
                match parse_size(part, kb_base) {
                    // fio's own words for it (its minimum is 1).
                    Ok(0) => {
                        problems.push(s, "min value out of range: 0 (1 min), as fio says: give a transfer size above 0", false);
                        None
                    }
                    Ok(b) => Some(vec![(b, 100.0)]),
                    Err(m) => {
                        problems.push(s, bs_message(part, m), false);
                        None
                    }
                }
            },
            problems,
        )
    } else {
        [vec![(4096, 100.0)], vec![(4096, 100.0)]]
    };
    let mut lines = Vec::new();
    for (dir, dir_share, read_pct) in [(0, read, 100.0), (1, 100.0 - read, 0.0)] {
        if dir_share <= 0.0 {
            continue;
        }
        let list = &sizes[dir];
        // fio aligns random offsets to the smallest transfer of the direction.
        let min = list.iter().map(|(b, _)| *b).min().unwrap_or(4096);
        let align = list.iter().any(|(b, _)| *b != min).then_some(Bytes(min));
        for (bs, share) in list {
            lines.push(AccessLine {
                share: dir_share * share / 100.0,
                bs: Bytes(*bs),
                read: read_pct,
                random,
                align,
                ..Default::default()
            });
        }
    }
    // A job that only reads or only writes with one size is one line.
    if lines.len() == 2 && lines[0].bs == lines[1].bs && lines[0].align == lines[1].align {
        lines = vec![AccessLine { share: 100.0, bs: lines[0].bs, read, random, align: lines[0].align, ..Default::default() }];
    }
    if lines.len() > MAX_LINES {
        problems.push(
            set.get("bsrange").or(set.get("bssplit")).expect("many lines come from a range or split"),
            format!("{} transfer sizes: lunmark takes at most {MAX_LINES} lines per job (use a smaller range or a bssplit)", lines.len()),
            false,
        );
        lines.truncate(1);
        lines[0].share = 100.0;
    }
    lines
}

/// fio's `a[,b[,c]]` form: reads, writes (and trims). One value applies to both;
/// an empty one keeps fio's default (4k).
pub(super) fn per_direction(
    s: &Setting,
    v: &str,
    mut each: impl FnMut(&Setting, &str, &mut Problems) -> Option<Vec<(u64, f64)>>,
    problems: &mut Problems,
) -> [Vec<(u64, f64)>; 2] {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        problems.push(s, "give at most three comma-separated values: reads, writes, trims", false);
    }
    if parts.get(2).is_some_and(|p| !p.is_empty()) {
        problems.push(s, "a transfer size of its own for trims is not supported (trims take the write size): drop the third value", false);
    }
    let default = || vec![(4096, 100.0)];
    let mut get = |part: Option<&&str>, problems: &mut Problems| match part {
        Some(p) if !p.is_empty() => each(s, p, problems).unwrap_or_else(default),
        _ => default(),
    };
    let r = get(parts.first(), problems);
    let w = if parts.len() == 1 { r.clone() } else { get(parts.get(1), problems) };
    [r, w]
}

/// `bssplit=4k/50:8k/30:64k/` as fio reads it: sizes without a share split what
/// is left equally; fio sorts by size and the largest takes any remainder.
pub(super) fn bssplit(s: &Setting, part: &str, kb_base: u64, problems: &mut Problems, notes: &mut Notes) -> Option<Vec<(u64, f64)>> {
    let mut entries: Vec<(u64, Option<f64>)> = Vec::new();
    for e in part.split(':').filter(|e| !e.trim().is_empty()) {
        let (size, pct) = e.split_once('/').map(|(a, b)| (a, Some(b.trim()))).unwrap_or((e, None));
        let bs = parse_size(size, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
        if bs == 0 {
            problems.push(
                s,
                format!("'{}': min value out of range: 0 (1 min), as fio says: give transfer sizes above 0", size.trim()),
                false,
            );
            return None;
        }
        let pct = match pct.filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => match p.parse::<f64>() {
                Ok(0.0) => None,
                Ok(v) if (0.0..=100.0).contains(&v) => Some(v),
                _ => {
                    problems.push(s, format!("'{p}' is not a percentage in bssplit"), false);
                    return None;
                }
            },
        };
        entries.push((bs, pct));
    }
    if entries.is_empty() {
        problems.push(s, "bssplit needs SIZE/PERCENT entries separated by ':'", false);
        return None;
    }
    entries.sort_by_key(|(b, _)| *b);
    let given: f64 = entries.iter().filter_map(|(_, p)| *p).sum();
    let missing = entries.iter().filter(|(_, p)| p.is_none()).count();
    if given > 100.0 + 1e-9 {
        problems.push(s, format!("the shares add up to {given}%: at most 100%"), false);
        return None;
    }
    let fill = if missing > 0 { ((100.0 - given) / missing as f64).floor() } else { 0.0 };
    let mut out: Vec<(u64, f64)> = entries.iter().map(|(b, p)| (*b, p.unwrap_or(fill))).collect();
    let total: f64 = out.iter().map(|(_, p)| p).sum();
    if total < 100.0 - 1e-9 {
        let last = out.last_mut().expect("not empty");
        last.1 += 100.0 - total;
        notes.push(format!(
            "line {}: bssplit shares add up to {total}%: as in fio, the largest size ({}) takes the other {}%",
            s.line,
            Bytes(last.0),
            100.0 - total
        ));
    }
    out.retain(|(_, p)| *p > 0.0);
    Some(out)
}

/// `bsrange=MIN-MAX` as fio draws it: MIN + MAX x u (u uniform in [0,1)),
/// rounded down to a multiple of MIN and capped at MAX. Each multiple of MIN
/// becomes a line with the share fio gives it.
pub(super) fn bsrange(s: &Setting, part: &str, kb_base: u64, problems: &mut Problems) -> Option<Vec<(u64, f64)>> {
    let Some((a, b)) = part.split_once('-') else {
        problems.push(s, format!("'{part}' is not a range: write MIN-MAX, for example 4k-64k"), false);
        return None;
    };
    let min = parse_size(a, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
    let max = parse_size(b, kb_base).map_err(|m| problems.push(s, m, false)).ok()?;
    if min == 0 || max < min {
        problems.push(s, format!("'{part}': the range must run from a size above 0 up to a larger one"), false);
        return None;
    }
    let count = max.div_ceil(min);
    if count as usize > MAX_LINES {
        problems.push(
            s,
            format!("'{part}' spans {count} sizes: lunmark takes at most {MAX_LINES} lines per job (narrow the range or use bssplit)"),
            false,
        );
        return None;
    }
    let mut out: Vec<(u64, f64)> = Vec::new();
    for j in 1..=count {
        // P(floor((MIN + MAX u) / MIN) = j) = P((j-1) MIN / MAX <= u < j MIN / MAX).
        let lo = ((j - 1) * min) as f64 / max as f64;
        let hi = ((j * min) as f64 / max as f64).min(1.0);
        let bs = (j * min).min(max);
        let share = (hi - lo) * 100.0;
        match out.last_mut() {
            Some(last) if last.0 == bs => last.1 += share,
            _ => out.push((bs, share)),
        }
    }
    Some(out)
}
