//! `schmier.encode` / `encode_into`: a seat view as the fixed-size float32
//! vector of `schmier_protocol::observation` (its doc has the layout).

use numpy::PyArray1;
use pyo3::prelude::*;
use schmier_protocol::observation::{encode_into as encode_view, OBSERVATION_LEN};

use crate::sampling::read_view;

/// The view (a dict: `Game.view`, a request's `view`) as a new float32 array of
/// OBSERVATION_LEN.
#[pyfunction]
pub fn encode<'py>(
    py: Python<'py>,
    view: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let view = read_view(view)?;
    let mut out = vec![0.0f32; OBSERVATION_LEN];
    encode_view(&view, &mut out);
    Ok(PyArray1::from_vec(py, out))
}

/// Writes the view's encoding into `buffer` (a writable, contiguous float32
/// array of OBSERVATION_LEN, e.g. a row of a batch) without allocating.
#[pyfunction]
pub fn encode_into(view: &Bound<'_, PyAny>, buffer: Bound<'_, PyArray1<f32>>) -> PyResult<()> {
    let view = read_view(view)?;
    crate::buffer::write_with(&buffer, OBSERVATION_LEN, "encode_into", |slice| {
        encode_view(&view, slice)
    })
}
