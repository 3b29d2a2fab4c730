//! Maintenance: the jobs that keep a region's stores in shape (flush,
//! split; compaction jobs live in `crate::compaction`) and the worker pool
//! that runs them.

pub(crate) mod flush;
pub(crate) mod pool;
