//! `strata-filters`: HBase's filter model and filter language, a scalar evaluator with HBase's
//! exact cell-by-cell semantics, vectorized kernels over row-key and value batches, and the
//! planner that compiles a filter into key ranges, kernels and limits.
//!
//! The crate knows nothing about files or the engine: the engine fills the [`batch`] types
//! from its blocks and calls the evaluator and the plan. `docs/filters.md` describes the
//! model, the language, the plan rules and every deliberate deviation from HBase.
//!
//! ```
//! use strata_filters::{parse, FilterEvaluator, CellRef};
//!
//! let filter = parse("PrefixFilter('row1') AND ValueFilter(=, 'binary:x')").unwrap();
//! assert_eq!(filter.to_string(), "PrefixFilter('row1') AND ValueFilter(=, 'binary:x')");
//! let mut evaluator = FilterEvaluator::new(&filter).unwrap();
//! let cells = [
//!     CellRef { row: b"row1", family: b"f", qualifier: b"a", timestamp: 2, value: b"x" },
//!     CellRef { row: b"row1", family: b"f", qualifier: b"b", timestamp: 2, value: b"y" },
//! ];
//! let outcome = evaluator.evaluate_row(&cells, 1);
//! assert_eq!(outcome.cells.len(), 1);
//! ```

#![warn(missing_docs)]

pub mod batch;
mod compare;
mod display;
pub mod escape;
pub mod eval;
mod fuzzy;
pub mod kernels;
pub mod model;
pub mod parse;
pub mod plan;
pub mod ranges;
pub mod reference;

pub use batch::{Batch, BatchError, Bitmap, FixedBatch, ValueBatch, VarBatch};
pub use eval::{CellHint, CellRef, FilterEvaluator, OutputCell, ReturnCode, RowOutcome};
pub use model::{
    BitOp, ColumnOffset, ColumnValueTest, Comparator, CompareOp, DependentColumn, Filter,
    FilterList, FuzzyRule, ListOperator, ModelError, RowMask, RowRange,
};
pub use parse::{ParseError, parse, parse_bytes};
pub use plan::{Plan, ScanRange};
