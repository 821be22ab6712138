//! A chart's SVG as a PNG, for slides (`report --charts DIR`): drawn by
//! resvg with a font embedded in lunmark, so the text renders the same on a
//! host without fonts. Pure: SVG text in, PNG bytes out.

use std::sync::{Arc, OnceLock};

use anyhow::{anyhow, Context, Result};
use resvg::{tiny_skia, usvg};

/// DejaVu Sans (its licence is beside it in assets/fonts/). The charts name
/// the generic family "sans-serif"; it is mapped to this font, the only one
/// loaded, so no host font can change the picture.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Pixels per SVG unit: a 900-unit-wide chart becomes 1800 pixels, sharp on a
/// slide projected full width.
pub const SCALE: f32 = 2.0;

/// The parser's options with the embedded font, built once per process.
fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut opt = usvg::Options::default();
        let db = opt.fontdb_mut();
        db.load_font_source(usvg::fontdb::Source::Binary(Arc::new(FONT)));
        db.set_sans_serif_family("DejaVu Sans");
        opt.font_family = "DejaVu Sans".into();
        opt
    })
}

/// The chart `svg` drawn at `SCALE` on white (a transparent PNG shows the
/// slide's background through the plot), encoded as PNG.
pub fn png(svg: &str) -> Result<Vec<u8>> {
    let tree = usvg::Tree::from_str(svg, options()).context("the chart's SVG could not be read to draw it as PNG")?;
    let size = tree.size().to_int_size().scale_by(SCALE).ok_or_else(|| anyhow!("the chart is too large to draw as PNG"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| anyhow!("the chart has no area to draw as PNG"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::from_scale(SCALE, SCALE), &mut pixmap.as_mut());
    pixmap.encode_png().context("encoding the chart as PNG failed")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Width and height from the PNG's IHDR chunk, after its signature.
    fn ihdr(png: &[u8]) -> (u32, u32) {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
        assert_eq!(&png[12..16], b"IHDR");
        let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
        (be(&png[16..20]), be(&png[20..24]))
    }

    /// Text alone, in the embedded font: the drawn PNG has dark pixels where
    /// the text is, so a font was found for "sans-serif" (without one, usvg
    /// drops text and the picture is all white).
    #[test]
    fn text_is_drawn_with_the_embedded_font() {
        let svg = r#"<svg width="200" height="40" xmlns="http://www.w3.org/2000/svg"><text x="10" y="30" font-family="sans-serif" font-size="20" fill="black">IOPS 100K</text></svg>"#;
        let png = png(svg).unwrap();
        assert_eq!(ihdr(&png), (400, 80));
        let decoder = ::png::Decoder::new(std::io::Cursor::new(&png));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let dark = buf[..info.buffer_size()].chunks(info.color_type.samples()).filter(|px| px[0] < 100).count();
        assert!(dark > 200, "only {dark} dark pixels: the text was not drawn");
    }
}
