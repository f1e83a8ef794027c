//! `Game.apply(index)` and `Game.legal_mask(buf)`, the two calls with an
//! argument in a Python stepping loop, through CPython's fast calling
//! convention (METH_FASTCALL), on the abi3 wheel for CPython 3.9 too.
//!
//! Why by hand: for an abi3 build below 3.10, PyO3 registers every method as
//! METH_VARARGS | METH_KEYWORDS (a new tuple of the arguments on each call),
//! because METH_FASTCALL entered the limited API only in CPython 3.10. The
//! convention itself, with this signature, is older: CPython has called
//! METH_FASTCALL | METH_KEYWORDS functions this way since 3.7, so every
//! interpreter that loads our cp39-abi3 wheel (3.9 and later) has it, and
//! 3.10 made it part of the stable ABI unchanged. The tuple cost each of
//! these calls about 40 ns, a tenth of the `legal_indices` + `apply` loop
//! (BENCHMARKS.md, "Python library", the floor measurements).
//!
//! Only the one positional argument takes the fast path. Any other call (no
//! argument, a keyword, an argument of another type, the wrong count) goes to
//! the method PyO3 generated, kept aside, so signatures, defaults, error
//! messages and docs stay PyO3's.

use std::ffi::{c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use numpy::PyArray1;
use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};

use crate::game::PyGame;

/// CPython's flag (Include/methodobject.h, the same value since 3.7).
const METH_FASTCALL: c_int = 0x0080;

/// A method's fast path: `None` sends the call to PyO3's method.
type Fast = for<'py> fn(&Bound<'py, PyGame>, &Bound<'py, PyAny>) -> Option<PyResult<Py<PyAny>>>;

static APPLY: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LEGAL_MASK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

fn apply(game: &Bound<'_, PyGame>, action: &Bound<'_, PyAny>) -> Option<PyResult<Py<PyAny>>> {
    let py = game.py();
    Some(
        game.try_borrow_mut()
            .map_err(PyErr::from)
            .and_then(|mut g| g.apply(action))
            .map(|()| py.None()),
    )
}

fn legal_mask(game: &Bound<'_, PyGame>, out: &Bound<'_, PyAny>) -> Option<PyResult<Py<PyAny>>> {
    let out = out.cast::<PyArray1<bool>>().ok()?;
    Some(
        game.try_borrow()
            .map_err(PyErr::from)
            .and_then(|g| g.legal_mask(game.py(), Some(out.clone())))
            .map(|a| a.into_any().unbind()),
    )
}

unsafe extern "C" fn apply_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this as a METH_FASTCALL | METH_KEYWORDS method.
    unsafe { dispatch(slf, args, nargs, kwnames, apply, &APPLY) }
}

unsafe extern "C" fn legal_mask_fast(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls this as a METH_FASTCALL | METH_KEYWORDS method.
    unsafe { dispatch(slf, args, nargs, kwnames, legal_mask, &LEGAL_MASK) }
}

/// One call: the fast path for one positional argument, else PyO3's method
/// `slow`, given `self` and the same arguments.
///
/// # Safety
/// As CPython calls a METH_FASTCALL | METH_KEYWORDS function: the GIL held,
/// `slf` a live object, `args` `nargs` positional then `len(kwnames)` keyword
/// values, `kwnames` a tuple of names or null.
unsafe fn dispatch(
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargs: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
    fast: Fast,
    slow: &PyOnceLock<Py<PyAny>>,
) -> *mut ffi::PyObject {
    // SAFETY: CPython holds the GIL when it calls a method.
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| -> PyResult<Py<PyAny>> {
        // SAFETY: the caller's contract: live objects, borrowed for the call.
        let slf = unsafe { Bound::from_borrowed_ptr(py, slf) };
        let nkw = if kwnames.is_null() {
            0
        } else {
            // SAFETY: a non-null `kwnames` is a tuple.
            unsafe { ffi::PyTuple_Size(kwnames) }
        };
        let arg = |i: ffi::Py_ssize_t| {
            // SAFETY: `i` < nargs + nkw, the length of `args`.
            unsafe { Bound::from_borrowed_ptr(py, *args.offset(i)) }
        };
        if nargs == 1 && nkw == 0 {
            if let Ok(game) = slf.cast::<PyGame>() {
                if let Some(r) = fast(game, &arg(0)) {
                    return r;
                }
            }
        }
        let positional: Vec<_> = std::iter::once(slf).chain((0..nargs).map(arg)).collect();
        let positional = PyTuple::new(py, positional)?;
        let keywords = if nkw == 0 {
            None
        } else {
            // SAFETY: a non-null `kwnames` is a tuple.
            let names = unsafe { Bound::from_borrowed_ptr(py, kwnames) };
            let dict = PyDict::new(py);
            for (i, name) in names.try_iter()?.enumerate() {
                dict.set_item(name?, arg(nargs + i as ffi::Py_ssize_t))?;
            }
            Some(dict)
        };
        let method = slow.get(py).expect("installed with the method");
        Ok(method
            .bind(py)
            .call(positional, keywords.as_ref())?
            .unbind())
    }));
    match result {
        Ok(Ok(obj)) => obj.into_ptr(),
        Ok(Err(err)) => {
            err.restore(py);
            std::ptr::null_mut()
        }
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic from Rust code".to_owned());
            PanicException::new_err(msg).restore(py);
            std::ptr::null_mut()
        }
    }
}

/// A METH_FASTCALL | METH_KEYWORDS function (CPython's
/// `_PyCFunctionFastWithKeywords`).
type FastFn = unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject;

/// The method definition's function field for `f`. PyO3's limited-API 3.9
/// bindings type that field for the other conventions only; CPython reads
/// the flags and calls `f` with its own signature.
fn def_pointer(f: FastFn) -> ffi::PyMethodDefPointer {
    ffi::PyMethodDefPointer {
        // SAFETY: function pointers of the same size; only ever called as a
        // FastFn, which METH_FASTCALL | METH_KEYWORDS tells CPython.
        PyCFunctionWithKeywords: unsafe {
            std::mem::transmute::<FastFn, ffi::PyCFunctionWithKeywords>(f)
        },
    }
}

/// Replaces `Game.apply` and `Game.legal_mask` with their fast versions,
/// keeping PyO3's methods for every other call.
pub fn install(py: Python<'_>) -> PyResult<()> {
    let ty = py.get_type::<PyGame>();
    let methods: [(&str, FastFn, &PyOnceLock<Py<PyAny>>); 2] = [
        ("apply", apply_fast, &APPLY),
        ("legal_mask", legal_mask_fast, &LEGAL_MASK),
    ];
    for (name, meth, slow) in methods {
        let pyo3_method = ty.getattr(name)?;
        let doc = match pyo3_method
            .getattr("__text_signature__")?
            .extract::<Option<String>>()?
        {
            Some(sig) => format!("{name}{sig}\n--\n\n"),
            None => String::new(),
        } + &pyo3_method
            .getattr("__doc__")?
            .extract::<Option<String>>()?
            .unwrap_or_default();
        // Leaked: CPython keeps a pointer to the definition for as long as
        // the method exists, which is the life of the process.
        let def = Box::leak(Box::new(ffi::PyMethodDef {
            ml_name: CString::new(name)?.into_raw(),
            ml_meth: def_pointer(meth),
            ml_flags: METH_FASTCALL | ffi::METH_KEYWORDS,
            ml_doc: CString::new(doc)?.into_raw(),
        }));
        // SAFETY: `ty` is a live type object and `def` lives for ever.
        let descr = unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyDescr_NewMethod(ty.as_type_ptr(), def))?
        };
        let _ = slow.set(py, pyo3_method.unbind());
        ty.setattr(name, descr)?;
    }
    Ok(())
}
