//! The read path: plan a read, walk its regions in order (or in reverse),
//! merge each store's sources at the read point, resolve versions and
//! deletes, run the filter, and hand back rows. A get is a scan of one
//! row, or, when few sources may hold the row, a direct read of them.
//!
//! The rooms, in the order a read passes through them:
//!
//! | room | job |
//! |---|---|
//! | [`plan`] | what a scan or a get reads: bounds, families, version rules, the compiled filter, region parts |
//! | [`get`] | the get path: direct or merged, and many gets with one batch of block reads |
//! | [`direct`] | direct gets: a row read from its few sources without the merge heap |
//! | [`stream`] | a scan's rows region after region, through the filter stage and the limit; the owned-row [`Scanner`] |
//! | [`scanner`] | the region scanner: which row comes next across a region's stores |
//! | [`store_scan`] | one store's part of a row: a block run's next row, a row lent from a block, or the merge's cells |
//! | [`block_rows`] | resolving a row lent from a cached block, with the cell gate's selection of the block |
//! | [`resolve`] | version resolution: which cells of a row and family a read returns |
//! | [`cell_gate`], [`filtering`] | the filter below the filter stage (cell and column predicates), and the filter stage |
//! | [`sink`], [`cursor`] | where returned cells go; the borrowing cursor and the views it lends |
//! | [`parallel`], [`salted`] | a scan's region parts on several threads; salted scans merged in logical order |
//!
//! The merge, block runs and the decoding of blocks are below, in
//! [`crate::iter`]: this module asks it for rows and never names a data
//! block (`engine/tests/layers.rs` checks it).

pub(crate) mod block_rows;
pub(crate) mod cell_gate;
pub(crate) mod cursor;
pub(crate) mod direct;
pub(crate) mod filtering;
pub(crate) mod get;
pub(crate) mod parallel;
pub(crate) mod plan;
pub(crate) mod resolve;
pub(crate) mod salted;
pub(crate) mod scanner;
pub(crate) mod sink;
pub(crate) mod store_scan;
pub(crate) mod stream;

pub use stream::Scanner;
