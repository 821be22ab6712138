//! The report's charts as files for slides (`report --charts DIR`, SVG and
//! PNG), from real runs on files.

use std::path::Path;

use crate::common::*;

/// Runs a measurement into `store`, returns the id it was saved as.
fn measure(store: &Path, args: &[&str]) -> String {
    let out = with_store(store, &[&["run", "-q", "--time", "200ms", "--ramp", "0"][..], args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    saved_id(&out)
}

/// A decoded PNG: width, height and RGB(A) rows.
struct Picture {
    width: usize,
    height: usize,
    samples: usize,
    pixels: Vec<u8>,
}

impl Picture {
    /// Reads `bytes` as a PNG, checking its signature and IHDR by hand first
    /// (what a slide program reads before anything else).
    fn decode(bytes: &[u8]) -> Picture {
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&bytes[12..16], b"IHDR", "IHDR first");
        let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap()) as usize;
        let (width, height) = (be(&bytes[16..20]), be(&bytes[20..24]));
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
        let mut pixels = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut pixels).unwrap();
        assert_eq!((info.width as usize, info.height as usize), (width, height), "IHDR and the frame agree");
        Picture { width, height, samples: info.color_type.samples(), pixels }
    }

    /// Dark pixels (text, axes) in rows `top..bottom` of the picture.
    fn dark_in_rows(&self, top: usize, bottom: usize) -> usize {
        let row = self.width * self.samples;
        self.pixels[top * row..bottom * row].chunks(self.samples).filter(|p| p[..3].iter().all(|c| *c < 100)).count()
    }

    /// How many distinct colours the picture has.
    fn colours(&self) -> usize {
        let mut seen: Vec<&[u8]> = self.pixels.chunks(self.samples).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }
}

/// The width and height an SVG declares.
fn svg_size(svg: &str) -> (usize, usize) {
    let attr = |name: &str| -> usize {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("width"), attr("height"))
}

/// `report --charts DIR` writes every chart as SVG and as PNG (the default):
/// each PNG decodes, is the SVG at twice its size, is not blank, and has its
/// text drawn (dark pixels in the title band, which holds only text).
/// `--charts-format` picks the files, refuses what it does not know, and is
/// refused without `--charts`.
#[test]
fn each_chart_is_written_as_svg_and_png() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let file = dir.path().join("data");
    let id = measure(&store, &["-t", file.to_str().unwrap(), "--size", "4m", "--read", "100", "--sweep", "qd=1,2"]);
    let charts = dir.path().join("charts");
    std::fs::create_dir(&charts).unwrap();
    let html = dir.path().join("r.html");
    let out = with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--charts", charts.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("charts (SVG and PNG) in"), "{}", stderr(&out));
    let mut svgs: Vec<_> =
        std::fs::read_dir(&charts).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().unwrap() == "svg").collect();
    svgs.sort();
    assert!(svgs.len() >= 4, "{svgs:?}");
    for svg_path in &svgs {
        let svg = std::fs::read_to_string(svg_path).unwrap();
        let png_path = svg_path.with_extension("png");
        let picture = Picture::decode(&std::fs::read(&png_path).unwrap_or_else(|_| panic!("no {}", png_path.display())));
        let (w, h) = svg_size(&svg);
        assert_eq!((picture.width, picture.height), (2 * w, 2 * h), "{}", png_path.display());
        assert!(picture.colours() > 3, "{}: blank", png_path.display());
        // The title: its text is drawn within the top 30 units, where nothing but text is.
        let title = picture.dark_in_rows(0, 60);
        assert!(title > 300, "{}: {title} dark pixels in the title band, the text was not drawn", png_path.display());
    }

    // Only PNG; an unknown format named with the flag; the flag alone refused.
    let only = dir.path().join("only");
    std::fs::create_dir(&only).unwrap();
    let args = ["report", &id, "-o", html.to_str().unwrap(), "--charts", only.to_str().unwrap(), "--charts-format", "png"];
    assert!(with_store(&store, &args).status.success());
    assert!(std::fs::read_dir(&only).unwrap().all(|e| e.unwrap().path().extension().unwrap() == "png"));
    assert!(only.join("iops.png").exists());
    let out =
        with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--charts", only.to_str().unwrap(), "--charts-format", "gif"]);
    assert!(!out.status.success() && stderr(&out).contains("'gif'") && stderr(&out).contains("--charts-format"), "{}", stderr(&out));
    assert!(stderr(&out).contains("svg, png"), "{}", stderr(&out));
    let out = with_store(&store, &["report", &id, "-o", html.to_str().unwrap(), "--charts-format", "png"]);
    assert!(!out.status.success() && stderr(&out).contains("--charts <DIR>"), "{}", stderr(&out));
}

/// Results that differ in one setting none of them sweeps make one curve:
/// three runs at 1, 2 and 4 workers are IOPS and MB/s against workers, a
/// marker per result, each x named in the caption; two runs of the same
/// queue-depth sweep at 4k and 64k are IOPS against transfer size, one line
/// per queue depth. Results that differ in two settings get no such chart.
#[test]
fn results_that_differ_in_one_setting_are_charted_against_it() {
    let dir = shm_dir();
    let store = dir.path().join("results.db");
    let file = dir.path().join("data");
    let base = ["-t", file.to_str().unwrap(), "--size", "4m", "--read", "100", "--random", "100"];
    let run = |more: &[&str]| measure(&store, &[&base[..], more].concat());
    let by_workers: Vec<String> =
        ["1", "2", "4"].iter().map(|w| run(&["--bs", "4k", "--workers", w, "--label", &format!("w{w}")])).collect();
    let charts = dir.path().join("charts");
    std::fs::create_dir(&charts).unwrap();
    let html = dir.path().join("r.html");
    let report = |ids: &[&str]| {
        for e in std::fs::read_dir(&charts).unwrap() {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
        let args = [&["report"][..], ids, &["-o", html.to_str().unwrap(), "--charts", charts.to_str().unwrap(), "--charts-format", "svg"]];
        let out = with_store(&store, &args.concat());
        assert!(out.status.success(), "{}", stderr(&out));
    };
    report(&by_workers.iter().map(String::as_str).collect::<Vec<_>>());
    for (id, what) in [("iops-workers-across", "IOPS"), ("mbps-workers-across", "Throughput")] {
        let svg = std::fs::read_to_string(charts.join(format!("{id}.svg"))).unwrap_or_else(|_| panic!("no {id}.svg"));
        let t = texts(&svg);
        assert!(t.contains(&format!("{what} against workers, across results")), "{t:?}");
        for x in ["1", "2", "4"] {
            assert!(t.iter().any(|s| s == x), "no x label {x}: {t:?}");
        }
        assert_eq!(markers(&svg, COLORS[0]), 4, "a marker per result and the legend's");
        assert_eq!(markers(&svg, COLORS[1]), 0, "one line");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("each x is one result: 1: w1; 2: w2; 4: w4"), "the caption names the result at each x");

    // The same sweep at two transfer sizes: one line per queue depth, against transfer size.
    let by_bs: Vec<String> = ["4k", "64k"].iter().map(|bs| run(&["--bs", bs, "--sweep", "qd=1,2"])).collect();
    report(&by_bs.iter().map(String::as_str).collect::<Vec<_>>());
    let svg = std::fs::read_to_string(charts.join("iops-bs-across.svg")).expect("iops-bs-across.svg");
    let t = texts(&svg);
    assert!(t.contains(&"IOPS against transfer size, across results".to_string()) && t.contains(&"qd=2".to_string()), "{t:?}");
    assert!(t.iter().any(|s| s == "64") && t.iter().any(|s| s == "4"), "{t:?}");
    assert_eq!((markers(&svg, COLORS[0]), markers(&svg, COLORS[1])), (3, 3), "two lines of two results each");
    // Their percentiles at a shared point: the legend names each result by what differs, not by its id.
    let overlay = texts(&std::fs::read_to_string(charts.join("percentiles-compared-1.svg")).expect("percentiles-compared-1.svg"));
    assert!(overlay.iter().any(|t| t == "bs 4k") && overlay.iter().any(|t| t == "bs 64k"), "{overlay:?}");
    assert!(!overlay.iter().any(|t| by_bs.iter().any(|id| t.contains(&id[..8]))), "{overlay:?}");

    // Two settings apart (workers and transfer size): no curve across them.
    let other = run(&["--bs", "64k", "--workers", "2"]);
    report(&[&by_workers[0], &other]);
    let across: Vec<_> =
        std::fs::read_dir(&charts).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("across")).collect();
    assert!(across.is_empty(), "{across:?}");
}
