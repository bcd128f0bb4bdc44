//! Bounds-checked big-endian field access shared by all views.
//!
//! Network byte order is big-endian (RFC 791 Appendix B, RFC 8200 §3). A read
//! outside the buffer yields zeros and a write outside the buffer is dropped,
//! so no accessor can panic whatever the buffer holds; `check_len` makes sure
//! the fields are really there.

/// `N` bytes at `at`, or zeros if they are not all inside `b`.
#[inline]
pub(crate) fn array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    at.checked_add(N).and_then(|end| b.get(at..end)).and_then(|s| <[u8; N]>::try_from(s).ok()).unwrap_or([0; N])
}

#[inline]
pub(crate) fn u8_at(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

#[inline]
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes(array(b, at))
}

#[inline]
pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(array(b, at))
}

/// Writes `v` at `at` if it fits entirely inside `b`.
#[inline]
pub(crate) fn put<const N: usize>(b: &mut [u8], at: usize, v: [u8; N]) {
    if let Some(s) = at.checked_add(N).and_then(|end| b.get_mut(at..end)) {
        s.copy_from_slice(&v);
    }
}

#[inline]
pub(crate) fn put_u8(b: &mut [u8], at: usize, v: u8) {
    if let Some(x) = b.get_mut(at) {
        *x = v;
    }
}

#[inline]
pub(crate) fn put_u16(b: &mut [u8], at: usize, v: u16) {
    put(b, at, v.to_be_bytes());
}

#[inline]
pub(crate) fn put_u32(b: &mut [u8], at: usize, v: u32) {
    put(b, at, v.to_be_bytes());
}

/// `b[start..end]`, or an empty slice if that range is not inside `b`.
#[inline]
pub(crate) fn slice(b: &[u8], start: usize, end: usize) -> &[u8] {
    b.get(start..end).unwrap_or_default()
}

/// `b[start..end]`, or an empty slice if that range is not inside `b`.
#[inline]
pub(crate) fn slice_mut(b: &mut [u8], start: usize, end: usize) -> &mut [u8] {
    b.get_mut(start..end).unwrap_or_default()
}

/// Copies as much of `src` as fits into `b` from `at`; returns the count copied.
#[inline]
pub(crate) fn copy_in(b: &mut [u8], at: usize, src: &[u8]) -> usize {
    let dst = b.get_mut(at..).unwrap_or_default();
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
    n
}

/// `Err(Truncated)` unless `have >= need`.
#[inline]
pub(crate) fn need(need: usize, have: usize) -> crate::Result<()> {
    if have < need {
        Err(crate::Error::Truncated { need, have })
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_is_harmless() {
        let mut b = [1u8, 2, 3];
        assert_eq!(u16_at(&b, 1), 0x0203);
        assert_eq!(u16_at(&b, 2), 0);
        assert_eq!(u32_at(&b, usize::MAX), 0);
        put_u16(&mut b, 2, 0xFFFF);
        put_u32(&mut b, usize::MAX - 1, 0xFFFF_FFFF);
        assert_eq!(b, [1, 2, 3]);
        assert_eq!(slice(&b, 2, 1), &[] as &[u8]);
        assert_eq!(copy_in(&mut b, 1, &[9, 9, 9, 9]), 2);
        assert_eq!(b, [1, 9, 9]);
        assert_eq!(copy_in(&mut b, 7, &[9]), 0);
    }
}
