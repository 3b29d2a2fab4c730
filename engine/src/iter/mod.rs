//! Iterators over the cells of a store's parts: a source per memstore, per
//! HFile and per sorted level ([`source`]), and the merge of several sources
//! into store order at a read point ([`merge`]). Flush and compaction read
//! the merge cell by cell.
//!
//! The read path reads it row by row ([`rows`]): rows one file alone holds
//! inside a cached block are lent from the block ([`block_row`]), many of
//! them at a time as a block run ([`run`]); a get with few sources merges
//! them without the heap ([`point`]). The merge's ranking and the cursors
//! it ranks stay inside this module: whatever moves a cursor past rows it
//! lent restores the ranking before the merge is read again.

pub(crate) mod block_row;
pub(crate) mod merge;
pub(crate) mod point;
pub(crate) mod rows;
pub(crate) mod run;
pub(crate) mod source;
