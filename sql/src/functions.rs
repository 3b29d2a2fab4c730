//! SQL functions for strata's row-key designs.
//!
//! `strata_hash32(x)`: the 4-byte hash `strata::keys::KeyBuilder::hash32` puts in front of
//! a key (the upper half of `strata::keys::stable_hash`) of an integer's 8-byte big-endian
//! encoding, or of text or bytes as they are. It is immutable, so
//! `WHERE hash = strata_hash32(7)` folds to a constant and becomes a key range.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::execution::SessionState;
use datafusion::execution::registry::FunctionRegistry;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use datafusion::prelude::SessionContext;
use strata::keys::stable_hash;

/// strata's functions.
fn all() -> Vec<ScalarUDF> {
    vec![ScalarUDF::new_from_impl(Hash32::new())]
}

/// Registers strata's functions with `context`.
pub(crate) fn register(context: &SessionContext) {
    for udf in all() {
        context.register_udf(udf);
    }
}

/// Registers strata's functions with a session `state` (a worker's).
pub(crate) fn register_with(state: &mut SessionState) -> Result<()> {
    for udf in all() {
        state.register_udf(Arc::new(udf))?;
    }
    Ok(())
}

/// The strata function called `name`.
pub(crate) fn udf(name: &str) -> Option<Arc<ScalarUDF>> {
    all().into_iter().find(|u| u.name() == name).map(Arc::new)
}

/// `strata_hash32`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Hash32 {
    signature: Signature,
}

impl Hash32 {
    fn new() -> Hash32 {
        Hash32 {
            signature: Signature::one_of(
                vec![
                    TypeSignature::Exact(vec![DataType::UInt64]),
                    TypeSignature::Exact(vec![DataType::Int64]),
                    TypeSignature::Exact(vec![DataType::Utf8]),
                    TypeSignature::Exact(vec![DataType::Binary]),
                ],
                Volatility::Immutable,
            ),
        }
    }
}

/// The upper half of the 64-bit stable hash (lossless as a u32 by the shift).
fn hash32(bytes: &[u8]) -> u32 {
    (stable_hash(bytes) >> 32) as u32
}

fn hash_array(array: &ArrayRef) -> Result<UInt32Array> {
    let hashes: UInt32Array = match array.data_type() {
        DataType::UInt64 => array
            .as_primitive::<UInt64Type>()
            .iter()
            .map(|v| v.map(|v| hash32(&v.to_be_bytes())))
            .collect(),
        DataType::Int64 => array
            .as_primitive::<Int64Type>()
            .iter()
            .map(|v| v.map(|v| hash32(&v.to_be_bytes())))
            .collect(),
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|v| v.map(|v| hash32(v.as_bytes())))
            .collect(),
        DataType::Binary => array
            .as_binary::<i32>()
            .iter()
            .map(|v| v.map(hash32))
            .collect(),
        other => {
            return Err(DataFusionError::Plan(format!(
                "strata_hash32 takes an integer, text or bytes, not {other}"
            )));
        }
    };
    Ok(hashes)
}

impl ScalarUDFImpl for Hash32 {
    fn name(&self) -> &str {
        "strata_hash32"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::UInt32)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [argument] = args.args.as_slice() else {
            return Err(DataFusionError::Plan(
                "strata_hash32 takes one argument".to_owned(),
            ));
        };
        match argument {
            ColumnarValue::Array(array) => Ok(ColumnarValue::Array(Arc::new(hash_array(array)?))),
            ColumnarValue::Scalar(scalar) => {
                let hashes = hash_array(&scalar.to_array()?)?;
                Ok(ColumnarValue::Scalar(ScalarValue::UInt32(
                    hashes.is_valid(0).then(|| hashes.value(0)),
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash32_is_the_key_builders_hash() {
        let key = strata::keys::KeyBuilder::new()
            .hash32(&7u64.to_be_bytes())
            .build();
        assert_eq!(key, hash32(&7u64.to_be_bytes()).to_be_bytes());
    }
}
