//! Fuzz target: the Thrift gateway's message decoder, as a connection reads it: the wire
//! format is recognised from the first bytes (`detect_wire_format`), a framed message is
//! read with the server's size limit (`read_frame`), then calls are decoded (`read_call`)
//! within the server's byte budget.
//!
//! Promises checked: a decoded call re-encodes (`encode_call`) to a message that decodes to
//! the same call.
#![no_main]

use libfuzzer_sys::fuzz_target;
use strata_tools::thrift::DEFAULT_MAX_MESSAGE_BYTES;
use strata_tools::thrift::codec::{Protocol, Reader};
use strata_tools::thrift::hbase::{Incoming, encode_call, read_call};
use strata_tools::thrift::transport::{Transport, detect_wire_format, read_frame};

/// Most messages decoded from one input (a connection sends many).
const MAX_MESSAGES: usize = 8;

fn calls(protocol: Protocol, mut bytes: &[u8]) {
    for _ in 0..MAX_MESSAGES {
        let budget = bytes.len() as u64;
        let mut reader = Reader::new(&mut bytes, protocol, budget);
        let Ok(incoming) = read_call(&mut reader) else {
            return;
        };
        if let Incoming::Call { header, call } = incoming {
            let encoded = encode_call(protocol, &call, header.sequence_id)
                .unwrap_or_else(|e| panic!("{call:?} does not re-encode: {e:?}"));
            let mut again = Reader::new(&encoded[..], protocol, encoded.len() as u64);
            match read_call(&mut again) {
                Ok(Incoming::Call { call: decoded, .. }) => {
                    // NaN doubles compare unequal to themselves; compare their printed forms.
                    assert_eq!(
                        format!("{decoded:?}"),
                        format!("{call:?}"),
                        "call changed in a round trip"
                    );
                }
                other => panic!("{call:?} re-encodes to {other:?}"),
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(format) = detect_wire_format(data) else {
        return;
    };
    match format.transport {
        Transport::Buffered => calls(format.protocol, data),
        Transport::Framed => {
            let mut rest = data;
            for _ in 0..MAX_MESSAGES {
                let Ok(frame) = read_frame(&mut rest, DEFAULT_MAX_MESSAGE_BYTES) else {
                    return;
                };
                calls(format.protocol, &frame);
            }
        }
    }
});
