//! The PNG backend: plotters' [`BitMapBackend`] with its own text drawing.
//!
//! plotters 0.3.7 draws `ab_glyph` text glyph by glyph from each glyph's ink box,
//! dropping the left side bearing: narrow glyphs with wide bearings shift left and run
//! into their neighbours ("T.Encaps" drew as "TEncaps", "End.X" with the dot against
//! the `d`). [`PngBackend`] delegates everything to the bitmap backend but
//! [`DrawingBackend::draw_text`] and [`DrawingBackend::estimate_text_size`], which lay
//! the glyphs out on a baseline with their advances, kerning and bearings (the same
//! faces as plotters measures with, see [`super::font`]), then honour the anchor and
//! the rotation plotters asks for, blending the glyph coverage into the image.
//!
//! The text box is the font's line box: `ascent - descent` high, which is the `size`
//! plotters gives (ab_glyph's pixel scale is that height), the advance sum wide.

use std::path::Path;

use ab_glyph::{point, Font, FontRef, OutlinedGlyph, PxScale, ScaleFont};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind, FontStyle,
};

use super::font::Faces;

/// A PNG file being drawn, with correctly laid out text.
pub struct PngBackend<'a> {
    inner: BitMapBackend<'a>,
    faces: &'static Faces,
}

impl<'a> PngBackend<'a> {
    /// A `size` image to be written to `path` on `present`.
    pub fn new(path: &'a Path, size: (u32, u32), faces: &'static Faces) -> PngBackend<'a> {
        PngBackend { inner: BitMapBackend::new(path, size), faces }
    }

    fn face(&self, style: FontStyle) -> &FontRef<'static> {
        match style {
            FontStyle::Bold => &self.faces.bold,
            _ => &self.faces.regular,
        }
    }
}

/// The glyphs of one line of text, placed with the baseline at the font's ascent (so the
/// box's top is y = 0); the box's width and height.
fn lay_out(face: &FontRef<'static>, size: f64, text: &str) -> (Vec<OutlinedGlyph>, f32, f32) {
    let size = if size.is_finite() && size > 0.0 { size as f32 } else { 1.0 };
    let scale = PxScale::from(size);
    let font = face.as_scaled(scale);
    let ascent = font.ascent();
    let mut caret = 0.0f32;
    let mut prev = None;
    let mut glyphs = Vec::with_capacity(text.len());
    for c in text.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            caret += font.kern(p, id);
        }
        prev = Some(id);
        if let Some(g) = face.outline_glyph(id.with_scale_and_position(scale, point(caret, ascent))) {
            glyphs.push(g);
        }
        caret += font.h_advance(id);
    }
    (glyphs, caret.max(0.0), ascent - font.descent())
}

impl DrawingBackend for PngBackend<'_> {
    type ErrorType = <BitMapBackend<'static> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let (_, w, h) = lay_out(self.face(style.style()), style.size(), text);
        Ok((w.ceil() as u32, h.ceil() as u32))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha <= 0.0 || text.is_empty() {
            return Ok(());
        }
        let (glyphs, w, h) = lay_out(self.face(style.style()), style.size(), text);
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0.0,
            HPos::Center => -w / 2.0,
            HPos::Right => -w,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0.0,
            VPos::Center => -h / 2.0,
            VPos::Bottom => -h,
        };
        let (dx, dy) = (dx.round() as i32, dy.round() as i32);
        let trans = style.transform();
        let (iw, ih) = self.get_size();
        let mut pixels = Vec::new();
        for g in &glyphs {
            let b = g.px_bounds();
            let (bx, by) = (b.min.x as i32 + dx, b.min.y as i32 + dy);
            g.draw(|x, y, c| {
                if c > 0.0 {
                    pixels.push((bx + x as i32, by + y as i32, c.min(1.0)));
                }
            });
        }
        for (x, y, c) in pixels {
            let (tx, ty) = trans.transform(x, y);
            let (px, py) = (pos.0 + tx, pos.1 + ty);
            if px >= 0 && py >= 0 && (px as u32) < iw && (py as u32) < ih {
                self.inner.draw_pixel((px, py), BackendColor { alpha: color.alpha * f64::from(c), rgb: color.rgb })?;
            }
        }
        Ok(())
    }
}
