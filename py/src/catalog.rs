//! `Catalog`: `gpu.catalog(root)[toc_key]` gives the module of that toc
//! key from a per-architecture bundle tree, verified (sha256, target,
//! args_signature) before it is loaded and loaded once (the facade's
//! `Catalog` does the work).

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::call;
use crate::gpu::Module;

/// A GPU's view of an installed bundle tree.
#[pyclass(module = "relaunch", frozen)]
pub struct Catalog {
    pub(crate) catalog: facade::Catalog,
}

/// `Gpu.catalog(root)`.
pub(crate) fn open(py: Python<'_>, gpu: &facade::Gpu, root: &std::path::Path) -> PyResult<Catalog> {
    let catalog = py.detach(|| call("Gpu.catalog", || gpu.catalog(root)))?;
    Ok(Catalog { catalog })
}

#[pymethods]
impl Catalog {
    /// The module of `toc_key` (loaded on first use).
    fn __getitem__(&self, py: Python<'_>, toc_key: &str) -> PyResult<Module> {
        let catalog = &self.catalog;
        let module = py.detach(|| call("Catalog[]", || catalog.module(toc_key)))?;
        Ok(Module { module })
    }

    fn __contains__(&self, toc_key: &str) -> bool {
        self.catalog.keys().iter().any(|k| k == toc_key)
    }

    fn __len__(&self) -> usize {
        self.catalog.keys().len()
    }

    /// Every toc key of the device's arch directory, sorted.
    fn keys(&self) -> Vec<String> {
        self.catalog.keys()
    }

    /// The verified code-object bytes of `toc_key` (not loaded).
    fn code_object<'py>(&self, py: Python<'py>, toc_key: &str) -> PyResult<Bound<'py, PyBytes>> {
        let catalog = &self.catalog;
        let bytes = py.detach(|| call("Catalog.code_object", || catalog.code_object(toc_key)))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The manifest's launch data of `toc_key` as JSON text, or None.
    fn launch(&self, toc_key: &str) -> PyResult<Option<String>> {
        if !self.__contains__(toc_key) {
            return Err(PyKeyError::new_err(toc_key.to_string()));
        }
        Ok(self.catalog.launch_json(toc_key))
    }

    /// The arch directory in use (`gfx1100`).
    #[getter]
    fn arch(&self) -> String {
        self.catalog.arch().to_string()
    }

    /// The tree's root as given.
    #[getter]
    fn root(&self) -> String {
        self.catalog.root().display().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "<relaunch.Catalog {} arch={} keys={}>",
            self.catalog.root().display(),
            self.catalog.arch(),
            self.catalog.keys().len()
        )
    }
}
