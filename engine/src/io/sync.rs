//! The sync back end: `pread`, `pwrite`, `fdatasync`/`fsync`.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::{FailedRead, MAX_IO_BYTES, ReadOp, SyncKind};

/// Reads until `buf` is full or the file ends; returns the bytes read.
pub(super) fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0usize;
    while done < buf.len() {
        let end = buf.len().min(done + MAX_IO_BYTES);
        let chunk = buf.get_mut(done..end).unwrap_or_default();
        match file.read_at(chunk, offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Writes all of `buf` at `offset`.
pub(super) fn write_at(file: &File, offset: u64, buf: &[u8]) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let end = buf.len().min(done + MAX_IO_BYTES);
        let chunk = buf.get(done..end).unwrap_or_default();
        match file.write_at(chunk, offset + done as u64) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `fdatasync` or `fsync`.
pub(super) fn sync(file: &File, kind: SyncKind) -> io::Result<()> {
    match kind {
        SyncKind::Data => file.sync_data(),
        SyncKind::All => file.sync_all(),
    }
}

/// Each read in turn.
pub(super) fn read_many(ops: &mut [ReadOp<'_>]) -> Result<(), FailedRead> {
    for (index, op) in ops.iter_mut().enumerate() {
        let want = op.buf.len();
        let got = read_at(&op.file.file, op.offset, op.buf)
            .map_err(|source| FailedRead { index, source })?;
        if got < want {
            return Err(FailedRead {
                index,
                source: io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("wanted {want} bytes, the file ends after {got}"),
                ),
            });
        }
    }
    Ok(())
}
