//! The font the plots draw text with.
//!
//! plotters draws text itself: the bitmap backend needs glyphs, and both backends measure
//! text for the layout. This crate builds plotters with its `ab_glyph` feature — pure
//! Rust, no fontconfig and no system library at build time (plotters' default `ttf`
//! feature goes through font-kit, which needs fontconfig's headers to build and
//! fontconfig at run time). ab_glyph needs the bytes of a TrueType/OpenType file:
//! [`faces`] loads them at run time, once, from `$SR6_PERF_FONT` if set, else from the
//! first of [`FONT_PATHS`] that exists — first DejaVu Sans from Debian's
//! `fonts-dejavu-core` (the package CI installs; 1.5 MB installed, and on most Debian
//! systems already), then Liberation, FreeFont, Noto and the DejaVu paths of other
//! distributions. Loading at run time rather than embedding keeps a 700 KB third-party
//! binary (and its licence) out of the repository and out of the sr6 binary.
//!
//! The faces are registered with plotters as `sans-serif` (what its text measurements
//! use) and kept for [`super::raster`], which draws PNG text itself. Without any font
//! the plots are skipped with a warning naming the package to install; the data files
//! and `report.md` are written all the same.

use std::path::PathBuf;
use std::sync::OnceLock;

use ab_glyph::FontRef;
use plotters::style::{register_font, FontStyle};

/// The environment variable naming a TrueType/OpenType file to draw text with.
pub const FONT_ENV: &str = "SR6_PERF_FONT";

/// Where fonts are looked for, in order: (regular, bold, the package that installs it).
pub const FONT_PATHS: &[(&str, &str, &str)] = &[
    (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
        "fonts-dejavu-core",
    ),
    (
        "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
        "/usr/share/fonts/truetype/liberation2/LiberationSans-Bold.ttf",
        "fonts-liberation2",
    ),
    (
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf",
        "fonts-liberation",
    ),
    (
        "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
        "/usr/share/fonts/truetype/freefont/FreeSansBold.ttf",
        "fonts-freefont-ttf",
    ),
    (
        "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
        "/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf",
        "fonts-noto-core",
    ),
    ("/usr/share/fonts/TTF/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf", "ttf-dejavu (Arch)"),
    (
        "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans-Bold.ttf",
        "dejavu-sans-fonts (Fedora)",
    ),
    ("/usr/share/fonts/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf", "font-dejavu (Alpine)"),
];

/// The family name the faces are registered under in plotters.
pub const FAMILY: &str = "sans-serif";

/// The loaded faces.
pub struct Faces {
    /// The file the regular face came from.
    pub path: PathBuf,
    pub regular: FontRef<'static>,
    /// The bold face, or the regular one when there is none.
    pub bold: FontRef<'static>,
}

/// Loads and registers the font (once per process): the faces, or why there are none.
pub fn faces() -> Result<&'static Faces, String> {
    static FACES: OnceLock<Result<Faces, String>> = OnceLock::new();
    match FACES.get_or_init(load) {
        Ok(f) => Ok(f),
        Err(e) => Err(e.clone()),
    }
}

/// Reads a font file and keeps its bytes for the life of the process (plotters'
/// registry holds `FontRef<'static>`; one or two files, loaded once).
fn read_face(path: &PathBuf) -> Option<(&'static [u8], FontRef<'static>)> {
    let bytes = std::fs::read(path).ok()?;
    FontRef::try_from_slice(&bytes).ok()?;
    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
    Some((bytes, FontRef::try_from_slice(bytes).ok()?))
}

fn load() -> Result<Faces, String> {
    let mut candidates: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    if let Some(p) = std::env::var_os(FONT_ENV).filter(|p| !p.is_empty()) {
        candidates.push((PathBuf::from(p), None));
    }
    candidates.extend(FONT_PATHS.iter().map(|(r, b, _)| (PathBuf::from(r), Some(PathBuf::from(b)))));
    let mut unusable = Vec::new();
    for (path, bold) in candidates {
        if !path.exists() {
            continue;
        }
        let Some(regular) = read_face(&path) else {
            unusable.push(path.display().to_string());
            continue;
        };
        let bold = bold.as_ref().and_then(read_face).unwrap_or_else(|| regular.clone());
        let ok = register_font(FAMILY, FontStyle::Normal, regular.0).is_ok()
            && register_font(FAMILY, FontStyle::Bold, bold.0).is_ok();
        if !ok {
            unusable.push(path.display().to_string());
            continue;
        }
        return Ok(Faces { path, regular: regular.1, bold: bold.1 });
    }
    Err(format!(
        "no TrueType font to draw the plots with: install Debian's fonts-dejavu-core \
         (or set {FONT_ENV} to a .ttf file){}",
        if unusable.is_empty() { String::new() } else { format!("; not usable: {}", unusable.join(", ")) }
    ))
}
