//! The report as a reader gets it: a real `qd x bs` sweep and a profile whose
//! phases differ by transfer size, rendered by lunmark and opened in headless
//! Chromium. Checks what a page pasted into a document needs: human headers
//! with units, formatted numbers, each point's workload, readable names, every
//! swept point drawn, the right x axis, and nothing wider than the page (from
//! the DOM, measured by the browser at two window widths).

use std::path::Path;

use crate::common::*;

/// Runs a measurement, returns the id it was saved as.
fn measure(store: &Path, args: &[&str]) -> String {
    let out = with_store(store, &[&["run", "-q"][..], args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    saved_id(&out)
}

/// The page's layout as the browser computed it at a window width: a copy of
/// the report with a script that writes the measurements into the DOM, read
/// back with --dump-dom. Returns (page fits, [(element (with its class:
/// `TABLE3.fit`), right edge, fits or scrolls, scrolls)]).
fn layout(html: &Path, width: u32) -> (bool, Vec<(String, f64, bool, bool)>) {
    let probe = html.with_file_name(format!("probe-{width}.html"));
    let script = "<script>window.addEventListener('load',()=>{const w=window.innerWidth;const out=[];\
        document.querySelectorAll('table,svg').forEach((e,i)=>{const r=e.getBoundingClientRect();\
        const box=e.closest('.scroll');const scrolls=!!box&&box.getBoundingClientRect().right<=w&&box.scrollWidth>box.clientWidth;\
        out.push(e.tagName+i+(e.classList.length?'.'+e.classList[0]:'')+' '+r.right.toFixed(1)+' '+(r.right<=w+0.5||scrolls)+' '+(!!box&&box.scrollWidth>box.clientWidth));});\
        const p=document.createElement('pre');p.id='measure';\
        p.textContent='page '+(document.documentElement.scrollWidth<=w)+' '+document.documentElement.scrollWidth+' '+w+'\\n'+out.join('\\n');\
        document.body.appendChild(p);});</script>";
    let text = std::fs::read_to_string(html).unwrap().replace("</body>", &format!("{script}</body>"));
    std::fs::write(&probe, text).unwrap();
    let url = format!("file://{}", probe.display());
    let out = chromium(&[&format!("--window-size={width},900"), "--virtual-time-budget=3000", "--dump-dom", &url]);
    let dom = stdout(&out);
    let measured = dom
        .split("<pre id=\"measure\">")
        .nth(1)
        .and_then(|m| m.split("</pre>").next())
        .unwrap_or_else(|| panic!("no measurement: {}", stderr(&out)));
    let mut lines = measured.lines();
    let page = lines.next().unwrap();
    let elements = lines
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2] == "true", f[3] == "true")
        })
        .collect();
    (page.starts_with("page true"), elements)
}

/// The SVG of one chart of the page.
pub(crate) fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html.find(&format!("<figure id=\"chart-{id}\">")).unwrap_or_else(|| panic!("no chart {id}"));
    let rest = &html[start..];
    &rest[..rest.find("</figure>").unwrap()]
}

/// A `qd x bs` sweep: one line per block size and result on the queue-depth
/// charts with a marker at every queue depth, the workload of every point
/// stated, human headers, formatted numbers, a readable default name, and a
/// page that fits a 1240 px window and a 700 px one (tables scroll inside it).
#[test]
fn a_qd_by_bs_sweep_report_draws_every_point_and_fits_the_page() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let sweep = ["--read", "100", "--sweep", "qd=1,4,16", "--sweep", "bs=4k,64k", "--time", "300ms", "--ramp", "0"];
    let a = measure(&store, &[&["-t", "mem:64m"][..], &sweep].concat());
    let b = measure(&store, &[&["-t", "mem:64m", "--label", "second run"][..], &sweep].concat());
    let html = dir.path().join("report.html");
    let out = with_store(&store, &["report", &a, &b, "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&html).unwrap();

    for header in ["p99.9 latency (µs)", "mean latency (µs)", "throughput (MB/s)", "CPU (% of all cores)", "IOPS per CPU %"] {
        assert!(text.contains(&format!(">{header}</th>")), "no header {header}");
    }
    for workload in ["bs 4k, 100% read, 100% random, QD 1, 1 worker, 1 target", "bs 64k, 100% read, 100% random, QD 16, 1 worker, 1 target"]
    {
        assert!(text.contains(workload), "workload not stated: {workload}");
    }
    // The unlabelled result is named by profile and target, nowhere by its id alone.
    assert!(text.contains("<td class=\"l\">custom on mem:64m</td>"), "no readable default name");
    assert!(!figure(&text, "iops").contains(&a), "a result named by its hex id");
    // IOPS of a 4k point on memory are in the hundreds of thousands: separators.
    let iops_cell = text.split("<td class=\"n\">").nth(1).unwrap().split('<').next().unwrap();
    assert!(iops_cell.contains(',') && !iops_cell.contains('.'), "IOPS cell {iops_cell}");

    for chart in ["iops-qd", "latency-qd"] {
        let svg = figure(&text, chart);
        for (label, color) in
            ["custom on mem:64m · bs=4k", "custom on mem:64m · bs=64k", "second run · bs=4k", "second run · bs=64k"].iter().zip(COLORS)
        {
            assert!(svg.contains(label), "{chart}: no line {label}");
            // Three queue depths, plus the legend's marker.
            assert_eq!(markers(svg, color), 4, "{chart}: {label} does not draw every point");
        }
    }
    // Latency percentiles of every point, on the nines axis.
    for n in [1, 2] {
        let svg = figure(&text, &format!("percentiles-{n}"));
        assert!(svg.contains("p99.99") && svg.contains("nines axis"), "percentiles-{n}");
        for color in &COLORS {
            assert_eq!(markers(svg, color), 6, "percentiles-{n}: five percentiles and a legend marker per point");
        }
    }

    for width in [1240, 700] {
        let (page, elements) = layout(&html, width);
        assert!(page, "the page is wider than a {width} px window");
        assert!(elements.len() >= 10, "{elements:?}");
        for (element, right, fits, _) in &elements {
            assert!(fits, "{element} ends at {right} px, past a {width} px window, and does not scroll");
            if width == 1240 {
                assert!(*right <= 1240.0, "{element} ends at {right} px at 1240 px");
            }
        }
    }
}

/// Profiles whose phases differ only in transfer size are charted against it;
/// a point of several seconds gets its per-second IOPS and p99 chart.
#[test]
fn phases_by_transfer_size_and_per_second_charts() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let id = measure(&store, &["line-rate", "-t", "mem:64m", "--time", "200ms", "--ramp", "0"]);
    let long = measure(&store, &["-t", "mem:16m", "--bs", "4k", "--read", "100", "--time", "3s", "--ramp", "0"]);
    let html = dir.path().join("report.html");
    assert!(with_store(&store, &["report", &id, "-o", html.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&html).unwrap();
    let iops = figure(&text, "iops");
    assert!(iops.contains("IOPS by transfer size"), "line-rate not charted by transfer size");
    for bs in ["4k", "64k", "256k"] {
        assert!(texts(iops).iter().any(|t| t == bs), "no {bs} category");
    }
    assert!(!iops.contains("phase="), "phases as x labels");
    // Reads and writes over the same sizes: a colour each, every size drawn.
    assert!(iops.contains("line-rate on mem:64m · 100% read") && iops.contains("line-rate on mem:64m · 0% read"), "no read/write sets");

    // The Markdown report: the same human table, numbers right-aligned, charts beside it.
    let md = dir.path().join("lr.md");
    assert!(with_store(&store, &["report", &id, "--format", "md", "-o", md.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("| p99.9 latency (µs) |") && text.contains("|:---|:---|:---|---:|"), "{text}");
    assert!(text.contains("| bs 256k, 0% read, 100% random, QD 4, 1 worker, 1 target |"), "{text}");
    assert!(dir.path().join("lr-iops.svg").exists() && text.contains("](lr-iops.svg)"));

    assert!(with_store(&store, &["report", &long, "-o", html.to_str().unwrap()]).status.success());
    let text = std::fs::read_to_string(&html).unwrap();
    let svg = figure(&text, "per-second-1");
    assert!(svg.contains("IOPS") && svg.contains("p99 latency (µs)"), "per-second panels");
    // Three seconds in each of the two panels, plus the legend's marker.
    assert_eq!(markers(svg, COLORS[0]), 7, "per-second markers");
}

/// The page's text as the browser built it: each heading, paragraph and
/// caption as "TAG\ttext", each table row as "ROW\tcell\tcell...", in order,
/// read back from headless Chromium's DOM (what a reader sees, entities and
/// all decoded by the browser, not by this test).
pub(crate) fn page_text(html: &Path) -> Vec<String> {
    let probe = html.with_file_name("probe-text.html");
    let script = "<script>window.addEventListener('load',()=>{const out=[];\
        document.querySelectorAll('h1,h2,h3,p,figcaption,tr').forEach(e=>{\
        if(e.tagName==='TR'){out.push('ROW\\t'+[...e.children].map(c=>c.textContent.replace(/\\s+/g,' ')).join('\\t'));}\
        else{out.push(e.tagName+'\\t'+e.textContent.replace(/\\s+/g,' '));}});\
        const p=document.createElement('pre');p.id='dom';p.textContent=btoa(unescape(encodeURIComponent(out.join('\\n'))));\
        document.body.appendChild(p);});</script>";
    let text = std::fs::read_to_string(html).unwrap().replace("</body>", &format!("{script}</body>"));
    std::fs::write(&probe, text).unwrap();
    let out = chromium(&["--virtual-time-budget=3000", "--dump-dom", &format!("file://{}", probe.display())]);
    let dom = stdout(&out);
    let b64 = dom
        .split("<pre id=\"dom\">")
        .nth(1)
        .and_then(|m| m.split("</pre>").next())
        .unwrap_or_else(|| panic!("no text read back: {}", stderr(&out)));
    String::from_utf8(base64_decode(b64)).unwrap().lines().map(str::to_string).collect()
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, c)| n | (val(*c) as u32) << (18 - 6 * i));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// The rows of the table that follows the heading `heading` (up to the next heading of any level).
pub(crate) fn rows_after<'a>(page: &'a [String], heading: &str) -> Vec<Vec<&'a str>> {
    let start = page.iter().position(|l| l.starts_with('H') && l.ends_with(&format!("\t{heading}"))).unwrap_or_else(|| {
        panic!("no heading {heading:?} in {page:#?}");
    });
    page[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with('H'))
        .filter_map(|l| l.strip_prefix("ROW\t"))
        .map(|l| l.split('\t').collect())
        .collect()
}

/// With --repeat, every figure of the report is the repeats' mean ± stdev
/// (said so), charts carry error bars, a single run is labelled; two results
/// or more get a comparison section with compare's numbers (difference,
/// ratio, p-value, verdict), "unknown (...)" where a difference cannot be
/// tested; the title and note are shown as written. Read back from Chromium.
#[test]
fn repeats_are_shown_as_mean_and_stdev_and_results_are_compared() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let common = ["-t", "mem:64m", "--read", "100", "--bs", "4k", "--sweep", "qd=1,4", "--time", "200ms", "--ramp", "0"];
    let a = measure(&store, &[&common[..], &["--repeat", "3", "--label", "base <b>&"]].concat());
    let b = measure(&store, &[&common[..], &["--repeat", "3", "--label", "second"]].concat());
    let single = measure(&store, &[&common[..], &["--label", "single"]].concat());
    let html = dir.path().join("report.html");
    let title = "Q3 <tuning> & \"review\"";
    let out = with_store(&store, &["report", &a, &b, &single, "-o", html.to_str().unwrap(), "--title", title, "--note", "one *two* <i>"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // The summary's 16 columns (the widest cells: mean ± stdev) fit the window from 800 px up, not scrolling sideways.
    for width in [800, 1024, 1280] {
        let (_, elements) = layout(&html, width);
        let summary = elements.iter().find(|e| e.0.starts_with("TABLE") && e.0.ends_with(".fit")).expect("the summary table");
        assert!(
            summary.1 <= width as f64 && !summary.3,
            "at {width} px the summary table ends at {} px or scrolls: {summary:?}",
            summary.1
        );
    }
    let page = page_text(&html);
    assert_eq!(page[0], format!("H1\t{title}"), "{page:#?}");
    assert!(page.contains(&"P\tone *two* <i>".to_string()), "the note as written: {page:#?}");
    assert!(page.iter().any(|l| l.contains("mean of the point's N repeats ± their sample standard deviation (stdev)")), "{page:#?}");

    // Summary: repeated points as mean ± stdev, the single run labelled.
    let summary = rows_after(&page, "Summary");
    let header = &summary[0];
    let (figs, iops) = (header.iter().position(|h| *h == "figures").unwrap(), header.iter().position(|h| *h == "IOPS").unwrap());
    for row in &summary[1..] {
        if row[0] == "single" {
            assert_eq!(row[figs], "single run");
            assert!(!row[iops].contains('±'), "{row:?}");
        } else {
            assert_eq!(row[figs], "mean ± stdev of 3 repeats", "{row:?}");
            assert!(row[iops].contains(" ± "), "{row:?}");
            assert!(row[header.iter().position(|h| *h == "p99 latency (µs)").unwrap()].contains(" ± "), "{row:?}");
        }
    }
    assert_eq!(summary.len(), 1 + 6);
    // About each result: a RAM LUN has no page cache to bypass, and a sweep's workload is its first point's.
    let about = page.iter().filter(|l| l.starts_with("ROW\t")).cloned().collect::<Vec<_>>();
    assert!(about.iter().any(|l| l == "ROW\tI/O\tno page cache in the path (RAM or network LUNs)"), "{about:#?}");
    assert!(about.iter().any(|l| l.starts_with("ROW\tworkload (first point)\t")), "{about:#?}");
    // Tables of one run's figures (per target, per worker) say a repeated point's are its picked run.
    for table in ["Targets", "Workers"] {
        for row in &rows_after(&page, table)[1..] {
            assert_eq!(row[1].contains("(picked run: repeat "), row[0] != "single", "{table}: {row:?}");
        }
    }

    // Comparison: the numbers of `compare` on the same results.
    let json = with_store(&store, &["compare", &a, &b, &single, "--format", "json"]);
    assert!(json.status.success(), "{}", stderr(&json));
    let c: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    for point in c["points"].as_array().unwrap() {
        let title = format!(
            "point {} · values: base <b>&: mean of 3 repeats; second: mean of 3 repeats; single: single run",
            point["params"].as_str().unwrap()
        );
        let rows = rows_after(&page, &title);
        let iops_row = rows.iter().find(|r| r[0] == "IOPS").unwrap_or_else(|| panic!("no IOPS row: {rows:?}"));
        let want = point["rows"].as_array().unwrap().iter().find(|r| r["metric"] == "IOPS").unwrap();
        let second = &want["versus"][0];
        assert_eq!(iops_row[4], format!("{:+.1}%", second["diff_pct"].as_f64().unwrap()), "{iops_row:?}");
        assert_eq!(iops_row[5], format!("{:.2}x", second["ratio"].as_f64().unwrap()));
        let p = second["p_value"].as_f64().unwrap();
        assert_eq!(iops_row[6], if p < 0.001 { "<0.001".to_string() } else { format!("{p:.3}") });
        assert!(iops_row[7].starts_with(second["verdict"].as_str().unwrap()), "{iops_row:?}");
        // The single run cannot be tested against repeats.
        assert_eq!(iops_row[11], "unknown (repeats in one result only)", "{iops_row:?}");
    }
    assert!(page.iter().any(|l| l.starts_with("P\tsignificance: Welch's t-test")), "{page:#?}");

    // Error bars on the queue-depth chart: three lines (bar and two caps) per repeated point.
    let text = std::fs::read_to_string(&html).unwrap();
    let svg = figure(&text, "iops-qd");
    assert_eq!(svg.matches("stroke=\"#282828\"").count(), 2 * 2 * 3, "error bars of two repeated results at two depths");
    assert!(page.iter().any(|l| l.starts_with("FIGCAPTION\tIOPS against outstanding I/Os. Points are the mean")), "{page:#?}");
    // Every result's latency percentiles at a shared point, on one nines axis.
    let overlay = figure(&text, "percentiles-compared-1");
    assert!(overlay.contains("Latency percentiles of every result at qd=1"), "no overlay title");
    for color in &COLORS[..3] {
        assert_eq!(markers(overlay, color), 6, "five percentiles and a legend marker per result");
    }

    // Two single runs: significance unknown, said in the table.
    let other = measure(&store, &[&common[..], &["--label", "other single"]].concat());
    let two = dir.path().join("two.html");
    assert!(with_store(&store, &["report", &single, &other, "-o", two.to_str().unwrap()]).status.success());
    let page = page_text(&two);
    let rows = rows_after(&page, "point qd=1 · values: single run in each result");
    assert_eq!(rows.iter().find(|r| r[0] == "IOPS").unwrap()[6], "unknown (no repeats)");
}

/// Each result's metadata is in the report, read back from Chromium: the
/// target with its size and region, engine, direct or buffered I/O, the
/// workload, run time and ramp, repeats, seed, version, host, start time,
/// store id, and the warnings the run raised (here the psync engine holding
/// one I/O where eight were asked). Title and note are escaped in Markdown.
#[test]
fn each_result_states_its_setup_and_its_warnings() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let file = dir.path().join("data");
    let id = measure(
        &store,
        &[
            &["-t", file.to_str().unwrap(), "--size", "8m", "--engine", "psync", "--qd", "8", "--read", "100", "--bs", "4k"][..],
            &["--time", "200ms", "--ramp", "100ms", "--seed", "77"],
        ]
        .concat(),
    );
    let html = dir.path().join("meta.html");
    assert!(with_store(&store, &["report", &id, "-o", html.to_str().unwrap()]).status.success());
    let page = page_text(&html);
    assert_eq!(page[0], "H1\tlunmark report");
    let name = format!("custom on {}", file.display());
    let rows = rows_after(&page, &name);
    let field = |f: &str| rows.iter().find(|r| r[0] == f).unwrap_or_else(|| panic!("no {f}: {rows:?}"))[1].to_string();
    assert_eq!(field("store id"), id.to_string());
    assert!(field("targets").contains(&format!("{}: 8m, region 8m at offset 0", file.display())), "{}", field("targets"));
    assert_eq!(field("engine"), "psync");
    assert!(field("I/O").starts_with("direct"), "{}", field("I/O"));
    assert_eq!(field("workload"), "main: bs 4k, 100% read, 100% random, QD 1, 1 worker, 1 target", "the depth psync held");
    assert_eq!(field("run"), "200ms measured per point, after a ramp of 100ms");
    assert_eq!(field("repeats"), "1 (each figure is a single run)");
    assert_eq!(field("seed"), "77");
    assert_eq!(field("lunmark version"), env!("CARGO_PKG_VERSION"));
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert!(field("host").contains(&format!("kernel {}", kernel.trim())) && field("host").contains(" cores"), "{}", field("host"));
    assert!(field("started (UTC)").starts_with("20"), "{}", field("started (UTC)"));
    assert!(field("warnings").contains("the psync engine does one I/O at a time per worker"), "{}", field("warnings"));

    // Markdown: user text escaped, so it reads as written rather than as markup.
    let md = dir.path().join("meta.md");
    let out = with_store(
        &store,
        &["report", &id, "--format", "md", "-o", md.to_str().unwrap(), "--title", "# <b>x</b> | *y*", "--note", "- a_b"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&md).unwrap();
    // Markup characters backslash-escaped, HTML's as entities (report::escape::markdown).
    assert!(text.starts_with("# \\# &lt;b&gt;x&lt;/b&gt; \\| \\*y\\*\n\n\\- a\\_b\n"), "{text}");
    // --charts DIR: each chart of the page as an SVG file of its own; a missing DIR is refused.
    let charts = dir.path().join("charts");
    std::fs::create_dir(&charts).unwrap();
    assert!(with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--charts", charts.to_str().unwrap()]).status.success());
    let page_svg = figure(&std::fs::read_to_string(&html).unwrap(), "iops").to_string();
    let file_svg = std::fs::read_to_string(charts.join("iops.svg")).unwrap();
    assert!(page_svg.contains(&file_svg), "the file is the page's chart");
    let gone = dir.path().join("none");
    let out = with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--charts", gone.to_str().unwrap()]);
    assert!(!out.status.success() && stderr(&out).contains("--charts") && stderr(&out).contains("not a directory"), "{}", stderr(&out));
    let empty = with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--title", " "]);
    assert!(!empty.status.success() && stderr(&empty).contains("--title is empty"), "{}", stderr(&empty));
}

/// A label of 1000 characters without a space (the longest lunmark keeps)
/// pushed the report's tables and figures off the right of the page: it
/// wraps, and the page fits a 1240 px window and a 700 px one.
#[test]
fn an_unbroken_long_label_wraps_inside_the_page() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let label = "L".repeat(1000);
    let ids: Vec<String> =
        (0..2).map(|_| measure(&store, &["-t", "mem:16m", "--read", "100", "--time", "300ms", "--ramp", "0", "--label", &label])).collect();
    let html = dir.path().join("long.html");
    let out = with_store(&store, &["report", &ids[0], &ids[1], "-o", html.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for width in [1240, 700] {
        let (fits, elements) = layout(&html, width);
        assert!(fits, "at {width} px the page is wider than the window: {elements:?}");
        let off: Vec<_> = elements.iter().filter(|e| !e.2).collect();
        assert!(off.is_empty(), "at {width} px, off the page and not scrolling: {off:?}");
    }
}

/// A lab's targets sweep gets the papers' port figures in the report: IOPS,
/// the initiator's CPU and service demand against ports.
#[test]
fn a_labs_targets_sweep_is_charted_against_ports() {
    let dir = shm_dir();
    let store = dir.path().join("s.db");
    let out = lunmark()
        .env("LUNMARK_LAB_DIR", dir.path())
        .args(lab_reads(
            &["lab", "protocols", "--legs", "nbd-unix", "--sweep", "targets=1,2", "--port-limit", "2ms", "--qd", "2"],
            "4k",
            "300ms",
        ))
        .args(["--ramp", "0", "--store", store.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = stdout(&out).split(|c: char| !c.is_ascii_hexdigit()).find(|w| w.len() == 12).unwrap().to_string();
    let page = dir.path().join("r.html");
    let out = with_store(&store, &["report", &id, "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    for id in ["chart-ports-iops", "chart-ports-cpu", "chart-ports-service-demand"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no {id} in the report");
    }
}
