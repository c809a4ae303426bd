//! The PyO3 module `rgbm_rs._core`: convert, validate, release the GIL, call
//! the core, convert back. Nothing here computes.
mod booster;
mod convert;
mod dataset;
mod errors;
mod schema;
mod shard;
mod threadpool;

use pyo3::prelude::*;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<booster::PyBooster>()?;
    m.add_class::<shard::PyShard>()?;
    m.add_class::<dataset::PyBinnedData>()?;
    m.add_function(wrap_pyfunction!(schema::metrics_for, m)?)?;
    m.add_function(wrap_pyfunction!(schema::param_schema, m)?)?;
    m.add_function(wrap_pyfunction!(schema::peer_names, m)?)?;
    m.add_function(wrap_pyfunction!(schema::loss_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(schema::target_losses, m)?)?;
    m.add_function(wrap_pyfunction!(schema::check_shard_params, m)?)?;
    m.add_function(wrap_pyfunction!(schema::available_cores, m)?)?;
    m.add_function(wrap_pyfunction!(schema::type1_theta, m)?)?;
    m.add("FORMAT_VERSION", crate::model::FORMAT_VERSION)?;
    m.add("SERIAL_FIT_VALUES", crate::threads::SERIAL_FIT_VALUES)?;
    m.add("BIN_SAMPLE_ROWS", crate::data::binning::BIN_SAMPLE_ROWS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
