//! Iterators over the cells of a store's parts: a source per memstore, per
//! HFile and per sorted level ([`source`]), and the merge of several sources
//! into store order at a read point ([`merge`]). Flush, compaction and the
//! read path all read through them.

pub(crate) mod merge;
pub(crate) mod source;
