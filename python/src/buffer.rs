//! Writing into a caller's numpy array in place (`legal_mask(out=)`,
//! `encode_into`, the batch's `out=` arrays), the per-step path of a Python
//! loop.
//!
//! Why not rust-numpy's `try_readwrite`: its borrow tracking (a table shared
//! by every extension, keyed by the array's base address, taken and released
//! on each call) costs more than the work here — a 63-element mask — and
//! doubled `legal_mask(out=)`'s time (BENCHMARKS.md, "Python library"). It
//! guards Rust borrows of one array that outlive a call or overlap across
//! threads; this crate never keeps a borrow of a caller's array past the call
//! that fills it, and the GIL is held throughout (the module is not built for
//! free-threaded Python), so no other borrow of `out` can be alive while it is
//! written. What it would also check, the array's own WRITEABLE flag, is
//! checked here.

use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{Element, PyArray, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The array's elements as a mutable slice, after checking it is writable,
/// contiguous and of `len` elements; `what` names the argument in errors.
///
/// The slice must not outlive the call that asked for it (see the module doc).
#[allow(clippy::mut_from_ref)] // the array is Python's; see the module doc
fn slice_of<'a, T: Element, D: numpy::ndarray::Dimension>(
    out: &'a Bound<'_, PyArray<T, D>>,
    len: usize,
    what: &str,
) -> PyResult<&'a mut [T]> {
    // SAFETY: `as_array_ptr` points at a live array object (we hold a
    // reference to it); `flags` is read through numpy's own accessor.
    let flags =
        unsafe { (*numpy::npyffi::objects::_PyArray_GET_ITEM_DATA(out.as_array_ptr())).flags };
    if flags & NPY_ARRAY_WRITEABLE == 0 {
        return Err(PyValueError::new_err(format!(
            "{what}: the array is read-only"
        )));
    }
    if out.len() != len {
        return Err(PyValueError::new_err(format!(
            "{what}: the array has {} elements, not {len}",
            out.len()
        )));
    }
    // SAFETY: see the module doc: no other borrow of this array is alive, and
    // the GIL held keeps Python code from touching it meanwhile.
    unsafe { out.as_slice_mut() }
        .map_err(|_| PyValueError::new_err(format!("{what}: a contiguous array is needed")))
}

/// Copies `src` into `out`, which must have exactly `src.len()` elements.
pub fn fill<T: Element + Copy, D: numpy::ndarray::Dimension>(
    out: &Bound<'_, PyArray<T, D>>,
    src: &[T],
    what: &str,
) -> PyResult<()> {
    slice_of(out, src.len(), what)?.copy_from_slice(src);
    Ok(())
}

/// Calls `write` with `out`'s elements (exactly `len` of them).
pub fn write_with<T: Element, D: numpy::ndarray::Dimension, R>(
    out: &Bound<'_, PyArray<T, D>>,
    len: usize,
    what: &str,
    write: impl FnOnce(&mut [T]) -> R,
) -> PyResult<R> {
    Ok(write(slice_of(out, len, what)?))
}
