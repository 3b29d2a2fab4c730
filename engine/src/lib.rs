//! strata: an embeddable HBase-style wide-column store.
